// Package journal keeps the finished rows of a run in a sidecar file, so that
// an interrupted run (Ctrl-C, kill -9, a reboot, a service outage) can be
// continued by 'addrclean run --resume' without paying again for the rows
// already verified.
//
// The file is an SQLite database, opened, checked and locked through
// internal/sqlitefile as the result cache is (the schema is in FORMAT.md
// beside this file): a header (Meta: what was read and how), the number of
// runs that wrote to it, a done mark once a run has written every row, and
// a table of row records keyed by row number, each with a CRC-32C. A paid
// row's record is committed before Record returns (rows finishing together
// share the commit), so a process killed at any instant pays again for at
// most the rows in flight, and a resumed run finds a file that opens
// cleanly; a row the cache answered is committed with the next commit (it
// costs no call if lost). A record whose checksum fails is skipped and counted, its row
// verified again; a file SQLite cannot read is refused (ErrCorrupt), never
// a crash.
//
// Journals of earlier versions (the text format, then bbolt) are refused
// with ErrOldFormat.
package journal
