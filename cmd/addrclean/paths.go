package main

import (
	"os"
	"path/filepath"

	"github.com/addrclean/addrclean/internal/samefile"
)

// checkPaths refuses a command line that would write a file over one it
// reads, or two outputs into one file (exit 2, naming both). Every command
// that writes a file calls it with the table of all its paths, before it
// reads, opens or pays for anything.
func checkPaths(uses ...samefile.Use) error {
	if err := samefile.Check(uses...); err != nil {
		return withCode(exitUsage, err)
	}
	return checkDirs(uses...)
}

// checkDirs refuses a file to write in a directory that does not exist:
// its write would fail only at the end, after the run was paid for.
func checkDirs(uses ...samefile.Use) error {
	for _, u := range uses {
		if u.Role != samefile.Write || u.Path == "" || u.Path == "-" {
			continue
		}
		if fi, err := os.Stat(filepath.Dir(u.Path)); err != nil || !fi.IsDir() {
			return usageErrorf("%s %s: the directory %s does not exist", u.Name, u.Path, filepath.Dir(u.Path))
		}
	}
	return nil
}

// pathRead and pathWritten are the uses of checkPaths, by flag.
func pathRead(flag, path string) samefile.Use {
	return samefile.Use{Name: flag, Path: path, Role: samefile.Read}
}
func pathWritten(flag, path string) samefile.Use {
	return samefile.Use{Name: flag, Path: path, Role: samefile.Write}
}
