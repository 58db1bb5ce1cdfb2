// Package refimport converts the address files users hold, Royal Mail PAF
// (CSV or JSON, as PAF resellers serve it) and OpenAddresses (CSV or
// GeoJSON), into the reference CSV format of the embedded service
// (gazetteer/FORMAT.md). It streams: a row is read, converted and written
// before the next is read.
package refimport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/addrclean/addrclean/gazetteer"
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
		keys := make([]string, 0, len(m.m))
		n := 0
		for k, v := range m.m {
			keys = append(keys, k)
			n += v
		}
		sort.Strings(keys)
		fmt.Fprintf(&b, ", %s %d (", m.name, n)
		for i, k := range keys {
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
// error to stop. The context is checked every 4,096 records.
func writeAll(ctx context.Context, w io.Writer, st *Stats, next func(*gazetteer.Record) (bool, error)) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var rerr error
	werr := gazetteer.WriteCSVColumns(bw, gazetteer.AllColumns, func(yield func(gazetteer.Record) bool) {
		var r gazetteer.Record
		for n := 0; ; n++ {
			if n&4095 == 0 {
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

// skipBOM drops a UTF-8 byte-order mark.
func skipBOM(br *bufio.Reader) {
	if b, err := br.Peek(3); err == nil && string(b) == "\ufeff" {
		_, _ = br.Discard(3)
	}
}

// openInput buffers r, drops a UTF-8 byte-order mark and says whether the
// input is JSON rather than CSV.
func openInput(r io.Reader) (*bufio.Reader, bool, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	skipBOM(br)
	isJSON, err := peekJSON(br)
	return br, isJSON, err
}

// csvFirstRow starts reading CSV from r: the reader, the first row, and its
// cells as field keys (fieldKey).
func csvFirstRow(r io.Reader) (*csv.Reader, []string, []string, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
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
