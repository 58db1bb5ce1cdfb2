// Command addrclean verifies the addresses of a CSV or XLSX export, or of a
// database table, against an address-verification service and writes an
// enriched file and a review file (or tables).
//
// Subcommands: run, apply, report, serve, verify, cache, reference import,
// version, help. See README.md and docs/.
//
// This package holds the flags, the wiring of the packages that do the work,
// and the exit codes; the run's policy lives in runs, the run itself in
// pipeline.
package main
