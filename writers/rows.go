package writers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/xuri/excelize/v2"
)

// RowWriter writes plain rows of text cells to one output, such as the final
// file of addrclean apply.
type RowWriter interface {
	// Write appends one row; cells beyond the header are dropped, missing
	// ones are empty.
	Write(ctx context.Context, cells []string) error
	// Close completes the output and moves it into place.
	Close() error
	// Abort discards the output; after Close it does nothing.
	Abort() error
}

// errTooManyRows is returned when an XLSX output passes a sheet's rows.
var errTooManyRows = errors.New("more rows than an XLSX sheet holds: write CSV or JSONL instead")

// NewRows creates a plain output at path with header: CSV (neutralised
// unless Options.RawCells), XLSX (one sheet, text cells, a bold frozen
// header) or JSONL (one object per row keyed by the header, as the
// enriched output keys its input). The file appears under path only when
// Close succeeds.
func NewRows(path string, header []string, opts Options) (RowWriter, error) {
	format, err := FormatFromPath(path)
	if err != nil {
		return nil, err
	}
	if format == XLSX && len(header) > xlsxMaxCols {
		return nil, fmt.Errorf("%s: %w", path, ErrTooWide)
	}
	if format == CSV {
		w, err := newCSV(newLayout(plain, slices.Clone(header), false, ""), path, opts)
		if err != nil {
			return nil, err
		}
		return rows{&guarded{fw: w, kind: plain, path: path}}, nil
	}
	out, err := openOutput(path, opts.Stdout)
	if err != nil {
		return nil, err
	}
	w := &rowWriter{out: out, format: format, raw: opts.RawCells, width: len(header)}
	switch format {
	case JSONL:
		w.bw = bufio.NewWriterSize(out.w, csvBuffer)
		for _, k := range jsonKeys(header) {
			b, _ := json.Marshal(k)
			w.keys = append(w.keys, append(b, ':'))
		}
	case XLSX:
		if w.f, w.tmp, err = newWorkbook(path); err != nil {
			_ = out.abort()
			return nil, err
		}
		if err := w.startXLSX(); err != nil {
			_ = closeWorkbook(w.f, w.tmp)
			_ = out.abort()
			return nil, fmt.Errorf("create workbook %s: %w", path, err)
		}
	}
	if err := w.writeRow(header, true); err != nil {
		_ = w.discard()
		return nil, fmt.Errorf("write header of %s: %w", path, err)
	}
	return rows{&guarded{fw: w, kind: plain, path: path}}, nil
}

// rows is a RowWriter: plain rows are Results of their cells alone.
type rows struct{ g *guarded }

func (r rows) Write(ctx context.Context, cells []string) error {
	return r.g.Write(ctx, Result{Cells: cells})
}

func (r rows) Close() error { return r.g.Close() }
func (r rows) Abort() error { return r.g.Abort() }

// rowWriter is the formatWriter of NewRows for JSONL and XLSX; CSV rows
// are written by csvWriter.
type rowWriter struct {
	out    *output
	format Format
	raw    bool
	width  int

	bw   *bufio.Writer
	keys [][]byte
	jb   bytes.Buffer
	f    *excelize.File
	tmp  *TempDir // f's temporary files
	sw   *excelize.StreamWriter
	row  int
	hdr  int
	buf  []string
	vals []any
}

func (w *rowWriter) startXLSX() error {
	if err := w.f.SetSheetName(w.f.GetSheetName(0), "Final"); err != nil {
		return err
	}
	var err error
	if w.hdr, err = w.f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}}); err != nil {
		return err
	}
	if w.sw, err = w.f.NewStreamWriter("Final"); err != nil {
		return err
	}
	return w.sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"})
}

func (w *rowWriter) write(r Result) error { return w.writeRow(r.Cells, false) }

func (w *rowWriter) writeRow(cells []string, header bool) error {
	w.buf = append(w.buf[:0], cells[:min(len(cells), w.width)]...)
	for len(w.buf) < w.width {
		w.buf = append(w.buf, "")
	}
	switch w.format {
	case JSONL:
		if header {
			return nil
		}
		w.jb.Reset()
		w.jb.WriteByte('{')
		for i, c := range w.buf {
			if i > 0 {
				w.jb.WriteByte(',')
			}
			w.jb.Write(w.keys[i])
			b, _ := json.Marshal(c) // a string always encodes
			w.jb.Write(b)
		}
		w.jb.WriteString("}\n")
		_, err := w.bw.Write(w.jb.Bytes())
		return err
	default:
		if w.row >= xlsxMaxRows {
			return errTooManyRows
		}
		w.vals = w.vals[:0]
		for _, c := range w.buf {
			if !w.raw {
				c = neutralise(c)
			}
			c, _ = cutUTF16(c, xlsxMaxChars)
			switch {
			case header:
				w.vals = append(w.vals, excelize.Cell{StyleID: w.hdr, Value: c})
			case c == "":
				w.vals = append(w.vals, nil)
			default:
				w.vals = append(w.vals, c)
			}
		}
		w.row++
		cell, err := excelize.CoordinatesToCellName(1, w.row)
		if err != nil {
			return err
		}
		return w.sw.SetRow(cell, w.vals)
	}
}

func (w *rowWriter) finish() error {
	var err error
	switch w.format {
	case JSONL:
		err = w.bw.Flush()
	default:
		if err = w.sw.Flush(); err == nil {
			err = w.f.Write(w.out.w)
		}
		if cerr := closeWorkbook(w.f, w.tmp); err == nil {
			err = cerr
		}
	}
	return w.out.finish(err)
}

func (w *rowWriter) discard() error {
	if w.f != nil {
		_ = closeWorkbook(w.f, w.tmp)
	}
	return w.out.abort()
}
