// Package filetest makes the files that tests of the cache and the journal
// open: another program's SQLite database, an old bbolt file, a file with
// pages zeroed.
package filetest
