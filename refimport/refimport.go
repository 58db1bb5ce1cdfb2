package refimport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/internal/rowlimit"
)

// Stats tell what a conversion did.
type Stats struct {
	Read    int            // source rows or features read
	Written int            // reference rows written
	Skipped map[string]int // rows left out, by reason
	Notes   map[string]int // rows written with a value left out, by reason
}

func (s *Stats) skip(reason string) {
	if s.Skipped == nil {
		s.Skipped = make(map[string]int)
	}
	s.Skipped[reason]++
}

func (s *Stats) note(reason string) {
	if s.Notes == nil {
		s.Notes = make(map[string]int)
	}
	s.Notes[reason]++
}

// String is a one-line summary: "read 10, wrote 9, skipped 1 (no city: 1)".
func (s Stats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "read %d, wrote %d", s.Read, s.Written)
	for _, m := range []struct {
		name string
		m    map[string]int
	}{{"skipped", s.Skipped}, {"values left out", s.Notes}} {
		if len(m.m) == 0 {
			continue
		}
		n := 0
		for _, v := range m.m {
			n += v
		}
		fmt.Fprintf(&b, ", %s %d (", m.name, n)
		for i, k := range slices.Sorted(maps.Keys(m.m)) {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s: %d", k, m.m[k])
		}
		b.WriteString(")")
	}
	return b.String()
}

// ErrFormat is returned (wrapped) when the input is not in the format
// named: a CSV without the columns needed, JSON that is not PAF records.
var ErrFormat = errors.New("refimport: input not in the expected format")

// SourceError is an input row that could not be read at all: the
// conversion stops there.
type SourceError struct {
	Line int // 1-based line of the input, 0 when unknown
	Err  error
}

func (e *SourceError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("refimport: line %d: %v", e.Line, e.Err)
	}
	return fmt.Sprintf("refimport: %v", e.Err)
}

func (e *SourceError) Unwrap() error { return e.Err }

// writeAll writes the records next yields in the reference format, all of
// its columns, counting them in st; next returns false at the end and an
// error to stop. A record with a value over the reference's limits is
// left out, counted: written, it would not load. The context is checked
// every 256 records (at most 16 MB of the source, by its row limit).
func writeAll(ctx context.Context, w io.Writer, st *Stats, next func(*gazetteer.Record) (bool, error)) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var rerr error
	werr := gazetteer.WriteCSVColumns(bw, gazetteer.AllColumns, func(yield func(gazetteer.Record) bool) {
		var r gazetteer.Record
		for n := 0; ; n++ {
			if n&255 == 0 {
				if err := ctx.Err(); err != nil {
					rerr = err
					return
				}
			}
			r = gazetteer.Record{}
			ok, err := next(&r)
			if err != nil {
				rerr = err
				return
			}
			if !ok {
				return
			}
			if r.ID == "" {
				continue // skipped, counted by next
			}
			if reason := overLimits(&r); reason != "" {
				st.skip(reason)
				continue
			}
			st.Written++
			if !yield(r) {
				return
			}
		}
	})
	if rerr != nil {
		return rerr
	}
	if werr != nil {
		return werr
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("refimport: %w", err)
	}
	return nil
}

// Why a record is left out that gazetteer.Load would refuse for a length.
var (
	reasonLongValue = fmt.Sprintf("value over %d bytes", gazetteer.MaxFieldBytes)
	reasonLongWord  = fmt.Sprintf("word over %d bytes", gazetteer.MaxWordBytes)
)

// overLimits returns why a value of r is longer than the reference's
// limits allow (gazetteer.MaxFieldBytes, MaxWordBytes), or "". The row
// limit needs no check: the values within theirs make a row of at most
// about 33 KB.
func overLimits(r *gazetteer.Record) string {
	for _, v := range [...]string{r.ID, r.BuildingID, r.Organisation, r.Department, r.SubBuilding,
		r.BuildingName, r.BuildingNumber, r.DependentStreet, r.Street, r.DoubleDependentLocality,
		r.Locality, r.City, r.Region, r.Postcode, r.Country, r.POBox} {
		if len(v) > gazetteer.MaxFieldBytes {
			return reasonLongValue
		}
		if len(v) > gazetteer.MaxWordBytes && gazetteer.LongestWord(v) > gazetteer.MaxWordBytes {
			return reasonLongWord
		}
	}
	return ""
}

// fieldKey folds a column or property name for lookup: lower case, runs
// of other characters as one underscore, and PAF's "dependant" spelled
// "dependent".
func fieldKey(s string) string {
	var b strings.Builder
	us := false
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			us = false
		} else if !us && b.Len() > 0 {
			b.WriteByte('_')
			us = true
		}
	}
	return strings.ReplaceAll(strings.TrimSuffix(b.String(), "_"), "dependant", "dependent")
}

// peekJSON reports whether the input starts (after white space and a
// byte-order mark, in its first 4 KiB) with '[' or '{'.
func peekJSON(br *bufio.Reader) (bool, error) {
	b, err := br.Peek(4096)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("refimport: %w", err)
	}
	b = bytes.TrimLeft(b, " \t\r\n\xef\xbb\xbf")
	return len(b) > 0 && (b[0] == '[' || b[0] == '{'), nil
}

// input is a source as the converters read it: buffered, its byte-order
// mark dropped, a source record at most gazetteer.MaxRowBytes long.
type input struct {
	*bufio.Reader
	lr  *rowlimit.Reader
	bom int64 // bytes dropped before the buffer's first
	end int64 // where the last record ends, in bytes of the source
}

// inputBuffer is the size of the input's buffer, and so how far the
// parsers may read ahead of the record they are on.
const inputBuffer = 64 << 10

// openInput buffers r, drops a UTF-8 byte-order mark and says whether the
// input is JSON rather than CSV.
func openInput(r io.Reader) (*input, bool, error) {
	lr := rowlimit.New(r, gazetteer.MaxRowBytes, inputBuffer)
	in := &input{Reader: bufio.NewReaderSize(lr, inputBuffer), lr: lr}
	if b, err := in.Peek(3); err == nil && string(b) == "\ufeff" {
		_, _ = in.Discard(3)
		in.bom = 3
	}
	isJSON, err := peekJSON(in.Reader)
	return in, isJSON, err
}

// mark tells the row limit that a record ends at off, the parser's input
// offset, and returns the record's length.
func (in *input) mark(off int64) int64 {
	off += in.bom
	n := off - in.end
	in.end = off
	in.lr.Mark(off)
	return n
}

// errLongRecord is a source record over gazetteer.MaxRowBytes: the
// conversion stops there, since reading on would mean holding it.
var errLongRecord = fmt.Errorf("a record over %d bytes, the limit", gazetteer.MaxRowBytes)

// csvFirstRow starts reading CSV from in: the reader, the first row, and
// its cells as field keys (fieldKey).
func csvFirstRow(in *input) (*csvInput, []string, []string, error) {
	cr := &csvInput{r: csv.NewReader(in.Reader), in: in} // which reuses in's buffer
	cr.r.FieldsPerRecord = -1
	first, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil, nil, fmt.Errorf("%w: empty input", ErrFormat)
	}
	if err != nil {
		return nil, nil, nil, csvErr(err)
	}
	keys := make([]string, len(first))
	for i, h := range first {
		keys[i] = fieldKey(h)
	}
	return cr, first, keys, nil
}

// csvInput is a CSV reader that keeps the row limit of its input.
type csvInput struct {
	r       *csv.Reader
	in      *input
	pending []string // a row read ahead, nextRow's next
}

// nextRow reads the next row into f, keyed by cols, and counts it in st;
// more is false at the end. A row with another number of fields than cols
// is skipped and counted: ok is false.
func (c *csvInput) nextRow(f map[string]string, cols []string, st *Stats) (more, ok bool, err error) {
	row := c.pending
	c.pending = nil
	if row == nil {
		if row, err = c.Read(); errors.Is(err, io.EOF) {
			return false, false, nil
		} else if err != nil {
			return false, false, csvErr(err)
		}
	}
	st.Read++
	if len(row) != len(cols) {
		st.skip("wrong number of fields")
		return true, false, nil
	}
	clear(f)
	for i, v := range row {
		f[cols[i]] = v
	}
	return true, true, nil
}

// Read reads a row, as csv.Reader.Read; a row over the limit is a
// *SourceError naming its line.
func (c *csvInput) Read() ([]string, error) {
	row, err := c.r.Read()
	if errors.Is(err, rowlimit.ErrTooLong) {
		line := 0
		if len(row) > 0 {
			line, _ = c.r.FieldPos(0)
		}
		var te *rowlimit.TooLongError
		if line == 0 && errors.As(err, &te) {
			line = te.Line
		}
		return nil, &SourceError{Line: line, Err: errLongRecord}
	}
	if err == nil || errors.Is(err, csv.ErrFieldCount) {
		if n := c.in.mark(c.r.InputOffset()); n > gazetteer.MaxRowBytes {
			line, _ := c.r.FieldPos(0)
			return nil, &SourceError{Line: line, Err: errLongRecord}
		}
	}
	return row, err
}
