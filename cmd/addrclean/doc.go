// Command addrclean verifies the addresses of a CSV or XLSX export, or of a
// database table, against an address-verification service and writes an
// enriched file and a review file (or tables).
//
// Subcommands: run, apply, report, serve, verify, cache, reference import,
// version, help. See README.md and docs/.
//
// This package holds the flags, the environment, the help (the prose of
// each command in help/COMMAND.txt) and the exit codes, one file per
// subcommand. The run's policy lives in runs (a runs.Job), what the input
// and the outputs are in runs/endpoint, the run itself in pipeline; flag
// mechanics in internal/cliflag, the log format in internal/logfmt, the
// progress bar in internal/progress, the summary's text in runstats.
package main
