// Command benchdb measures table runs against file runs for `make bench`: the
// built addrclean binary verifies the same generated rows from a CSV file
// into CSV files, from a PostgreSQL table (on a throwaway server it starts,
// see internal/pgtest) into an out-table and a review-table, and from an
// SQLite table into tables of the same file; the embedded service answers.
// It prints rows/s and the peak RSS of the addrclean process.
package main
