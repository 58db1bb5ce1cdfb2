//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package boltfile

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// lock takes the lock that bbolt takes (flock, exclusive), waiting up to
// timeout, so that Replace can empty the file before handing it to bbolt,
// which then locks the same open file again, without a gap.
func lock(f *os.File, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case !errors.Is(err, syscall.EWOULDBLOCK):
			return err
		case time.Now().After(deadline):
			return errBusy
		}
		time.Sleep(50 * time.Millisecond) // bbolt polls as often
	}
}

// unlock releases bbolt's lock on f.
func unlock(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
