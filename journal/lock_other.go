//go:build !unix

package journal

import "os"

// lock does nothing where flock is not available: two runs must not share
// an output there.
func lock(*os.File) error { return nil }
