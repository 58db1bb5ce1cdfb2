//go:build unix

package writers

import (
	"os"
	"syscall"
)

// lockTemp takes an exclusive advisory lock on a temporary output for as
// long as it is open, so that another run can tell a live one from one a
// killed run left behind. A file system without locks is no reason to fail
// the run.
func lockTemp(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// abandoned reports whether no process holds the temporary output at path.
func abandoned(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
