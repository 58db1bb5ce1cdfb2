package samefile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Role is how a command uses a file.
type Role int

const (
	// Read is a file the command only reads.
	Read Role = iota
	// Write is a file the command writes (or replaces).
	Write
	// ReadWrite is a file the command reads and writes, such as a cache:
	// it may be itself, but no other use may share it.
	ReadWrite
	// ReadDatabase is an SQLite file whose tables the command reads, and
	// WriteDatabase one whose tables it writes: several uses of one
	// database are the database's business (it tells its tables apart), but
	// no other use may share a database written.
	ReadDatabase
	WriteDatabase
)

func (r Role) writes() bool { return r == Write || r == ReadWrite || r == WriteDatabase }

func (r Role) database() bool { return r == ReadDatabase || r == WriteDatabase }

// Use is one path of a command, named as the user gave it: Name is the
// flag ("--summary") or the argument ("INPUT").
type Use struct {
	Name, Path string
	Role       Role
}

// Clash is two uses of one file, at least one of which writes it.
type Clash struct {
	// Out writes the file; In is the other use (a read, or another
	// write).
	Out, In Use
}

func (c *Clash) Error() string {
	if c.In.Role.writes() {
		return fmt.Sprintf("%s %s and %s %s are the same file: one would overwrite the other", c.In.Name, c.In.Path, c.Out.Name, c.Out.Path)
	}
	return fmt.Sprintf("%s %s would overwrite %s %s: they are the same file", c.Out.Name, c.Out.Path, c.In.Name, c.In.Path)
}

// IsDir is a file to write that is a directory: found with the other path
// checks, before anything is paid for, rather than at the output's final
// rename.
type IsDir struct{ Use Use }

func (e *IsDir) Error() string {
	return fmt.Sprintf("%s %s is a directory: name a file to write", e.Use.Name, e.Use.Path)
}

// Check returns an *IsDir for the first file to write that is a directory,
// else a *Clash for the first two uses (in the order given) that are one
// file and of which one writes it; uses with an empty path or "-"
// (standard input or output) are skipped. Two reads of one file are fine,
// and so are two uses of one database.
func Check(uses ...Use) error {
	ids := make([]id, len(uses))
	for i, u := range uses {
		if u.Path == "" || u.Path == "-" {
			continue
		}
		ids[i] = identify(u.Path)
		if u.Role == Write && ids[i].fi != nil && ids[i].fi.IsDir() {
			return &IsDir{Use: u}
		}
	}
	for i, a := range uses {
		if !ids[i].ok() {
			continue
		}
		for j := range i {
			b := uses[j]
			if !ids[j].ok() || !(a.Role.writes() || b.Role.writes()) || (a.Role.database() && b.Role.database()) {
				continue
			}
			if ids[i].same(ids[j]) {
				// The write is named first; of two writes, the later flag.
				if a.Role.writes() {
					return &Clash{Out: a, In: b}
				}
				return &Clash{Out: b, In: a}
			}
		}
	}
	return nil
}

// Same reports whether paths a and b name one file, by the identity Check
// uses.
func Same(a, b string) bool { return identify(a).same(identify(b)) }

// id identifies a file: by its os.FileInfo when it exists (device and
// inode, so hard links are one file), else by its absolute path with every
// symbolic link resolved, dangling ones included.
type id struct {
	fi   os.FileInfo
	path string
}

func (i id) ok() bool { return i.path != "" }

func (i id) same(o id) bool {
	if i.fi != nil && o.fi != nil {
		return os.SameFile(i.fi, o.fi)
	}
	return i.fi == nil && o.fi == nil && i.path == o.path
}

func identify(p string) id {
	abs, err := filepath.Abs(p)
	if err != nil {
		abs = filepath.Clean(p)
	}
	if fi, err := os.Stat(abs); err == nil {
		return id{fi: fi, path: abs}
	}
	return id{path: resolve(abs)}
}

// maxLinks bounds the links followed to resolve a path, as the kernel's
// ELOOP does; a loop ends as the path reached by then.
const maxLinks = 40

// resolve is the file an absolute path that does not exist would create:
// its directory with links resolved, and the file itself followed while it
// is a dangling link.
func resolve(abs string) string {
	for range maxLinks {
		dir := resolveDir(filepath.Dir(abs))
		p := filepath.Join(dir, filepath.Base(abs))
		target, err := os.Readlink(p)
		if err != nil {
			return p // not a link: what would be created
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		abs = filepath.Clean(target)
	}
	return abs
}

// resolveDir resolves the links of dir, or of its longest part that exists.
func resolveDir(dir string) string {
	r, err := filepath.EvalSymlinks(dir)
	if err == nil {
		return r
	}
	parent := filepath.Dir(dir)
	if parent == dir || !errors.Is(err, os.ErrNotExist) {
		return dir
	}
	return filepath.Join(resolveDir(parent), filepath.Base(dir))
}
