package table

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/addrclean/addrclean/writers"
)

// AppliedAt is the final table's column holding the time of the addrclean
// apply that wrote a row.
const AppliedAt = "applied_at"

// RowSink upserts rows of text cells into a table by their id: some of a
// row's columns (the final_ columns of addrclean apply), the id as key,
// and AppliedAt. It is a writers.RowWriter. Batches are committed as they
// fill, so a caller that may still refuse its output must check before it
// writes (addrclean apply reads its inputs twice).
type RowSink struct {
	t     Target
	name  string
	key   int
	idx   []int
	at    time.Time
	batch []Record
	pend  map[string]int
	max   int
}

var _ writers.RowWriter = (*RowSink)(nil)

// NewRowSink prepares table n of db for rows whose header is header: the
// columns cols of it (created as text) and AppliedAt, keyed by column key
// (created of type keyType).
func NewRowSink(ctx context.Context, db Database, n Name, name string, header []string, key string, keyType Type,
	cols []string, at time.Time, batchRows int) (*RowSink, error) {
	s := &RowSink{name: name, key: slices.Index(header, key), at: at.Truncate(time.Microsecond), pend: map[string]int{}, max: batchRows}
	if s.key < 0 {
		return nil, fmt.Errorf("%s: %w: no id column %q", name, ErrNoColumn, key)
	}
	if s.max <= 0 {
		s.max = DefaultBatchRows
	}
	var tcols []Column
	for _, c := range cols {
		i := slices.Index(header, c)
		if i < 0 || strings.EqualFold(c, key) {
			return nil, fmt.Errorf("%s: column %q is not one to write", name, c)
		}
		s.idx = append(s.idx, i)
		tcols = append(tcols, Column{Name: c, Type: Text})
	}
	t, err := OpenTarget(ctx, db, n, key, keyType, append(tcols, Column{Name: AppliedAt, Type: Timestamp, Stamp: true}))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s.t = t
	return s, nil
}

// Write adds a row to the batch, and writes the batch when it is full. A
// row without an id is left out; of rows sharing an id, the last wins.
func (s *RowSink) Write(ctx context.Context, cells []string) error {
	key := ""
	if s.key < len(cells) {
		key = strings.TrimSpace(cells[s.key])
	}
	if key == "" {
		return nil
	}
	vals := make([]any, 0, len(s.idx)+1)
	for _, i := range s.idx {
		var v any // an empty cell is NULL
		if i < len(cells) && cells[i] != "" {
			v = cells[i]
		}
		vals = append(vals, v)
	}
	vals = append(vals, s.at)
	if i, ok := s.pend[key]; ok {
		s.batch[i].Values = vals
		return nil
	}
	s.pend[key] = len(s.batch)
	s.batch = append(s.batch, Record{Key: key, Values: vals})
	if len(s.batch) >= s.max {
		return s.flush(ctx)
	}
	return nil
}

func (s *RowSink) flush(ctx context.Context) error {
	if len(s.batch) == 0 {
		return nil
	}
	_, err := s.t.Write(ctx, s.batch, nil)
	s.batch = s.batch[:0]
	clear(s.pend)
	if err != nil {
		return fmt.Errorf("write %s: %w", s.name, err)
	}
	return nil
}

// Close writes the last batch and releases the table.
func (s *RowSink) Close() error {
	err := s.flush(context.Background())
	if cerr := s.t.Close(); err == nil {
		err = cerr
	}
	return err
}

// Abort drops the batch not yet written and releases the table.
func (s *RowSink) Abort() error {
	s.batch = nil
	return s.t.Close()
}
