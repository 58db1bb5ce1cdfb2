package table

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/record"
)

// Source streams the rows of a table or query; it is a readers.Reader whose
// header is the result's column names. Rows are numbered 1..N like a file's
// data records (Row.Line is the same number: a result has no lines).
type Source struct {
	rows   Rows
	cols   []Column
	header []string
	n      int
	name   string
	key    int // the id's index in the cells; -1 when rows carry no id
	log    zerolog.Logger
	nul    int // cells a NUL byte was removed from
}

var _ readers.Reader = (*Source)(nil)

// ErrBadValue marks a cell of the input that no table can store.
var ErrBadValue = errors.New("a value no table can store")

// SourceOptions tell OpenTable and OpenQuery how to read.
type SourceOptions struct {
	// Key is the id column: rows carry its value as their ID (for logs
	// and messages), and a table is read in its order.
	Key string
	// Logger receives the warnings of reading (NUL bytes removed).
	Logger zerolog.Logger
	// PageRows is the rows of one page of a table; 0 is DefaultPageRows.
	PageRows int
	// Retry is how a lost connection is retried; the zero value is
	// DefaultRetry.
	Retry Retry
	// SpillDir is where a query's rows are kept while they are used; ""
	// is os.TempDir().
	SpillDir string
}

// TableQuery is the SELECT that reads table n, only the rows matching where
// (SQL text of the user's, may be empty), ordered by the column orderBy so
// that rows are numbered the same in every run.
func TableQuery(n Name, where, orderBy string) string {
	return InputQuery(n, where) + " ORDER BY " + QuoteIdent(orderBy)
}

// OpenSource runs query on db and returns its rows as a Source; name is how
// messages call the source (no password in it).
func OpenSource(ctx context.Context, db Database, query, name string) (*Source, error) {
	rows, err := db.Select(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return newSource(rows, name, SourceOptions{Logger: zerolog.Nop()}), nil
}

// newSource is a Source over rows, their id in column opts.Key.
func newSource(rows Rows, name string, opts SourceOptions) *Source {
	cols := rows.Columns()
	header := Names(cols)
	key := -1
	if opts.Key != "" {
		key = slices.Index(header, opts.Key)
	}
	return &Source{rows: rows, cols: cols, header: header, name: name, key: key, log: opts.Logger}
}

// UseKey makes column col the id that rows carry (Row.ID), once the
// mapping of a query's columns is known; "" or a missing column carries none.
func (s *Source) UseKey(col string) {
	s.key = -1
	if col != "" {
		s.key = slices.Index(s.header, col)
	}
}

// Header returns the result's column names.
func (s *Source) Header() []string { return s.header }

// Columns returns the result's columns with their types.
func (s *Source) Columns() []Column { return s.cols }

// Next returns the next row, or io.EOF after the last.
func (s *Source) Next(ctx context.Context) (record.Row, error) {
	cells, err := s.rows.Next(ctx)
	if errors.Is(err, io.EOF) {
		if s.nul > 0 {
			s.log.Warn().Int("cells", s.nul).Msg("NUL bytes were removed from cells of the input: databases cannot store them")
			s.nul = 0
		}
		return record.Row{}, io.EOF
	}
	if err != nil {
		return record.Row{}, fmt.Errorf("%s: after row %d: %w", s.name, s.n, err)
	}
	s.n++
	row := record.Row{Num: s.n, Line: s.n, Cells: cells}
	if s.key >= 0 && s.key < len(cells) {
		row.ID = cells[s.key]
	}
	if err := s.dropNUL(row); err != nil {
		return record.Row{}, err
	}
	return row, nil
}

// dropNUL removes the NUL bytes from the cells of row, as it is read: no
// database text type stores one (PostgreSQL refuses the whole batch), and a
// NUL carries nothing of an address. A NUL in the id is refused instead:
// the id keys the results, and a changed one could name another row.
func (s *Source) dropNUL(row record.Row) error {
	for i, c := range row.Cells {
		if strings.IndexByte(c, 0) < 0 {
			continue
		}
		col := ""
		if i < len(s.header) {
			col = s.header[i]
		}
		if i == s.key {
			return fmt.Errorf("%s: row %d: %w: the id %q holds a NUL byte, which no table can store; fix the row or leave it out with --where",
				s.name, row.Num, ErrBadValue, c)
		}
		row.Cells[i] = strings.ReplaceAll(c, "\x00", "")
		if s.nul < 10 {
			s.log.Warn().Str("id", row.ID).Int("row", row.Num).Str("column", col).Msg("a NUL byte was removed from a cell")
		}
		s.nul++
	}
	return nil
}

// Close ends the query.
func (s *Source) Close() error { return s.rows.Close() }

// KeyType is the type results tables give a key column named key of cols:
// Integer for an integer column, else Text.
func KeyType(cols []Column, key string) Type {
	if slices.ContainsFunc(cols, func(c Column) bool { return c.Name == key && c.Type == Integer }) {
		return Integer
	}
	return Text
}

// Names returns the names of cols.
func Names(cols []Column) []string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return names
}
