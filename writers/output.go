package writers

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// errAborted is returned by Close after Abort.
var errAborted = errors.New("output was aborted")

// errClosed is returned by Write after Close or Abort.
var errClosed = errors.New("output is closed")

// output is where one writer's bytes go: a temporary file beside the final
// path, renamed into place by commit, or standard output. guarded calls
// commit or abort once.
type output struct {
	path string    // final path, or "-"
	w    io.Writer // the temporary file or stdout
	file *os.File  // the temporary file; nil for stdout
}

// The states of a guarded writer.
const (
	open = iota
	committed
	aborted
)

// openOutput starts an output. A file output is created in the target's
// directory so that the final rename stays on one file system and is atomic.
func openOutput(path string, stdout io.Writer) (*output, error) {
	if path == Stdout {
		if stdout == nil {
			stdout = os.Stdout
		}
		return &output{path: path, w: stdout}, nil
	}
	dir, base := filepath.Dir(path), filepath.Base(path)
	f, err := os.CreateTemp(dir, tempPrefix(base)+"*")
	if err != nil {
		return nil, fmt.Errorf("create output %s: %w", path, err)
	}
	lockTemp(f)
	return &output{path: path, w: f, file: f}, nil
}

// tempPrefix starts the name of every temporary output for base.
func tempPrefix(base string) string { return "." + base + ".tmp-" }

// RemoveStaleTemps deletes the temporary outputs for path that no running
// process holds: those a killed run left beside it (a run stopped any other
// way removes its own), and its TempDirs. It returns the files and
// directories it removed.
func RemoveStaleTemps(path string) []string {
	if path == Stdout || path == "" {
		return nil
	}
	dir, base := filepath.Dir(path), filepath.Base(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	prefix := tempPrefix(base)
	var removed []string
	for _, e := range entries {
		if !e.Type().IsRegular() && !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		// A directory is a TempDir, locked like a temporary output.
		p := filepath.Join(dir, e.Name())
		if abandoned(p) && os.RemoveAll(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed
}

// commit makes the output durable and moves it under its final name. Stdout
// has nothing to commit; the writer flushes it.
func (o *output) commit() error {
	if o.file == nil {
		return nil
	}
	f := o.file
	if err := f.Sync(); err != nil {
		_ = o.abort()
		return fmt.Errorf("sync output %s: %w", o.path, err)
	}
	// CreateTemp makes the file private (0600); an output is an ordinary
	// file, so take the mode of the file it replaces, or 0644.
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(o.path); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode().Perm()
	}
	if err := f.Chmod(mode); err != nil {
		_ = o.abort()
		return fmt.Errorf("set mode of output %s: %w", o.path, err)
	}
	o.file = nil
	if err := f.Close(); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("close output %s: %w", o.path, err)
	}
	if err := os.Rename(f.Name(), o.path); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("move output into place as %s: %w", o.path, err)
	}
	// The rename is durable once the directory is synced. Not every
	// platform can sync a directory; the file itself is already safe.
	if d, err := os.Open(filepath.Dir(o.path)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// finish commits the output once its writer has flushed it, or aborts it
// when the flush failed with err.
func (o *output) finish(err error) error {
	if err != nil {
		_ = o.abort()
		return fmt.Errorf("write %s: %w", o.path, err)
	}
	return o.commit()
}

// abort removes the temporary file. It does nothing after commit.
func (o *output) abort() error {
	if o.file == nil {
		return nil
	}
	name := o.file.Name()
	_ = o.file.Close()
	o.file = nil
	if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove temporary output %s: %w", name, err)
	}
	return nil
}
