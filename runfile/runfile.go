package runfile

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/record"
	"github.com/addrclean/addrclean/writers"
)

// ErrNotEnriched is wrapped by OpenEnriched for a file that is not an
// enriched output (its header lacks the av_ columns).
var ErrNotEnriched = errors.New("not an enriched output of addrclean run")

// ErrNotReview is wrapped by OpenReview for a file that is not a review
// output, or one written before review files had a decision column.
var ErrNotReview = errors.New("not a review output of addrclean run")

// output is what the enriched and the review readers share: the rows,
// their header, how many input columns it holds and where each run column is.
type output struct {
	t      readers.Reader
	header []string
	width  int
	col    map[string]int
}

// Close releases the file.
func (o *output) Close() error { return o.t.Close() }

// cell returns the cell of column name in cells, or "".
func (o *output) cell(cells []string, name string) string {
	if i, ok := o.col[name]; ok && i < len(cells) {
		return cells[i]
	}
	return ""
}

// Enriched reads an enriched output.
type Enriched struct{ output }

// EnrichedRow is one row of an enriched output.
type EnrichedRow struct {
	// Num is the 1-based row number (the enriched output holds every input
	// row, in order).
	Num int
	// Cells are the row's cells: the input's, then the av_ columns.
	Cells []string
	e     *Enriched
}

// OpenEnriched starts reading the enriched output at path (.csv .tsv .txt
// .xlsx .jsonl).
func OpenEnriched(ctx context.Context, path string, opts readers.Options) (*Enriched, error) {
	return openAs(ctx, path, opts, false, NewEnriched)
}

// NewEnriched reads an enriched output from r, whose header is the input's
// columns then the av_ columns (a join of an input table and its
// out-table, say), and whose rows are numbered 1, 2, ... On error r is
// closed; name is how errors call r.
func NewEnriched(name string, r readers.Reader) (*Enriched, error) {
	h := r.Header()
	// Every enriched output has had these; the duplicate columns came later.
	base := writers.EnrichedColumns
	i := lastRun(h, base)
	if i < 0 {
		_ = r.Close()
		return nil, fmt.Errorf("%s: %w (no %s ... %s columns)", name, ErrNotEnriched, base[0], base[len(base)-1])
	}
	return &Enriched{output{t: r, header: h, width: i, col: columns(h, i)}}, nil
}

// InputHeader returns the input's header.
func (e *Enriched) InputHeader() []string { return e.header[:e.width] }

// Has reports whether the output has column name (av_duplicates is missing
// from outputs of older versions).
func (e *Enriched) Has(name string) bool { _, ok := e.col[name]; return ok }

// Next returns the next row, or io.EOF after the last.
func (e *Enriched) Next(ctx context.Context) (EnrichedRow, error) {
	r, err := e.t.Next(ctx)
	if err != nil {
		return EnrichedRow{}, err
	}
	return EnrichedRow{Num: r.Num, Cells: fit(r.Cells, len(e.header)), e: e}, nil
}

// Input returns the row's input cells.
func (r EnrichedRow) Input() []string { return r.Cells[:r.e.width] }

// Get returns the cell of column name (an av_ column), or "".
func (r EnrichedRow) Get(name string) string { return r.e.cell(r.Cells, name) }

// Review reads a review output, in the layout of this version (row, the
// id column, decision, the review columns, the edit_ columns, then the
// other input columns: writers.ReviewLayout) or of earlier ones (row, the
// input columns, the review columns, decision and the edit_ columns).
// Columns a person added are ignored, and the input columns are found by
// name (Bind), wherever they are.
type Review struct {
	output
	// other are the indexes of the columns that are not the review's own:
	// the input's, and any a person added.
	other []int
	// bound maps each column of the header given to Bind to its index in
	// the review (-1: the review lacks it).
	bound []int
	// rowCol is the index of the row column.
	rowCol int
}

// reviewNeeds are the columns every review output has had.
var reviewNeeds = []string{writers.DecisionColumn, "av_action", "input_label", "matched_label"}

// OpenReview starts reading the review output at path (.csv .tsv .txt .xlsx
// .jsonl). It must have the decision column.
func OpenReview(ctx context.Context, path string, opts readers.Options) (*Review, error) {
	return openAs(ctx, path, opts, true, NewReview)
}

// NewReview reads a review output from r, whose header starts with "row"
// and holds the review and decision columns in either layout (see Review);
// the other columns are the input's, or a person's. On error r is closed;
// name is how errors call r.
func NewReview(name string, r readers.Reader) (*Review, error) {
	h := r.Header()
	// row is the first column as written; a person may have moved it.
	rowCol := slices.IndexFunc(h, func(c string) bool { return strings.EqualFold(strings.TrimSpace(c), "row") })
	if rowCol < 0 {
		_ = r.Close()
		return nil, fmt.Errorf("%s: %w (it has no row column)", name, ErrNotReview)
	}
	// The review's own columns: in the earlier layout, the last run of the
	// review columns and what follows; in this one, the first of each
	// name (an input may hold columns of an earlier run under the same
	// names: they come after the review's own).
	own := 0
	if i := lastRun(h, legacyReviewColumns); i > 0 {
		own = i
	}
	col := map[string]int{}
	owned := map[int]bool{rowCol: true}
	for _, c := range append(append(slices.Clone(writers.ReviewColumns), writers.DecisionColumns...), writers.ChangesColumn) {
		if j := slices.Index(h[own:], c); j >= 0 {
			col[c] = own + j
			owned[own+j] = true
		}
	}
	for _, c := range reviewNeeds {
		if _, ok := col[c]; ok {
			continue
		}
		_ = r.Close()
		if c == writers.DecisionColumn {
			return nil, fmt.Errorf("%s: %w: it has no %q column (written by an older addrclean: run again to get one)", name, ErrNotReview, writers.DecisionColumn)
		}
		return nil, fmt.Errorf("%s: %w (no %s column)", name, ErrNotReview, c)
	}
	v := &Review{output: output{t: r, header: h, col: col}, rowCol: rowCol}
	for i := range h {
		if !owned[i] {
			v.other = append(v.other, i)
		}
	}
	return v, nil
}

// legacyReviewColumns are the review columns of the earlier layout, in
// its order: they follow the input columns there.
var legacyReviewColumns = []string{"av_action", "av_message", "input_label", "matched_label", "av_address_id", "av_error"}

// Bind finds the input columns input (the enriched output's InputHeader)
// in the review, by name (the n-th column of a repeated name as the n-th),
// for ReviewRow.Input. It returns the input columns the review lacks, and
// the review's columns that are not the input's (a person added them).
func (v *Review) Bind(input []string) (missing, extra []string) {
	used := make([]bool, len(v.other))
	v.bound = make([]int, len(input))
	for i, name := range input {
		v.bound[i] = -1
		for k, j := range v.other {
			if !used[k] && v.header[j] == name {
				used[k], v.bound[i] = true, j
				break
			}
		}
		if v.bound[i] < 0 {
			missing = append(missing, name)
		}
	}
	for k, j := range v.other {
		if !used[k] {
			extra = append(extra, v.header[j])
		}
	}
	return missing, extra
}

// Next returns the next row, or io.EOF after the last.
func (v *Review) Next(ctx context.Context) (ReviewRow, error) {
	r, err := v.t.Next(ctx)
	if err != nil {
		return ReviewRow{}, err
	}
	return v.Row(r.Num, r.Cells), nil
}

// Row makes a review row of cells read at line of the review (or kept
// aside and read back: a review sorted by a person is put back in row
// order this way).
func (v *Review) Row(line int, cells []string) ReviewRow {
	cells = fit(cells, len(v.header))
	return ReviewRow{Row: rowNumber(cells[v.rowCol]), Line: line, Cells: cells, r: v}
}

// ReviewRow is one row of a review output.
type ReviewRow struct {
	// Row is the row number in the input and the enriched output (the
	// review's "row" column), 0 when the cell is not a number.
	Row int
	// Line is the row's number in the review file itself, for messages.
	Line int
	// Cells are the row's cells, in the review's column order.
	Cells []string
	r     *Review
}

// Input returns the row's cells of the columns given to Bind, in that
// order; ok[i] is false where the review lacks the column.
func (r ReviewRow) Input() (cells []string, ok []bool) {
	cells, ok = make([]string, len(r.r.bound)), make([]bool, len(r.r.bound))
	for i, j := range r.r.bound {
		if j >= 0 {
			cells[i], ok[i] = r.Cells[j], true
		}
	}
	return cells, ok
}

// Get returns the cell of review column name, or "".
func (r ReviewRow) Get(name string) string { return r.r.cell(r.Cells, name) }

// RowCell returns the row's cell of the row column, as written.
func (r ReviewRow) RowCell() string { return r.Cells[r.r.rowCol] }

// rowNumber parses a row cell; a spreadsheet may have turned 12 into 12.0.
func rowNumber(s string) int {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil && n > 0 {
		return n
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f >= 1 && f < 1<<53 && f == float64(int64(f)) {
		return int(f)
	}
	return 0
}

// lastRun returns the index of the last occurrence of run in h, or -1. The
// last, because an input may itself hold columns of an earlier run.
func lastRun(h, run []string) int {
	for i := len(h) - len(run); i >= 0; i-- {
		if slices.Equal(h[i:i+len(run)], run) {
			return i
		}
	}
	return -1
}

// columns indexes the names of h from i on (the first of a repeated name).
func columns(h []string, i int) map[string]int {
	m := make(map[string]int, len(h)-i)
	for j := i; j < len(h); j++ {
		if _, ok := m[h[j]]; !ok {
			m[h[j]] = j
		}
	}
	return m
}

// fit pads or cuts cells to n.
func fit(cells []string, n int) []string {
	if len(cells) >= n {
		return cells[:n]
	}
	return append(cells, make([]string, n-len(cells))...)
}

// openAs opens the output at path and reads it with read.
func openAs[T any](ctx context.Context, path string, opts readers.Options, review bool, read func(string, readers.Reader) (T, error)) (T, error) {
	var t readers.Reader
	var err error
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl":
		t, err = openJSONL(path, review)
	case ".xlsx":
		t, err = openSheets(ctx, path, opts)
	default:
		t, err = readers.Open(ctx, path, opts)
	}
	if err != nil {
		var none T
		return none, err
	}
	return read(path, t)
}

// sheets reads a workbook output whole: past a sheet's 1,048,576 rows the
// writers continue on "<first sheet> 2", "<first sheet> 3" ..., each with
// the header again.
type sheets struct {
	ctx    context.Context
	path   string
	opts   readers.Options
	names  []string // the continuation sheets still to read
	cur    readers.Reader
	header []string
	offset int // data rows of the sheets read before cur
	last   int // Num of cur's last row
}

func openSheets(ctx context.Context, path string, opts readers.Options) (*sheets, error) {
	r, err := readers.Open(ctx, path, opts)
	if err != nil {
		return nil, err
	}
	s := &sheets{ctx: ctx, path: path, opts: opts, cur: r, header: r.Header()}
	if opts.Sheet != "" {
		return s, nil
	}
	// The reader has checked the workbook and knows its sheets: opening it
	// again with excelize would read it without those checks.
	var first string
	var list []string
	if d, ok := r.(readers.Describer); ok {
		first, list = d.Info().Sheet, d.Info().Sheets
	}
	for n := 2; ; n++ {
		name := first + " " + strconv.Itoa(n)
		if !slices.Contains(list, name) {
			break
		}
		s.names = append(s.names, name)
	}
	return s, nil
}

func (s *sheets) Header() []string { return s.header }

func (s *sheets) Next(ctx context.Context) (record.Row, error) {
	for {
		r, err := s.cur.Next(ctx)
		if err == nil {
			s.last = r.Num
			r.Num += s.offset
			return r, nil
		}
		if !errors.Is(err, io.EOF) || len(s.names) == 0 {
			return r, err
		}
		_ = s.cur.Close()
		s.offset += s.last
		s.last = 0
		opts := s.opts
		opts.Sheet, s.names = s.names[0], s.names[1:]
		next, err := readers.Open(s.ctx, s.path, opts)
		if err != nil {
			s.cur = nil
			return record.Row{}, err
		}
		s.cur = next
		if !slices.Equal(next.Header(), s.header) {
			return record.Row{}, fmt.Errorf("%s: sheet %q has another header than the first sheet", s.path, opts.Sheet)
		}
	}
}

func (s *sheets) Close() error {
	if s.cur == nil {
		return nil
	}
	return s.cur.Close()
}

// jsonlTable reads a JSONL output as the columns its CSV twin would have.
type jsonlTable struct {
	f      *os.File
	sc     *bufio.Scanner
	path   string
	review bool
	header []string
	width  int   // the input's columns
	first  *line // read ahead to learn the header
	n      int
}

// maxJSONLine bounds one JSONL row, so a broken file cannot fill memory.
const maxJSONLine = 16 << 20

func openJSONL(path string, review bool) (*jsonlTable, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxJSONLine)
	t := &jsonlTable{f: f, sc: sc, path: path, review: review}
	first, err := t.read()
	switch {
	case errors.Is(err, io.EOF):
		_ = f.Close()
		return nil, fmt.Errorf("%s: empty file: no header to read", path)
	case err != nil:
		_ = f.Close()
		return nil, err
	}
	t.first, t.width = &first, len(first.inKeys)
	if review {
		t.header = append(t.header, "row")
	}
	t.header = append(t.header, first.inKeys...)
	if review {
		t.header = append(t.header, writers.ReviewColumns...)
		t.header = append(t.header, writers.DecisionColumns...)
	} else {
		t.header = append(t.header, writers.EnrichedColumns...)
		t.header = append(t.header, writers.DuplicateColumns...)
	}
	t.header = append(t.header, writers.ChangesColumn)
	return t, nil
}

func (t *jsonlTable) read() (line, error) {
	for t.sc.Scan() {
		t.n++
		b := t.sc.Bytes()
		if len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		l, err := parseLine(b)
		if err != nil {
			return line{}, fmt.Errorf("%s line %d: %w", t.path, t.n, err)
		}
		l.lineNo = t.n
		return l, nil
	}
	if err := t.sc.Err(); err != nil {
		return line{}, fmt.Errorf("%s line %d: %w", t.path, t.n+1, err)
	}
	return line{}, io.EOF
}

func (t *jsonlTable) Header() []string { return t.header }

func (t *jsonlTable) Next(ctx context.Context) (record.Row, error) {
	if err := ctx.Err(); err != nil {
		return record.Row{}, err
	}
	var l line
	if t.first != nil {
		l, t.first = *t.first, nil
	} else {
		var err error
		if l, err = t.read(); err != nil {
			return record.Row{}, err
		}
	}
	// A row with neither a response nor an error is an Error row: the
	// writers' values say "no verify response" for it.
	res := writers.Result{Row: l.row, Cells: fit(l.inVals, t.width), InputLabel: l.inputLabel, Response: l.response, Err: l.errText}
	var cells []string
	if t.review {
		cells = append(cells, strconv.Itoa(l.row))
		cells = append(cells, res.Cells...)
		cells = append(cells, writers.ReviewValues(res)...)
		for _, c := range writers.DecisionColumns {
			cells = append(cells, l.extra[c])
		}
	} else {
		cells = append(cells, res.Cells...)
		cells = append(cells, writers.EnrichedValues(res)...)
		cells = append(cells, l.extra["duplicates"], l.extra["first_row"])
	}
	cells = append(cells, writers.Changes(res))
	return record.Row{Num: l.row, Line: l.lineNo, Cells: cells}, nil
}

func (t *jsonlTable) Close() error { return t.f.Close() }
