//go:build !unix

package writers

import "os"

// lockTemp does nothing where flock is missing: there (Windows) a file that
// a process has open cannot be removed, which protects a live run's
// temporary output all the same.
func lockTemp(*os.File) {}

// abandoned reports true: removing an open file fails there.
func abandoned(string) bool { return true }
