// Package sqlitefile opens addrclean's local state files (the result cache,
// the resume journal) as SQLite databases through modernc.org/sqlite, so
// that a damaged, foreign or locked file is an error naming the file, never
// a crash or a wait without end, and batches their writes.
//
// A file is opened on one connection in exclusive locking mode, then put
// in WAL mode with synchronous=NORMAL: the connection holds the file's
// lock from its first read to Close (a second process gets Locked), and
// SQLite keeps the WAL index in the process's memory instead of a -shm
// file mapped into it, so nothing of the file is ever memory-mapped: a
// file cut short under the process is an I/O or corruption error, not a
// SIGBUS. Open runs PRAGMA quick_check and checks addrclean's marker table,
// the file's format, and that its tables are exactly those of the caller's
// schema (Options.Schema), before the caller reads anything. A ReadOnly
// open (a look: a dry run, a run's look before its checks) stops there: no
// journal mode set, no table created, until File.Write.
//
// It is shared by the cache, the journal and the scratch file of the writers'
// duplicate counts. Batch writes their rows in batches, a transaction per few
// hundred rows or per second (Add); AddWait returns once its row is
// committed, the rows other goroutines added meanwhile sharing that commit
// (a group commit: the first to find no commit under way makes it for all).
// A commit is multi-row INSERTs of up to 16 rows each, on the driver's
// connection (one statement in autocommit mode for a group commit).
package sqlitefile
