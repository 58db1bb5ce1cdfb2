package writers

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/runstats"
)

// dupRows are rows whose address ids repeat: id i%7 for row i, none for
// every 5th row (an Error row).
func dupRows(n int) []Result {
	rs := make([]Result, 0, n)
	for i := 1; i <= n; i++ {
		r := Result{Row: i, Cells: []string{fmt.Sprint(i), "addr"}}
		if i%5 == 0 {
			r.Err = "no address"
		} else {
			r.Response = response(api.ActionAccept, []string{"1 Main St"}, []string{"1 Main St"}, nil)
			r.Response.Address.ID = fmt.Sprintf("ID-%d", i%7)
		}
		rs = append(rs, r)
	}
	return rs
}

func writeDups(t *testing.T, path string, rs []Result) runstats.Duplicates {
	t.Helper()
	w, err := NewEnriched(path, []string{"n", "a"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if err := w.Write(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.(DuplicateReporter).Duplicates()
}

// TestDuplicateColumns checks av_duplicates and av_first_row against counts
// worked out here, in every format, with the counts in memory and spilled
// to disk (a limit of 2 ids forces the scratch file), and that the outputs of
// both paths and of a second run are byte-identical.
func TestDuplicateColumns(t *testing.T) {
	rs := dupRows(60)
	want := map[string][2]int{}
	for _, r := range rs {
		if r.Err != "" {
			continue
		}
		c := want[r.Response.Address.ID]
		if c[0] == 0 {
			c[1] = r.Row
		}
		c[0]++
		want[r.Response.Address.ID] = c
	}
	for _, ext := range []string{"csv", "xlsx", "jsonl"} {
		t.Run(ext, func(t *testing.T) {
			dir := t.TempDir()
			var outs [][]byte
			var founds []runstats.Duplicates
			for i, limit := range []int{dupMemIDs, 2, 2} {
				dupMemLimit = limit
				path := filepath.Join(dir, fmt.Sprintf("out%d.%s", i, ext))
				founds = append(founds, writeDups(t, path, rs))
				dupMemLimit = dupMemIDs
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				outs = append(outs, b)
			}
			if ext != "xlsx" { // a zip holds timestamps; its cells are checked by the golden tests
				for i := 1; i < len(outs); i++ {
					if !bytes.Equal(outs[0], outs[i]) {
						t.Fatalf("output %d differs from output 0", i)
					}
				}
			}
			for i := 1; i < len(founds); i++ {
				if founds[i] != founds[0] {
					t.Fatalf("Duplicates %d = %+v, want %+v", i, founds[i], founds[0])
				}
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 3 {
				t.Fatalf("directory holds %d files, want the 3 outputs and no scratch file", len(ents))
			}
			if ext != "csv" {
				return
			}
			recs, err := csv.NewReader(bytes.NewReader(outs[0])).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			first := 2 + len(EnrichedColumns)
			for i, rec := range recs[1:] {
				r := rs[i]
				gotN, gotFirst := rec[first], rec[first+1]
				if r.Err != "" {
					if gotN != "" || gotFirst != "" {
						t.Fatalf("row %d (no id): %q %q, want empty", r.Row, gotN, gotFirst)
					}
					continue
				}
				w := want[r.Response.Address.ID]
				if gotN != fmt.Sprint(w[0]) || gotFirst != fmt.Sprint(w[1]) {
					t.Fatalf("row %d: av_duplicates %s av_first_row %s, want %d %d", r.Row, gotN, gotFirst, w[0], w[1])
				}
			}
			d := founds[0]
			var rows, largest int64
			for _, c := range want {
				rows += int64(c[0])
				largest = max(largest, int64(c[0]))
			}
			if d.Groups != 7 || d.Rows != rows || d.Extra != rows-7 || d.Largest != largest {
				t.Fatalf("Duplicates = %+v, want 7 groups of %d rows, largest %d", d, rows, largest)
			}
		})
	}
}

// TestDuplicateJSONL checks the JSONL members: present only with an id.
func TestDuplicateJSONL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	writeDups(t, path, dupRows(8))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if !strings.HasSuffix(lines[0], `,"duplicates":2,"first_row":1}`) {
		t.Errorf("row 1 ends %q", lines[0][max(0, len(lines[0])-40):])
	}
	if strings.Contains(lines[4], "duplicates") {
		t.Errorf("row 5 (an Error row) has duplicates: %q", lines[4])
	}
}

// BenchmarkDupPass writes 100,000 enriched rows with distinct address ids
// to CSV: held back, counted and written at Close. The ids/disk variant
// lowers the in-memory limit so that the counts go through the scratch
// SQLite file.
func BenchmarkDupPass(b *testing.B) {
	r := dupRows(1)[0]
	resps := make([]*api.VerifyResponse, 100000)
	for i := range resps {
		v := *r.Response
		v.Address.ID = fmt.Sprintf("ID-%07d", i*7919%100003)
		resps[i] = &v
	}
	for _, limit := range []int{dupMemIDs, 1 << 14} {
		name := "memory"
		if limit < len(resps) {
			name = "disk"
		}
		b.Run(name, func(b *testing.B) {
			dupMemLimit = limit
			defer func() { dupMemLimit = dupMemIDs }()
			dir := b.TempDir()
			for b.Loop() {
				w, err := NewEnriched(filepath.Join(dir, "o.csv"), []string{"n", "a"}, Options{})
				if err != nil {
					b.Fatal(err)
				}
				for i, v := range resps {
					r.Row, r.Response = i+1, v
					if err := w.Write(context.Background(), r); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(resps)*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// TestDupIndexKeepsNoBigString: an address id can be a slice of a whole
// decoded answer; the key the index keeps for the run must be a copy, or
// every row's answer stays in memory (live heap 31 → 215 MB over a
// 100,000-row run before the fix).
func TestDupIndexKeepsNoBigString(t *testing.T) {
	x := newDupIndex(t.TempDir(), "p", dupMemIDs)
	// The second add matters too: assigning to a map entry whose key is a
	// string stores the new key, so a count kept as a map value would pin
	// the latest answer of every id.
	var bigs []string
	for row := 1; row <= 2; row++ {
		big := strings.Repeat("x", 1<<16)
		bigs = append(bigs, big)
		if err := x.add(big[:10], row); err != nil {
			t.Fatal(err)
		}
	}
	for k := range x.mem {
		for _, big := range bigs {
			if unsafe.StringData(k) == unsafe.StringData(big) {
				t.Fatal("the index keeps a slice of the caller's string")
			}
		}
	}
}
