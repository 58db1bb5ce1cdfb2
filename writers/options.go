package writers

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"
)

// Format is the file format of an output.
type Format int

// The output formats.
const (
	// CSV is delimited text: .csv, .txt (comma) and .tsv (tab), and "-" for
	// standard output.
	CSV Format = iota + 1
	// XLSX is an Excel workbook.
	XLSX
	// JSONL is one JSON object per line.
	JSONL
)

// String returns the format's name.
func (f Format) String() string {
	switch f {
	case CSV:
		return "csv"
	case XLSX:
		return "xlsx"
	case JSONL:
		return "jsonl"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// Stdout is the path that names standard output (always CSV).
const Stdout = "-"

// FormatFromPath returns the output format named by path's extension
// (case-insensitive): .csv, .tsv and .txt are CSV, .xlsx is XLSX, .jsonl is
// JSONL, and "-" is CSV on standard output.
func FormatFromPath(path string) (Format, error) {
	if path == Stdout {
		return CSV, nil
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".csv", ".tsv", ".txt":
		return CSV, nil
	case ".xlsx":
		return XLSX, nil
	case ".jsonl":
		return JSONL, nil
	case "":
		return 0, fmt.Errorf("output %q has no extension: use .csv, .tsv, .txt, .xlsx or .jsonl (or - for CSV on stdout)", path)
	default:
		return 0, fmt.Errorf("output %q: unknown extension %q: use .csv, .tsv, .txt, .xlsx or .jsonl (or - for CSV on stdout)", path, ext)
	}
}

// Options tunes a writer. The zero value is usable.
type Options struct {
	// Delimiter separates CSV fields. Zero means a tab for .tsv paths and a
	// comma otherwise; the caller passes the input's delimiter to keep it.
	Delimiter rune
	// RawCells turns off formula neutralisation (no leading ' on cells that
	// a spreadsheet would read as formulas).
	RawCells bool
	// Stdout receives the output when the path is "-"; nil means os.Stdout.
	Stdout io.Writer
	// MarkCached adds a last column av_cached to the enriched output (a
	// "cached" member in JSONL): true when the row's answer came from the
	// persistent cache (Result.FromCache). The review output is unchanged.
	MarkCached bool
	// BOM starts a CSV output with a UTF-8 byte-order mark, which Excel
	// needs to read UTF-8 (it reads CSV without one as the Windows code
	// page). Other formats ignore it.
	BOM bool
	// Encoding of a CSV output, as record.NormaliseEncoding names it: ""
	// or "utf-8", or "windows-1252" (Excel's "CSV" on Windows in Western
	// Europe); characters it lacks are written as '?' and counted in a
	// warning. Other formats ignore it.
	Encoding string
	// Logger receives warnings (truncated cells, rows wider than the
	// header). The zero Logger discards them.
	Logger zerolog.Logger
	// IDColumn is the input's id column: the review output shows it
	// second, after row (see ReviewLayout). "" or a column the header
	// lacks leaves it among the other input columns.
	IDColumn string
}

// delimiter returns the CSV delimiter for path.
func (o Options) delimiter(path string) rune {
	if o.Delimiter != 0 {
		return o.Delimiter
	}
	if strings.EqualFold(filepath.Ext(path), ".tsv") {
		return '\t'
	}
	return ','
}
