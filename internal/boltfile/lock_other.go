//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package boltfile

import (
	"os"
	"time"
)

// lock does nothing here: bbolt's lock (LockFileEx on Windows) is not
// re-entrant on one handle, so Replace relies on bbolt's lock alone.
func lock(*os.File, time.Duration) error { return nil }

// unlock does nothing here: closing f releases bbolt's lock.
func unlock(*os.File) {}
