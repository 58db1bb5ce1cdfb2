// Package endpoint opens a run's sources and sinks by name: it is the one
// place that knows whether an INPUT is a file (CSV, TSV, XLSX, - for stdin)
// or a database table or query (postgres://, sqlite:), and whether each
// output is a file (a path, - for stdout) or a table.
//
// Kinds of source register themselves (Register) with the names they
// claim; a name no kind claims is a file path. New checks a command line's
// input and outputs (Spec) without I/O and returns a Plan; the run, apply,
// report and --dry-run ask the Plan (or OpenEnriched, Apply) and never ask
// "file or table?" themselves. docs/internals.md shows how to add a kind.
//
// Errors are *Error values classed Usage (the command must change),
// Fatal or Interrupted, which the command maps to its exit codes.
package endpoint
