package main

import (
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
	return nil
}

// pathRead and pathWritten are the uses of checkPaths, by flag.
func pathRead(flag, path string) samefile.Use {
	return samefile.Use{Name: flag, Path: path, Role: samefile.Read}
}
func pathWritten(flag, path string) samefile.Use {
	return samefile.Use{Name: flag, Path: path, Role: samefile.Write}
}
