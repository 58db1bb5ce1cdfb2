package apply

import (
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"

	"github.com/addrclean/addrclean/runfile"
)

// chunkRows is how many review rows are sorted in memory at a time; a
// review longer than that is sorted in runs spilled to temporary files and
// merged, so memory stays bounded whatever the review's size.
var chunkRows = 20_000

// ordered hands out the rows of a review in row order, whatever order a
// person left them in (a sheet sorted by name, say). Rows without a row
// number come first (the caller deals with them), in the review's order.
type ordered struct {
	rv   *runfile.Review
	mem  []runfile.ReviewRow // the whole review, sorted, when it fits one chunk
	runs []*spillRun         // otherwise the sorted runs on disk, in review order
	dir  string
}

// newOrdered reads the whole review, sorting it as it goes.
func newOrdered(ctx context.Context, rv *runfile.Review) (_ *ordered, err error) {
	o := &ordered{rv: rv}
	defer func() {
		if err != nil {
			o.Close()
		}
	}()
	var chunk []runfile.ReviewRow
	for {
		r, err := rv.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		r.Cells = slices.Clone(r.Cells) // a reader may reuse the slice
		chunk = append(chunk, r)
		if len(chunk) >= chunkRows {
			if err := o.spill(chunk); err != nil {
				return nil, err
			}
			chunk = chunk[:0]
		}
	}
	if len(o.runs) == 0 {
		sortRows(chunk)
		o.mem = chunk
		return o, nil
	}
	if err := o.spill(chunk); err != nil {
		return nil, err
	}
	for _, r := range o.runs {
		if err := r.rewind(); err != nil {
			return nil, err
		}
		if err := r.advance(o.rv); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// sortRows sorts by row number, stably: rows without a number (0) first,
// a repeated number in the review's order. A review already in order
// costs little: the stable sort then only compares.
func sortRows(rows []runfile.ReviewRow) {
	slices.SortStableFunc(rows, func(a, b runfile.ReviewRow) int { return cmp.Compare(a.Row, b.Row) })
}

// spill writes chunk, sorted, to a new temporary file.
func (o *ordered) spill(chunk []runfile.ReviewRow) error {
	if len(chunk) == 0 {
		return nil
	}
	sortRows(chunk)
	if o.dir == "" {
		d, err := os.MkdirTemp("", "addrclean-apply-")
		if err != nil {
			return fmt.Errorf("sort the review: %w", err)
		}
		o.dir = d
	}
	f, err := os.CreateTemp(o.dir, "run-*.csv")
	if err != nil {
		return fmt.Errorf("sort the review: %w", err)
	}
	r := &spillRun{f: f}
	o.runs = append(o.runs, r)
	w := csv.NewWriter(f)
	rec := make([]string, 0, 16)
	for _, row := range chunk {
		// Quoted, since encoding/csv reads a CR LF in a field back as LF.
		rec = append(rec[:0], strconv.Itoa(row.Line))
		for _, c := range row.Cells {
			rec = append(rec, strconv.Quote(c))
		}
		if err := w.Write(rec); err != nil {
			return fmt.Errorf("sort the review: %w", err)
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("sort the review: %w", err)
	}
	return nil
}

// Next returns the next row in row order, or io.EOF.
func (o *ordered) Next() (runfile.ReviewRow, error) {
	if o.runs == nil {
		if len(o.mem) == 0 {
			return runfile.ReviewRow{}, io.EOF
		}
		r := o.mem[0]
		o.mem = o.mem[1:]
		return r, nil
	}
	// A review of n rows has n/chunkRows runs: a scan for the least is
	// cheaper than a heap to keep. On equal rows the earlier run wins, so
	// a repeated row keeps the review's order.
	var least *spillRun
	for _, r := range o.runs {
		if r.ok && (least == nil || r.row.Row < least.row.Row) {
			least = r
		}
	}
	if least == nil {
		return runfile.ReviewRow{}, io.EOF
	}
	row := least.row
	if err := least.advance(o.rv); err != nil {
		return runfile.ReviewRow{}, err
	}
	return row, nil
}

// Close removes the temporary files.
func (o *ordered) Close() {
	for _, r := range o.runs {
		_ = r.f.Close()
	}
	if o.dir != "" {
		_ = os.RemoveAll(o.dir)
	}
}

// spillRun is one sorted run on disk and its current row.
type spillRun struct {
	f   *os.File
	cr  *csv.Reader
	row runfile.ReviewRow
	ok  bool
}

func (r *spillRun) rewind() error {
	if _, err := r.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("sort the review: %w", err)
	}
	r.cr = csv.NewReader(r.f)
	r.cr.FieldsPerRecord = -1
	return nil
}

func (r *spillRun) advance(rv *runfile.Review) error {
	rec, err := r.cr.Read()
	if errors.Is(err, io.EOF) {
		r.ok = false
		return nil
	}
	if err != nil {
		return fmt.Errorf("sort the review: %w", err)
	}
	line, _ := strconv.Atoi(rec[0])
	cells := rec[1:]
	for i, c := range cells {
		if cells[i], err = strconv.Unquote(c); err != nil {
			return fmt.Errorf("sort the review: a spilled cell: %w", err)
		}
	}
	r.row, r.ok = rv.Row(line, cells), true
	return nil
}
