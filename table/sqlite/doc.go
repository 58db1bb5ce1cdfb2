// Package sqlite is the SQLite kind of table.Database, on the pure-Go
// modernc.org/sqlite: a source reads through a read-only connection, and a
// sink writes batches of upserts in transactions through one writer
// connection, with the database in WAL mode so that reading and writing the
// same file go on together.
//
// Importing it registers the sqlite: scheme with table.Open.
package sqlite
