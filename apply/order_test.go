package apply

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/record"
	"github.com/addrclean/addrclean/runfile"
)

// TestOrdered puts a review's rows back in row order, in memory and
// through runs on disk, keeping repeated rows (for the caller to refuse)
// in the review's order, and removes its temporary files.
func TestOrdered(t *testing.T) {
	rows := []int{5, 3, 9, 3, 1, 4, 2, 8, 7, 6}
	for _, chunk := range []int{100, 3, 1} {
		t.Run("chunk "+strconv.Itoa(chunk), func(t *testing.T) {
			defer func(n int) { chunkRows = n }(chunkRows)
			chunkRows = chunk
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			var b strings.Builder
			b.WriteString("row,name,decision,av_action,input_label,matched_label\n")
			for i, r := range rows {
				b.WriteString(strconv.Itoa(r) + ",n" + strconv.Itoa(i) + ",,Suggest,x,y\n")
			}
			path := filepath.Join(t.TempDir(), "review.csv")
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			rv, err := runfile.OpenReview(context.Background(), path, readers.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer rv.Close()
			rv.Bind([]string{"name"})
			o, err := newOrdered(context.Background(), rv)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for {
				r, err := o.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				in, _ := r.Input()
				got = append(got, strconv.Itoa(r.Row)+in[0])
			}
			o.Close()
			want := []string{"1n4", "2n6", "3n1", "3n3", "4n5", "5n0", "6n9", "7n8", "8n7", "9n2"}
			if !slices.Equal(got, want) {
				t.Fatalf("order %q, want %q", got, want)
			}
			if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
				t.Errorf("%d temporary entries left", len(ents))
			}
		})
	}
}

// sliceReader is a readers.Reader over rows held in memory.
type sliceReader struct {
	header []string
	rows   [][]string
}

func (s *sliceReader) Header() []string { return s.header }
func (s *sliceReader) Close() error     { return nil }
func (s *sliceReader) Next(context.Context) (record.Row, error) {
	if len(s.rows) == 0 {
		return record.Row{}, io.EOF
	}
	r := s.rows[0]
	s.rows = s.rows[1:]
	return record.Row{Num: len(s.rows), Cells: r}, nil
}

// TestOrderedKeepsCellsExactly: a review sorted through runs on disk gives
// back its cells byte for byte; a CR LF in a cell (a workbook keeps one) or
// an invalid byte must not change, or the row no longer matches the
// enriched file's.
func TestOrderedKeepsCellsExactly(t *testing.T) {
	defer func(n int) { chunkRows = n }(chunkRows)
	chunkRows = 1
	t.Setenv("TMPDIR", t.TempDir())
	cells := []string{"3 Main St\r\nFlat 2", "a\rb", "\xff\x00\"q\"", " spaced "}
	src := &sliceReader{header: []string{"row", "street", "decision", "av_action", "input_label", "matched_label"}}
	for i, c := range cells {
		src.rows = append(src.rows, []string{strconv.Itoa(len(cells) - i), c, "", "Suggest", "x", "y"})
	}
	rv, err := runfile.NewReview("review", src)
	if err != nil {
		t.Fatal(err)
	}
	rv.Bind([]string{"street"})
	o, err := newOrdered(context.Background(), rv)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	for i := range cells {
		r, err := o.Next()
		if err != nil {
			t.Fatal(err)
		}
		in, _ := r.Input()
		if want := cells[len(cells)-1-i]; in[0] != want {
			t.Errorf("row %d: cell %q, want %q", r.Row, in[0], want)
		}
	}
}
