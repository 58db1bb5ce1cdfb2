package table

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// sliceRows is Rows over cells held in memory.
type sliceRows struct {
	cols []Column
	rows [][]string
}

func (r *sliceRows) Columns() []Column { return r.cols }

func (r *sliceRows) Next(context.Context) ([]string, error) {
	if len(r.rows) == 0 {
		return nil, io.EOF
	}
	c := r.rows[0]
	r.rows = r.rows[1:]
	return c, nil
}

func (r *sliceRows) Close() error { return nil }

// TestSourceNUL: NUL bytes are removed from cells as a row is read, and a
// row carries its id; a NUL in the id is refused, naming the row.
func TestSourceNUL(t *testing.T) {
	cols := []Column{{Name: "id"}, {Name: "line1"}, {Name: "town"}}
	for _, c := range []struct {
		name string
		row  []string
		want []string
		err  error
	}{
		{"clean", []string{"7", "1 Main St", "Cork"}, []string{"7", "1 Main St", "Cork"}, nil},
		{"NUL in cells", []string{"7", "1 Main\x00 St\x00", "\x00Cork"}, []string{"7", "1 Main St", "Cork"}, nil},
		{"NUL in the id", []string{"7\x00", "1 Main St", "Cork"}, nil, ErrBadValue},
	} {
		src := newSource(&sliceRows{cols: cols, rows: [][]string{c.row}}, "test", SourceOptions{Key: "id", Logger: zerolog.Nop()})
		r, err := src.Next(context.Background())
		if !errors.Is(err, c.err) {
			t.Fatalf("%s: %v, want %v", c.name, err, c.err)
		}
		if c.err != nil {
			if !strings.Contains(err.Error(), "row 1") || !strings.Contains(err.Error(), `7\x00`) {
				t.Errorf("%s: %v does not name the row and its id", c.name, err)
			}
			continue
		}
		if !slices.Equal(r.Cells, c.want) || r.ID != "7" || r.Num != 1 {
			t.Errorf("%s: row %+v, want cells %q and id 7", c.name, r, c.want)
		}
	}
}
