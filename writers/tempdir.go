package writers

import (
	"errors"
	"fmt"
	"os"

	"github.com/xuri/excelize/v2"
)

// TempDir is a private directory for a library's temporary files (those of
// excelize, 16 MB and more each), made beside an output and named like its
// temporary files, and locked for as long as it is open, so that
// RemoveStaleTemps removes the one a killed run left, as it removes the
// temporary outputs, and never a live run's.
type TempDir struct {
	path string
	lock *os.File // the directory itself, holding the lock
}

// NewTempDir makes a TempDir for the output at path (for "-", in the
// system's temporary directory).
func NewTempDir(path string) (*TempDir, error) {
	dir, prefix := scratch(path)
	p, err := os.MkdirTemp(dir, prefix+"excelize-*")
	if err != nil {
		return nil, fmt.Errorf("temporary directory for %s: %w", path, err)
	}
	lock, err := os.Open(p)
	if err != nil {
		_ = os.Remove(p)
		return nil, fmt.Errorf("temporary directory for %s: %w", path, err)
	}
	lockTemp(lock)
	return &TempDir{path: p, lock: lock}, nil
}

// Path returns the directory's path.
func (d *TempDir) Path() string { return d.path }

// Remove deletes the directory and what is left in it.
func (d *TempDir) Remove() error {
	err := d.lock.Close()
	if rerr := os.RemoveAll(d.path); rerr != nil {
		err = errors.Join(err, rerr)
	}
	if err != nil {
		return fmt.Errorf("remove temporary directory %s: %w", d.path, err)
	}
	return nil
}

// newWorkbook starts an excelize workbook for the output at path, its
// temporary files in a TempDir beside the output.
func newWorkbook(path string) (*excelize.File, *TempDir, error) {
	tmp, err := NewTempDir(path)
	if err != nil {
		return nil, nil, err
	}
	return excelize.NewFile(excelize.Options{TmpDir: tmp.Path()}), tmp, nil
}

// closeWorkbook closes f, which deletes its temporary files, then their
// directory.
func closeWorkbook(f *excelize.File, tmp *TempDir) error {
	return errors.Join(f.Close(), tmp.Remove())
}
