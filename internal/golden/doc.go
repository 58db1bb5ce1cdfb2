// Package golden compares test output with files in testdata, and rewrites
// them when the tests run with -update. It is imported by tests only.
package golden
