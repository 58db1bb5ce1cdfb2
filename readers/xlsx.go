package readers

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/rs/zerolog"
	"github.com/xuri/excelize/v2"

	"github.com/addrclean/addrclean/record"
)

// defaultMaxUnzipSize bounds the unpacked size of a workbook: far above any
// real export (a full sheet of a million rows unpacks to well under 1 GiB),
// far below what would fill a disk.
const defaultMaxUnzipSize = 4 << 30

// XLSXReader streams the rows of one sheet of a workbook through excelize's
// row iterator, cells as the text a person sees. It implements Reader,
// Describer and RowCounter.
type XLSXReader struct {
	log      zerolog.Logger
	name     string
	f        *excelize.File
	rows     *excelize.Rows
	copied   string // the copy of the workbook read instead (see sheetScan.sparse), or ""
	header   []string
	info     Info
	rowCount int64
	lastRow  int64 // last row number the sheet's dimension declares, or -1
	lastCol  int   // last column number the sheet's dimension declares, or -1
	// scannedLast is the number of the sheet's last row, found by
	// checkWorkbook.
	scannedLast int
	line        int // sheet row number of the last row read
	num         int
	skipped     int
	done        bool
	reported    bool // the skipped rows were logged
	closed      bool
	// pending are the rows read past the header while looking for it.
	pending []pendingRow
	// typer reads the cells' types when Options.CellTypes asks for them.
	typer *cellTyper
	types []record.CellType // of the row next returned last
}

var (
	_ Reader     = (*XLSXReader)(nil)
	_ Describer  = (*XLSXReader)(nil)
	_ RowCounter = (*XLSXReader)(nil)
)

func openXLSX(ctx context.Context, path string, opts Options) (_ *XLSXReader, err error) {
	lim := limitsOf(opts)
	// excelize trusts the file: it reads what a damaged part holds without
	// a word, holds whole text runs and every shared string in memory, and
	// ends a broken sheet quietly. checkWorkbook reads the zip first.
	book, err := checkWorkbook(ctx, path, opts.Sheet, lim)
	if err != nil {
		return nil, err
	}
	// A sheet of mostly empty cells, or with cells far to the right of the
	// others, is read through a copy without them: excelize takes time for
	// every cell in the XML and every column before a cell.
	src, copied := path, ""
	if book.scan.sparse() {
		var dropped droppedCells
		if copied, dropped, err = rewriteBook(ctx, path, book, opts.TmpDir, lim); err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				_ = os.Remove(copied)
			}
		}()
		src = copied
		opts.Logger.Info().Str("input", path).Int64("cells_with_text", book.scan.textCells).
			Int64("empty_cells", book.scan.otherCells).Msg("the sheet is mostly empty cells; reading only those with text")
		if dropped.n > 0 {
			col, _ := excelize.ColumnNumberToName(dropped.col)
			opts.Logger.Warn().Str("input", path).Int64("cells", dropped.n).Int("first_row", dropped.row).Str("first_column", col).
				Int("last_column_read", book.scan.width()).
				Msgf("%d cells with text lie far to the right of every row's text and of the sheet's declared size; they are left out", dropped.n)
		}
	}
	book.sst = nil // only the copy needed them
	f, err := excelize.OpenFile(src, excelize.Options{
		UnzipSizeLimit: lim.unzip,
		// Worksheets and shared strings larger than this go to TmpDir
		// instead of memory.
		UnzipXMLSizeLimit: min(lim.unzip, xmlStreamSize),
		TmpDir:            opts.TmpDir,
	})
	if err != nil {
		if errors.Is(err, zip.ErrFormat) {
			return nil, fmt.Errorf("%s: not an XLSX workbook (%w)", path, err)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
		}
	}()
	sheet := book.sheet
	r := &XLSXReader{
		log:         opts.Logger,
		name:        path,
		f:           f,
		copied:      copied,
		rowCount:    -1,
		scannedLast: book.scan.lastRow,
		info:        Info{Format: FormatXLSX, Sheet: sheet, Sheets: book.sheets},
	}
	r.lastRow, r.lastCol = dimensionEnd(book.scan.dimension)
	if opts.CellTypes {
		if r.typer, err = newCellTyper(ctx, f, src, book.part, lim); err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				_ = r.typer.close()
			}
		}()
	}
	r.rows, err = f.Rows(sheet)
	if err != nil {
		return nil, fmt.Errorf("%s: sheet %q: %w", path, sheet, err)
	}
	defer func() {
		if err != nil {
			_ = r.rows.Close()
		}
	}()
	cells, err := r.findHeader(ctx, opts.HeaderRow)
	if err != nil {
		return nil, err
	}
	if len(cells) > 0 {
		cells[0] = strings.TrimPrefix(cells[0], "\uFEFF")
	}
	// excelize leaves out trailing empty cells, so a column with data
	// but no name at the end of the header would be lost: the header
	// is as wide as the sheet declares it is.
	if width := len(cells); r.lastCol > width {
		cells = append(cells, make([]string, r.lastCol-width)...)
		r.log.Info().Str("input", r.name).Str("sheet", sheet).Int("header_cells", width).
			Int("columns", r.lastCol).
			Msg("the sheet declares more columns than the header names; the columns past the header are read as unnamed")
	}
	r.header = cells
	if r.lastRow >= 0 {
		r.rowCount = max(r.lastRow-int64(r.info.HeaderRow), 0)
	}
	return r, nil
}

// IsWorkbook reports whether Open reads path as a workbook (.xlsx, .xlsm).
func IsWorkbook(path string) bool {
	format, err := formatOf(path)
	return err == nil && format == FormatXLSX
}

// maxHeaderScan is how many rows with text are looked at for the header:
// title rows above it are a few, not pages.
const maxHeaderScan = 20

// pendingRow is a row read while looking for the header, not yet returned.
type pendingRow struct {
	line  int
	cells []string
	types []record.CellType
}

// findHeader reads up to the header row and returns its cells: sheet row
// want when it is given, otherwise the first row that looks like a header
// (see pickHeader) among the first rows with text. Rows read past the
// header are kept for Next.
func (r *XLSXReader) findHeader(ctx context.Context, want int) ([]string, error) {
	sheet := r.info.Sheet
	if want > 0 {
		for {
			cells, err := r.next(ctx)
			if errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("%s: sheet %q: --header-row %d: the sheet has only %d rows", r.name, sheet, want, r.line)
			}
			if err != nil {
				return nil, err
			}
			if r.line < want {
				continue
			}
			if cells == nil {
				return nil, fmt.Errorf("%s: sheet %q: --header-row %d: the row is empty", r.name, sheet, want)
			}
			r.info.HeaderRow = want
			r.skipped = 0
			return cells, nil
		}
	}
	var rows []pendingRow
	for len(rows) < maxHeaderScan {
		cells, err := r.next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if cells == nil {
			continue
		}
		rows = append(rows, pendingRow{line: r.line, cells: cells, types: r.types})
	}
	if len(rows) == 0 {
		hint := ""
		if others := slices.DeleteFunc(slices.Clone(r.info.Sheets), func(s string) bool { return s == sheet }); len(others) > 0 {
			hint = fmt.Sprintf("; the workbook also has %s: pass --sheet NAME", quoteList(others))
		}
		return nil, fmt.Errorf("%s: sheet %q is empty: no header row%s", r.name, sheet, hint)
	}
	h := pickHeader(rows)
	r.info.HeaderRow = rows[h].line
	r.info.HeaderDetected = h > 0
	r.info.TitleRows = h
	r.pending = rows[h+1:]
	// Blank rows below the header count as skipped, as they would have.
	r.skipped = r.line - rows[h].line - len(r.pending)
	return rows[h].cells, nil
}

// pickHeader returns the index of the header among the first rows with
// text: the first row naming a column this package recognises ("Address",
// "Town", "Eircode"...) that either has more cells with text than every row
// above it or is mostly such names. A title row ("Customer export –
// generated 01/06/2024") is passed over, but a data row holding the word
// "Flat" under a header of unfamiliar names is not taken for the header.
// Failing that, the first row.
func pickHeader(rows []pendingRow) int {
	widest := 0
	for i, row := range rows {
		n, known := 0, 0
		for _, c := range row.cells {
			if strings.TrimSpace(c) == "" {
				continue
			}
			n++
			if _, _, ok := classifyPrefix(c); ok {
				known++
			}
		}
		if known > 0 && (i == 0 || n > widest || 2*known > n) {
			return i
		}
		widest = max(widest, n)
	}
	return 0
}

// pickSheet returns the sheet named want (exactly, else ignoring case, as
// Excel does), or the first sheet when want is empty.
func pickSheet(sheets []string, want string) (string, error) {
	if len(sheets) == 0 {
		return "", errors.New("the workbook has no sheets")
	}
	if want == "" {
		return sheets[0], nil
	}
	if slices.Contains(sheets, want) {
		return want, nil
	}
	for _, s := range sheets {
		if strings.EqualFold(s, want) {
			return s, nil
		}
	}
	return "", fmt.Errorf("%w %q; the sheets are: %s", ErrNoSheet, want, quoteList(sheets))
}

// dimensionEnd returns the last row and column of a dimension reference
// such as "A1:K2001", -1 for each it does not give: a lone "A1" is what
// writers that do not track the size put there, and a dimension as wide as
// a sheet can be (column XFD) says only that whole rows are formatted, not
// where the data ends.
func dimensionEnd(ref string) (row int64, col int) {
	_, last, ok := strings.Cut(ref, ":")
	c, r, err := excelize.CellNameToCoordinates(last)
	if !ok || err != nil {
		return -1, -1
	}
	if c >= excelize.MaxColumns {
		c = -1
	}
	return int64(r), c
}

// next returns the cells of the next sheet row, or nil for a row with no text
// in it (counted in skipped), or io.EOF.
func (r *XLSXReader) next(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.closed {
		return nil, fmt.Errorf("%s: read after close", r.name)
	}
	if r.done {
		return nil, io.EOF
	}
	if !r.rows.Next() {
		r.done = true
		// Next stops quietly on a broken XML stream; only Error tells.
		if err := r.rows.Error(); err != nil {
			return nil, fmt.Errorf("%s: sheet %q after row %d: %w", r.name, r.info.Sheet, r.line, err)
		}
		// excelize also ends quietly on XML it cannot parse: the rows the
		// check found say whether it read them all.
		if r.line < r.scannedLast {
			return nil, fmt.Errorf("%s: %w: sheet %q: the XML of the sheet cannot be read past row %d, but it has rows up to %d",
				r.name, ErrDamaged, r.info.Sheet, r.line, r.scannedLast)
		}
		// The XML is whole, so a dimension past its last row is more likely
		// a writer's slip than a loss, but worth a word.
		if int64(r.line) < r.lastRow {
			r.log.Warn().Str("input", r.name).Str("sheet", r.info.Sheet).Int("last_row", r.line).
				Int64("declared_last_row", r.lastRow).
				Msg("the sheet ended before the last row it declares; the file may be damaged and rows may be missing")
		}
		return nil, io.EOF
	}
	r.line++
	cells, err := r.rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("%s: sheet %q row %d: %w", r.name, r.info.Sheet, r.line, err)
	}
	r.types = nil
	blankToEmpty(cells)
	for _, c := range cells {
		if c != "" {
			if r.typer != nil {
				if r.types, err = r.typer.types(r.line); err != nil {
					return nil, fmt.Errorf("%s: sheet %q row %d: %w", r.name, r.info.Sheet, r.line, err)
				}
			}
			return cells, nil
		}
	}
	r.skipped++
	return nil, nil
}

// blankToEmpty empties the cells that hold only white space: they show
// nothing, and a copy of a sparse sheet (see sheetScan.sparse) leaves them
// out, so they read the same either way.
func blankToEmpty(cells []string) {
	for i, c := range cells {
		if c != "" && strings.Trim(c, " \t\r\n") == "" {
			cells[i] = ""
		}
	}
}

// Header returns the header cells as displayed, followed by empty names up
// to the last column the sheet's dimension declares: excelize drops the
// trailing empty cells of a row, and a data column without a header cell
// at the end must not be lost.
func (r *XLSXReader) Header() []string { return r.header }

// Info returns the format and the sheet being read.
func (r *XLSXReader) Info() Info { return r.info }

// RowCount returns the number of data rows the sheet's dimension declares,
// or -1 when it declares none.
func (r *XLSXReader) RowCount() int64 { return r.rowCount }

// SkippedRows returns how many rows with no text in any cell have been
// skipped so far (Excel often carries formatted but empty rows at the end).
func (r *XLSXReader) SkippedRows() int { return r.skipped }

// Next returns the next row with any text in it, cells padded to the header
// width. Errors name the sheet row and are fatal.
func (r *XLSXReader) Next(ctx context.Context) (record.Row, error) {
	for {
		var cells []string
		var types []record.CellType
		var err error
		line := 0
		if len(r.pending) > 0 {
			if err := ctx.Err(); err != nil {
				return record.Row{}, err
			}
			cells, types, line = r.pending[0].cells, r.pending[0].types, r.pending[0].line
			r.pending[0] = pendingRow{}
			r.pending = r.pending[1:]
		} else {
			cells, err = r.next(ctx)
			types, line = r.types, r.line
		}
		if err != nil {
			if errors.Is(err, io.EOF) && r.skipped > 0 && !r.reported {
				r.reported = true
				r.log.Info().Str("input", r.name).Str("sheet", r.info.Sheet).Int("rows", r.skipped).
					Msg("skipped empty rows")
			}
			return record.Row{}, err
		}
		if cells == nil {
			continue
		}
		r.num++
		width := len(r.header)
		if len(cells) > width {
			r.log.Warn().Str("input", r.name).Str("sheet", r.info.Sheet).Int("row", r.num).
				Int("line", line).Int("cells", len(cells)).Int("header_cells", width).
				Msg("row has more cells than the header; the extra cells are kept")
		}
		for len(cells) < width {
			cells = append(cells, "")
		}
		return record.Row{Num: r.num, Line: line, Cells: cells, Types: types}, nil
	}
}

// Close closes the row iterator, then the workbook, which removes its
// temporary files.
func (r *XLSXReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	errRows := r.rows.Close()
	var errTypes error
	if r.typer != nil {
		errTypes = r.typer.close()
	}
	errFile := r.f.Close()
	var errCopy error
	if r.copied != "" {
		errCopy = os.Remove(r.copied)
	}
	if err := errors.Join(errRows, errTypes, errFile, errCopy); err != nil {
		return fmt.Errorf("close %s: %w", r.name, err)
	}
	return nil
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}
