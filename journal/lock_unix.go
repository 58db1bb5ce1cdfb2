//go:build unix

package journal

import (
	"errors"
	"os"
	"syscall"
)

// lock takes an exclusive advisory lock on f without waiting: two runs
// appending to one journal would interleave their records.
func lock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrLocked
	}
	return err
}
