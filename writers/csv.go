package writers

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"unicode/utf8"
)

// csvBuffer is the write buffer of a CSV output; large enough that a
// million-row file costs few system calls.
const csvBuffer = 256 << 10

// csvWriter writes delimited text with encoding/csv.
type csvWriter struct {
	lay *layout
	out *output
	cw  *csv.Writer
	raw bool
	buf []string
}

func validDelimiter(r rune) bool {
	return r != 0 && r != '"' && r != '\r' && r != '\n' && utf8.ValidRune(r) && r != utf8.RuneError
}

func newCSV(lay *layout, path string, opts Options) (*csvWriter, error) {
	delim := opts.delimiter(path)
	if !validDelimiter(delim) {
		return nil, fmt.Errorf("output %s: invalid CSV delimiter %q", path, delim)
	}
	out, err := openOutput(path, opts.Stdout)
	if err != nil {
		return nil, err
	}
	// csv.NewWriter reuses a *bufio.Writer of at least its own size, so
	// this is the only buffer.
	bw := bufio.NewWriterSize(out.w, csvBuffer)
	cw := csv.NewWriter(bw)
	cw.Comma = delim
	w := &csvWriter{lay: lay, out: out, cw: cw, raw: opts.RawCells}
	w.buf = append(w.buf, lay.cols...)
	w.neutralise(w.buf)
	if err := cw.Write(w.buf); err != nil {
		_ = out.abort()
		return nil, fmt.Errorf("write header of %s: %w", path, err)
	}
	return w, nil
}

func (w *csvWriter) neutralise(cells []string) {
	if w.raw {
		return
	}
	for i, c := range cells {
		cells[i] = neutralise(c)
	}
}

func (w *csvWriter) write(r Result) error {
	w.buf = w.lay.cells(r, w.buf[:0])
	if w.lay.kind == review {
		if label, hl := matchedHighlights(r); label != nil {
			w.buf[w.lay.first+rvMatched] = bracketLabel(label, hl)
		}
	}
	w.neutralise(w.buf)
	return w.cw.Write(w.buf)
}

func (w *csvWriter) cells(r Result, dst []string) []string { return w.lay.cells(r, dst) }

func (w *csvWriter) writeCells(_ int, cells []string) error {
	w.neutralise(cells)
	return w.cw.Write(cells)
}

func (w *csvWriter) dupCols() (int, int) {
	return w.lay.first + enDuplicate, w.lay.first + enFirstRow
}

func (w *csvWriter) finish() error {
	w.cw.Flush()
	if err := w.cw.Error(); err != nil {
		_ = w.out.abort()
		return fmt.Errorf("write %s: %w", w.out.path, err)
	}
	return w.out.commit()
}

// discard drops a file output. On stdout the bytes already sent cannot be
// taken back; flushing the buffer at least ends the stream on a whole record.
func (w *csvWriter) discard() error {
	if w.out.file == nil {
		w.cw.Flush()
	}
	return w.out.abort()
}
