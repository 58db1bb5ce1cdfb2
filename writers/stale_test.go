package writers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestRemoveStaleTemps: the temporary outputs a killed run left are removed;
// a live run's are not, nor other files.
func TestRemoveStaleTemps(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("open files cannot be removed there; the lock is the system's own")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "out.csv")
	stale := []string{filepath.Join(dir, ".out.csv.tmp-123"), filepath.Join(dir, ".out.csv.tmp-4567")}
	keep := []string{filepath.Join(dir, ".other.csv.tmp-1"), filepath.Join(dir, "out.csv.tmp-1"), filepath.Join(dir, "out.csv")}
	for _, p := range append(stale, keep...) {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	live, err := NewEnriched(path, []string{"a"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	removed := RemoveStaleTemps(path)
	if len(removed) != len(stale) {
		t.Fatalf("removed %v, want %v", removed, stale)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there", p)
		}
	}
	for _, p := range keep {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed", p)
		}
	}
	// The live run's temporary output survives, and it still finishes.
	if err := live.Write(context.Background(), Result{Row: 1, Cells: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	if err := live.Close(); err != nil {
		t.Fatalf("the live output was disturbed: %v", err)
	}
	if got := RemoveStaleTemps("-"); got != nil {
		t.Fatalf("stdout: %v", got)
	}
}

// TestXLSXTooWide: an XLSX output wider than a sheet is refused when it is
// created, before any row is verified; CSV takes the same header.
func TestXLSXTooWide(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		new  func(string, []string, Options) (Writer, error)
		cols int
	}{
		{"enriched", NewEnriched, len(EnrichedColumns) + len(DuplicateColumns) + 1}, // + av_changes
		{"review", NewReview, len(ReviewColumns) + len(DecisionColumns) + 2},        // + row, av_changes
	} {
		t.Run(tc.name, func(t *testing.T) {
			header := make([]string, xlsxMaxCols-tc.cols+1) // one column too many
			for i := range header {
				header[i] = "c" + strconv.Itoa(i)
			}
			path := filepath.Join(dir, tc.name+".xlsx")
			_, err := tc.new(path, header, Options{})
			if !errors.Is(err, ErrTooWide) || !strings.Contains(err.Error(), strconv.Itoa(len(header)+tc.cols)) {
				t.Fatalf("err = %v, want ErrTooWide with the width", err)
			}
			if m, _ := filepath.Glob(filepath.Join(dir, "."+tc.name+"*")); len(m) > 0 {
				t.Fatalf("temporary files left: %v", m)
			}
			// One column fewer fits.
			w, err := tc.new(path, header[:len(header)-1], Options{})
			if err != nil {
				t.Fatalf("a sheet-wide output was refused: %v", err)
			}
			_ = w.Abort()
			w, err = tc.new(filepath.Join(dir, tc.name+".csv"), header, Options{})
			if err != nil {
				t.Fatalf("CSV: %v", err)
			}
			_ = w.Abort()
		})
	}
}
