package writers

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// widthCalls records the calls a setColWidths makes.
type widthCalls struct{ calls [][3]float64 }

func (c *widthCalls) SetColWidth(minVal, maxVal int, width float64) error {
	c.calls = append(c.calls, [3]float64{float64(minVal), float64(maxVal), width})
	return nil
}

// alternating is n widths alternating between 8 and 9.
func alternating(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = float64(8 + i%2)
	}
	return w
}

// TestSetColWidths: runs of equal width are one call each, set last column
// first; a sheet wider than maxSizedCols sizes that many columns, the
// preferred ones first, so that the work excelize does (a pass over the
// columns already set at every call) is bounded whatever the width.
func TestSetColWidths(t *testing.T) {
	none := func(int) bool { return false }
	last2 := func(n int) func(int) bool { return func(c int) bool { return c >= n-2 } }
	tests := []struct {
		name      string
		widths    []float64
		sized     func(int) bool
		wantCalls int
		wantCols  int
		wantLast  [3]float64 // the last call: the first run
	}{
		{"one width", []float64{10, 10, 10}, none, 1, 3, [3]float64{1, 3, 10}},
		{"runs", []float64{8, 8, 12, 12, 12, 8}, none, 3, 6, [3]float64{1, 2, 8}},
		{"alternating", alternating(6), none, 6, 6, [3]float64{1, 1, 8}},
		{"wide, one width", make([]float64, 16384), none, 1, maxSizedCols, [3]float64{1, maxSizedCols, 0}},
		{"wide, alternating", alternating(16384), none, maxSizedCols, maxSizedCols, [3]float64{1, 1, 8}},
		{"wide, added columns kept", alternating(16384), last2(16384), maxSizedCols, maxSizedCols, [3]float64{1, 1, 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c widthCalls
			if err := setColWidths(&c, tt.widths, tt.sized); err != nil {
				t.Fatal(err)
			}
			if len(c.calls) != tt.wantCalls {
				t.Fatalf("%d calls, want %d", len(c.calls), tt.wantCalls)
			}
			set, prevMin := 0, len(tt.widths)+1
			for _, call := range c.calls {
				lo, hi, w := int(call[0]), int(call[1]), call[2]
				if hi >= prevMin || lo > hi {
					t.Fatalf("call %v after a call from column %d: want last column first", call, prevMin)
				}
				for col := lo; col <= hi; col++ {
					if tt.widths[col-1] != w {
						t.Fatalf("column %d set to %g, want %g", col, w, tt.widths[col-1])
					}
				}
				prevMin, set = lo, set+hi-lo+1
			}
			if set != tt.wantCols {
				t.Errorf("%d columns sized, want %d", set, tt.wantCols)
			}
			if got := c.calls[len(c.calls)-1]; got != tt.wantLast {
				t.Errorf("last call %v, want %v", got, tt.wantLast)
			}
			if tt.name == "wide, added columns kept" {
				if first := c.calls[0]; first[1] != 16384 || c.calls[1][1] != 16383 {
					t.Errorf("the preferred last columns are not sized: first calls %v", c.calls[:2])
				}
			}
		})
	}
}

// wideHeader is n column names whose widths alternate, the worst case for
// grouping columns of equal width.
func wideHeader(n int) []string {
	h := make([]string, n)
	for i := range h {
		h[i] = fmt.Sprintf("%0*d", 5+i%2, i)
	}
	return h
}

// writeWide writes an enriched XLSX output of the header and five rows and
// returns the heap allocations its Close made (where the columns are sized:
// the rows are held back until then).
func writeWide(t *testing.T, path string, header []string) uint64 {
	t.Helper()
	w, err := NewEnriched(path, header, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for row := 1; row <= 5; row++ {
		cells := make([]string, len(header))
		cells[0] = "1 Main Street"
		if err := w.Write(context.Background(), Result{Row: row, Cells: cells, Err: "no address"}); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}

// TestXLSXWideOutputSizedInLinearWork: the work of writing an XLSX output
// grows with its columns, not with their square. Before, every column was
// one SetColWidth call, each copying every column set before it: 4,000
// columns took 25 s, 16,358 over 15 minutes. The measure is allocations, not
// time.
func TestXLSXWideOutputSizedInLinearWork(t *testing.T) {
	dir := t.TempDir()
	small := writeWide(t, filepath.Join(dir, "small.xlsx"), wideHeader(1000))
	large := writeWide(t, filepath.Join(dir, "large.xlsx"), wideHeader(4000))
	if large > 6*small {
		t.Fatalf("4,000 columns took %d allocations, 1,000 took %d: more than linear", large, small)
	}
}

// TestXLSXWideOutput writes the widest input a sheet holds with the added
// columns (the 16,358 before av_changes was added), and reads the widths back: the added columns and the first input columns
// are sized, the columns past maxSizedCols keep the default width.
func TestXLSXWideOutput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wide.xlsx")
	header := wideHeader(excelize.MaxColumns - len(newLayout(enriched, nil, false, "").cols))
	header[0] = "a long address column name"
	writeWide(t, path, header)
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cols := len(header) + len(EnrichedColumns) + len(DuplicateColumns)
	for _, tc := range []struct {
		col  int
		want float64
	}{
		{1, float64(len(header[0]) + 4)},
		{2, 10}, {3, 9},
		{maxSizedCols - 30, 10}, // an input column inside the budget
		{cols - len(DuplicateColumns) - len(EnrichedColumns) + 1, float64(len("av_action") + 4)},
		{cols, float64(len("av_first_row") + 4)},
	} {
		name, _ := excelize.ColumnNumberToName(tc.col)
		if got, err := f.GetColWidth("Enriched", name); err != nil || got != tc.want {
			t.Errorf("column %s width %g (%v), want %g", name, got, err, tc.want)
		}
	}
	// Past the budget: no width of its own.
	name, _ := excelize.ColumnNumberToName(maxSizedCols + 100)
	def, _ := excelize.NewFile().GetColWidth("Sheet1", "A")
	if got, _ := f.GetColWidth("Enriched", name); got != def {
		t.Errorf("column %s width %g, want the default %g", name, got, def)
	}
	rows, err := f.GetRows("Enriched")
	if err != nil || len(rows) != 6 || !strings.HasPrefix(rows[1][0], "1 Main") {
		t.Fatalf("rows: %d, %v", len(rows), err)
	}
}
