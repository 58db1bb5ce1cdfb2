package writers

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/api"
)

// TestMarkCached: av_cached is the last enriched column (a "cached" member
// in JSONL) only with MarkCached, and follows FromCache, not Cached.
func TestMarkCached(t *testing.T) {
	header := []string{"Address"}
	resp := response(api.ActionAccept, []string{"1 Main St"}, []string{"1 Main St"}, nil)
	rows := []Result{
		{Row: 1, Cells: []string{"a"}, Response: resp},
		{Row: 2, Cells: []string{"b"}, Response: resp, Cached: true},                  // a duplicate within the run
		{Row: 3, Cells: []string{"c"}, Response: resp, Cached: true, FromCache: true}, // the persistent cache
		{Row: 4, Cells: []string{"d"}, Err: "no address"},
	}
	want := []string{"false", "false", "true", "false"}
	for _, mark := range []bool{false, true} {
		for _, ext := range []string{".csv", ".jsonl"} {
			path := filepath.Join(t.TempDir(), "out"+ext)
			w, err := NewEnriched(path, header, Options{MarkCached: mark})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if err := w.Write(context.Background(), r); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if ext == ".csv" {
				recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				last := recs[0][len(recs[0])-1]
				if (last == CachedColumn) != mark || len(recs[0]) != 2+len(EnrichedColumns)+len(DuplicateColumns)+map[bool]int{true: 1}[mark] {
					t.Fatalf("mark %v: header ends %q, %d columns", mark, last, len(recs[0]))
				}
				if mark {
					for i, rec := range recs[1:] {
						if got := rec[len(rec)-1]; got != want[i] {
							t.Errorf("row %d av_cached = %q, want %s", i+1, got, want[i])
						}
					}
				}
				continue
			}
			for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var obj map[string]any
				if err := json.Unmarshal([]byte(line), &obj); err != nil {
					t.Fatal(err)
				}
				c, ok := obj["cached"]
				if ok != mark || (mark && c != (want[i] == "true")) {
					t.Errorf("mark %v: JSONL row %d cached = %v (present %v)", mark, i+1, c, ok)
				}
			}
		}
	}
	// The review output never has the column.
	path := filepath.Join(t.TempDir(), "review.csv")
	w, err := NewReview(path, header, Options{MarkCached: true})
	if err != nil {
		t.Fatal(err)
	}
	_ = w.Write(context.Background(), rows[3])
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), CachedColumn) {
		t.Error("the review output has av_cached")
	}
}
