// Package writers writes the enriched and review outputs as CSV, XLSX or
// JSONL, to a temporary file renamed into place when complete. It neutralises
// spreadsheet formula injection. It does not call the API.
//
// NewEnriched and NewReview choose the format from the path (FormatFromPath):
// .csv, .tsv and .txt are delimited text, .xlsx a workbook, .jsonl one JSON
// object per line, and "-" CSV on standard output. Both take every result in
// input order; the review output keeps only the rows that need a person
// (NeedsReview).
//
// Formula neutralisation: in CSV and XLSX outputs a text cell that starts
// with '=', '+', '-', '@', a tab or a carriage return gets a leading
// apostrophe, unless it is plainly a number (strconv.ParseFloat accepts it
// and it holds only digits, signs, '.', 'e' and 'E', so "-12.5" stays as it
// is). This applies to input cells and service values alike, and
// Options.RawCells turns it off. XLSX cells are always written as strings or
// numbers, never as formulas. JSONL is data for programs, not spreadsheets,
// and is written unchanged.
//
// Atomic finish: a file output is written to a temporary file in the target
// directory, synced, and renamed over the final path by Close; Abort, or a
// failed write, removes it, so a failed run never leaves a partial file under
// the final name. Standard output can only be flushed.
//
// A Writer is safe for use by several goroutines, though results must still
// arrive in input order.
package writers
