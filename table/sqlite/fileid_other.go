//go:build !unix

package sqlite

// fileID is the absolute path of the file at path, links resolved.
func fileID(path string) (string, error) { return absPath(path) }
