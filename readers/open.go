package readers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/record"
)

// Options tell Open how to read an input.
type Options struct {
	// Delimiter is the CSV field delimiter; 0 detects it among , ; tab and |
	// (a .tsv file defaults to tab).
	Delimiter rune
	// Encoding of CSV input: "utf-8" (the default) or "windows-1252".
	Encoding string
	// Sheet is the XLSX sheet to read; empty means the first sheet.
	Sheet string
	// HeaderRow is the sheet row (XLSX) or record (CSV), 1-based, that holds
	// the header; the rows above it are skipped. 0 means the first row with
	// text in a CSV file, and in a workbook the first row that looks like a
	// header, passing over title rows above it.
	HeaderRow int
	// CellTypes asks the XLSX reader for Row.Types, the cells that are
	// numbers or dates, for an XLSX output that keeps them typed. It reads
	// the sheet's XML a second time.
	CellTypes bool
	// TmpDir is where XLSX worksheets too large for memory are unpacked,
	// and where the copy of a sparse sheet goes (see the package
	// documentation); empty means the system temporary directory.
	TmpDir string
	// MaxUnzipSize bounds the unpacked size of an XLSX file in bytes, so that
	// an untrusted file cannot fill the disk; 0 means 4 GiB.
	MaxUnzipSize int64
	// MaxRowSize bounds the XML of one XLSX row in bytes (and of one shared
	// string, and of anything between rows), which the XML parser holds
	// whole; 0 means 16 MiB.
	MaxRowSize int64
	// MaxRowCells bounds the cells of one XLSX row; 0 means 16,384, the
	// columns a sheet can have.
	MaxRowCells int
	// MaxSharedStrings bounds the number of an XLSX workbook's shared
	// strings, of which excelize keeps about 100 bytes each in memory; 0
	// means 16,777,216 (16 distinct texts in every row of a full sheet).
	MaxSharedStrings int
	// MaxSharedStringsSize bounds the unpacked size of an XLSX workbook's
	// shared strings in bytes; 0 means 1 GiB.
	MaxSharedStringsSize int64
	// MaxTextRatio bounds the text of an XLSX sheet's cells, shared strings
	// counted at every cell that refers to them, to this many times the
	// workbook's file size (and never less than 64 MiB), so that a small
	// file cannot read as gigabytes of text; 0 means 100.
	MaxTextRatio int
	// MaxRecordSize bounds one CSV record in bytes, so that a quote left open
	// cannot pull the rest of the file into memory; 0 means 16 MiB.
	MaxRecordSize int
	// Stdin is read when the path is "-".
	Stdin io.Reader
	// Logger receives warnings about the input (rows longer than the header,
	// skipped empty rows). The zero Logger discards them.
	Logger zerolog.Logger
}

// Format names of Info.Format.
const (
	FormatCSV  = "csv"
	FormatXLSX = "xlsx"
)

// Info describes how an input is being read.
type Info struct {
	// Format is FormatCSV or FormatXLSX.
	Format string
	// Delimiter is the CSV delimiter in use (given or detected).
	Delimiter rune
	// DelimiterDetected is true when Delimiter was detected, not given.
	DelimiterDetected bool
	// Encoding is the CSV encoding in use.
	Encoding string
	// Sheet is the XLSX sheet being read, and Sheets all sheets of the workbook.
	Sheet  string
	Sheets []string
	// HeaderRow is the sheet row (XLSX) or record (CSV) of the header;
	// HeaderDetected is true when rows with text above it were passed over
	// as title rows (TitleRows of them) without --header-row.
	HeaderRow      int
	HeaderDetected bool
	TitleRows      int
}

// Describer is implemented by the readers of this package: Info tells the
// format, delimiter and sheet in use.
type Describer interface {
	Info() Info
}

// ProgressReporter is implemented by the CSV reader: Progress returns the
// bytes of input consumed so far and the input's size (-1 when unknown, as for
// stdin), for a byte progress bar. It is safe to call from any goroutine.
type ProgressReporter interface {
	Progress() (done, total int64)
}

// RowCounter is implemented by the XLSX reader: RowCount returns the number of
// data rows the sheet declares (an estimate taken from the sheet's dimension,
// which may include empty rows), or -1 when the sheet does not say.
type RowCounter interface {
	RowCount() int64
}

// ErrUnsupportedFormat is returned by Open for a file extension it cannot read.
var ErrUnsupportedFormat = errors.New("unsupported input format")

// ErrNoSheet is wrapped by the error of Open for an Options.Sheet that the
// workbook does not have; the message lists the sheets it has.
var ErrNoSheet = errors.New("no sheet named")

// CheckPath tells, without reading it, whether Open can read path: the
// extension is one it reads (else an error wrapping ErrUnsupportedFormat)
// and the file is there (else an error wrapping fs.ErrNotExist). A command
// can then refuse a wrong input before it looks at anything else.
func CheckPath(path string) error {
	if path == "-" {
		return nil
	}
	if _, err := formatOf(path); err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("input %s: no such file (%w)", path, fs.ErrNotExist)
		}
		return fmt.Errorf("input %s: %w", path, err)
	}
	if fi.IsDir() {
		return fmt.Errorf("input %s is a directory, not a file", path)
	}
	return nil
}

// formatOf returns the format Open reads path in, by its extension.
func formatOf(path string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".csv", ".txt", ".tsv", ".tab":
		return FormatCSV, nil
	case ".xlsx", ".xlsm":
		return FormatXLSX, nil
	case ".xls":
		return "", fmt.Errorf("%s: %w: .xls (Excel 97-2003) cannot be read; save it as .xlsx or CSV", path, ErrUnsupportedFormat)
	default:
		return "", fmt.Errorf("%s: %w %q: use .csv, .tsv, .txt or .xlsx", path, ErrUnsupportedFormat, ext)
	}
}

// ErrDamaged is wrapped by the errors of an XLSX input that is cut short or
// corrupted: a part of the zip that fails its checksum or holds more or less
// than the zip declares, a sheet whose XML ends before its rows do or cannot
// be read to its last row, a cell referring to a shared string that does not
// exist. Rows would be missing or wrong, so reading stops.
var ErrDamaged = errors.New("the file is damaged")

// LimitError reports an XLSX input that passes one of the limits that bound
// the memory and time a file can take (Options.MaxRowSize and the like).
type LimitError struct {
	Name string // input name
	// Part says where, for the message: `sheet "Customers" row 12`,
	// "shared strings", "the workbook".
	Part string
	// Sheet and Row are the sheet and its row where a limit of a sheet was
	// passed; Row is 0 outside rows.
	Sheet string
	Row   int
	// What is what passed the limit, for the message ("the XML of the
	// row", "the number of strings").
	What  string
	Limit int64
	// Option is the Options field that sets the limit, empty when none does.
	Option string
	bytes  bool
}

func (e *LimitError) Error() string {
	unit, verb := "", "is more than"
	if e.bytes {
		unit, verb = " bytes", "is larger than"
	}
	return fmt.Sprintf("%s: %s: %s %s %d%s, the limit that bounds the memory and time a file can take; the file is damaged or hostile",
		e.Name, e.Part, e.What, verb, e.Limit, unit)
}

// Open starts reading the input at path: CSV from stdin for "-", otherwise a
// format chosen by extension (.csv, .txt and .tsv as delimited text, .xlsx and
// .xlsm as a workbook). The returned Reader also implements Describer, and
// ProgressReporter (CSV) or RowCounter (XLSX).
func Open(ctx context.Context, path string, opts Options) (Reader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if path == "-" {
		if opts.Stdin == nil {
			return nil, errors.New("reading stdin: no standard input given")
		}
		warnIgnored(opts, "stdin", FormatCSV)
		return NewCSV(ctx, "stdin", opts.Stdin, sizeOf(opts.Stdin), opts)
	}
	format, err := formatOf(path)
	if err != nil {
		return nil, err
	}
	warnIgnored(opts, path, format)
	if format == FormatXLSX {
		return openXLSX(ctx, path, opts)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".tsv", ".tab":
		return openCSV(ctx, path, opts, '\t')
	}
	return openCSV(ctx, path, opts, 0)
}

// warnIgnored tells the user about options that do not apply to the format,
// rather than leave them wondering why --sheet changed nothing.
func warnIgnored(opts Options, name, format string) {
	enc, _ := record.NormaliseEncoding(opts.Encoding) // "" for one it cannot read: ignored all the same
	switch {
	case format == FormatCSV && opts.Sheet != "":
		opts.Logger.Warn().Str("input", name).Msg("--sheet is ignored: the input is delimited text, not a workbook")
	case format == FormatXLSX && (opts.Delimiter != 0 || enc != record.EncodingUTF8):
		opts.Logger.Warn().Str("input", name).Msg("--delimiter and --encoding are ignored: the input is a workbook")
	}
}
