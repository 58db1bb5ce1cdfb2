package table

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/addrclean/addrclean/readers"
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
}

var _ readers.Reader = (*Source)(nil)

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
	cols := rows.Columns()
	return &Source{rows: rows, cols: cols, header: Names(cols), name: name}, nil
}

// Header returns the result's column names.
func (s *Source) Header() []string { return s.header }

// Columns returns the result's columns with their types.
func (s *Source) Columns() []Column { return s.cols }

// Next returns the next row, or io.EOF after the last.
func (s *Source) Next(ctx context.Context) (readers.Row, error) {
	cells, err := s.rows.Next(ctx)
	if errors.Is(err, io.EOF) {
		return readers.Row{}, io.EOF
	}
	if err != nil {
		return readers.Row{}, fmt.Errorf("%s: after row %d: %w", s.name, s.n, err)
	}
	s.n++
	return readers.Row{Num: s.n, Line: s.n, Cells: cells}, nil
}

// Close ends the query.
func (s *Source) Close() error { return s.rows.Close() }

// KeyType is the type results tables give a key column named key of cols:
// Integer for an integer column, else Text.
func KeyType(cols []Column, key string) Type {
	for _, c := range cols {
		if c.Name == key && c.Type == Integer {
			return Integer
		}
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
