package table

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// spillBuffer is how much of the spill file is read or written at once.
const spillBuffer = 64 << 10

// maxSpillCell bounds a cell read back, so that a damaged file cannot ask
// for any amount of memory: no database hands out a text value this long.
const maxSpillCell = 1 << 30

// OpenQuery runs query on db and copies its rows to a local file as fast as
// they come, then ends the query and its transaction: the rows are handed
// out from the file afterwards, so no transaction stays open for the hours
// a run may take, whatever the query (it has no key to page by). Memory
// holds one row at a time; the file is unlinked as soon as it is created
// (on systems that allow it), so nothing is left behind. A connection lost
// while copying starts the copy again, as opts.Retry allows.
func OpenQuery(ctx context.Context, db Database, query, name string, opts SourceOptions) (*Source, error) {
	f, err := os.CreateTemp(opts.SpillDir, "addrclean-query-*.spill")
	if err != nil {
		return nil, fmt.Errorf("%s: a file to keep the query's rows: %w", name, err)
	}
	s := &spillRows{f: f, path: f.Name()}
	if os.Remove(s.path) == nil {
		s.path = ""
	}
	err = cmp.Or(opts.Retry, DefaultRetry).do(ctx, opts.Logger, "the query again", func() error { return s.copy(ctx, db, query) })
	if err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return newSource(s, name, opts), nil
}

// spillRows is Rows over the spill file: each row is its number of cells,
// then each cell's length and bytes, the numbers as uvarints.
type spillRows struct {
	f    *os.File
	path string // set while the file still has a name
	r    *bufio.Reader
	cols []Column
	rows int64 // rows in the file
	read int64 // rows handed out
}

// copy writes every row of query to the file, from its start.
func (s *spillRows) copy(ctx context.Context, db Database, query string) error {
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := s.f.Truncate(0); err != nil {
		return err
	}
	rows, err := db.Select(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	s.cols, s.rows = rows.Columns(), 0
	w := bufio.NewWriterSize(s.f, spillBuffer)
	var num [binary.MaxVarintLen64]byte
	for {
		cells, err := rows.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		w.Write(num[:binary.PutUvarint(num[:], uint64(len(cells)))])
		for _, c := range cells {
			w.Write(num[:binary.PutUvarint(num[:], uint64(len(c)))])
			w.WriteString(c)
		}
		s.rows++
	}
	// The transaction ends here, before the first row is used.
	if err := rows.Close(); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("keeping the query's rows: %w", err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	s.r = bufio.NewReaderSize(s.f, spillBuffer)
	return nil
}

func (s *spillRows) Columns() []Column { return s.cols }

func (s *spillRows) Next(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.read >= s.rows {
		return nil, io.EOF
	}
	n, err := binary.ReadUvarint(s.r)
	if err != nil {
		return nil, s.damaged(err)
	}
	if n > uint64(len(s.cols)) {
		return nil, s.damaged(fmt.Errorf("a row of %d cells", n))
	}
	cells := make([]string, n)
	for i := range cells {
		l, err := binary.ReadUvarint(s.r)
		if err != nil {
			return nil, s.damaged(err)
		}
		if l > maxSpillCell {
			return nil, s.damaged(fmt.Errorf("a cell of %d bytes", l))
		}
		b := make([]byte, l)
		if _, err := io.ReadFull(s.r, b); err != nil {
			return nil, s.damaged(err)
		}
		cells[i] = string(b)
	}
	s.read++
	return cells, nil
}

func (s *spillRows) damaged(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("reading back the query's rows (row %d of %d): %w", s.read+1, s.rows, err)
}

// Close removes the file.
func (s *spillRows) Close() error {
	err := s.f.Close()
	if s.path != "" {
		if rerr := os.Remove(s.path); err == nil {
			err = rerr
		}
		s.path = ""
	}
	return err
}
