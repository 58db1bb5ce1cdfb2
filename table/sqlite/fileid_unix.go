//go:build unix

package sqlite

import (
	"fmt"
	"os"
	"syscall"
)

// fileID is the device and inode of the file at path.
func fileID(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("sqlite file %d:%d", st.Dev, st.Ino), nil
	}
	return absPath(path)
}
