package writers

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/addrclean/addrclean/record"
	"github.com/rs/zerolog"
	"golang.org/x/text/encoding/charmap"
)

// csvBuffer is the write buffer of a CSV or JSONL output and of the
// duplicate pass's spool: a few hundred rows, one system call each. Up to
// three live through a run (the two outputs and the spool), and a fourth
// reads the spool back at Close; at 256 KiB they were a fifth of a live
// run's heap.
const csvBuffer = 64 << 10

// csvWriter writes delimited text with encoding/csv.
type csvWriter struct {
	lay *layout
	out *output
	cw  *csv.Writer
	raw bool
	buf []string

	// cp1252 encodes the cells as windows-1252; lost counts the
	// characters it lacks (written as '?'), firstLost the row of the first.
	cp1252    bool
	lost      int
	firstLost int
	log       zerolog.Logger
}

func newCSV(lay *layout, path string, opts Options) (*csvWriter, error) {
	delim := opts.delimiter(path)
	if !record.ValidDelimiter(delim) {
		return nil, fmt.Errorf("output %s: invalid CSV delimiter %q", path, delim)
	}
	enc, err := record.NormaliseEncoding(opts.Encoding)
	if err != nil {
		return nil, fmt.Errorf("output %s: %w", path, err)
	}
	cp1252 := enc == record.EncodingWindows1252
	if cp1252 && delim >= utf8.RuneSelf {
		return nil, fmt.Errorf("output %s: delimiter %q is not ASCII: windows-1252 output needs an ASCII delimiter", path, delim)
	}
	out, err := openOutput(path, opts.Stdout)
	if err != nil {
		return nil, err
	}
	// csv.NewWriter reuses a *bufio.Writer of at least its own size, so
	// this is the only buffer.
	bw := bufio.NewWriterSize(out.w, csvBuffer)
	if opts.BOM && !cp1252 {
		_, _ = bw.WriteString("\uFEFF") // bufio keeps the error for Flush
	}
	cw := csv.NewWriter(bw)
	cw.Comma = delim
	w := &csvWriter{lay: lay, out: out, cw: cw, raw: opts.RawCells, cp1252: cp1252, log: opts.Logger}
	w.buf = append(w.buf, lay.cols...)
	if err := w.writeCells(0, w.buf); err != nil {
		_ = out.abort()
		return nil, fmt.Errorf("write header of %s: %w", path, err)
	}
	return w, nil
}

func (w *csvWriter) write(r Result) error {
	w.buf = w.lay.cells(r, w.buf[:0])
	if w.lay.kind == review {
		if label, hl := matchedHighlights(r); label != nil {
			w.buf[w.lay.matched] = markDiffWith(w.lay.rms, label, hl) // the removals of cells above
		}
	}
	return w.writeCells(r.Row, w.buf)
}

// encode turns the cells into windows-1252 bytes when the output is in it:
// csv.Writer copies bytes through, quoting by ASCII characters only.
func (w *csvWriter) encode(cells []string, row int) {
	if !w.cp1252 {
		return
	}
	for i, c := range cells {
		if !strings.ContainsFunc(c, func(r rune) bool { return r >= utf8.RuneSelf }) {
			continue
		}
		b := make([]byte, 0, len(c))
		for _, r := range c {
			e, ok := charmap.Windows1252.EncodeRune(r)
			if !ok {
				e = '?'
				if w.lost == 0 {
					w.firstLost = row
				}
				w.lost++
			}
			b = append(b, e)
		}
		cells[i] = string(b)
	}
}

func (w *csvWriter) cells(r Result, dst []string) []string { return w.lay.cells(r, dst) }

// writeCells neutralises, encodes and writes one row of cells.
func (w *csvWriter) writeCells(row int, cells []string) error {
	for i, c := range cells {
		if !w.raw {
			cells[i] = neutralise(c)
		}
	}
	w.encode(cells, row)
	return w.cw.Write(cells)
}

func (w *csvWriter) dupCols() (int, int) {
	return w.lay.first + enDuplicate, w.lay.first + enFirstRow
}

func (w *csvWriter) finish() error {
	if w.lost > 0 {
		w.log.Warn().Str("path", w.out.path).Int("characters", w.lost).Int("first_row", w.firstLost).
			Msg("characters that windows-1252 lacks were written as '?'; write UTF-8 (with --bom for Excel) to keep them")
	}
	w.cw.Flush()
	return w.out.finish(w.cw.Error())
}

// discard drops a file output. On stdout the bytes already sent cannot be
// taken back; flushing the buffer at least ends the stream on a whole record.
func (w *csvWriter) discard() error {
	if w.out.file == nil {
		w.cw.Flush()
	}
	return w.out.abort()
}
