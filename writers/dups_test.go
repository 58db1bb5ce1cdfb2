package writers

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

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
// to disk (a limit of 64 bytes, two ids, forces the scratch file), and that the outputs of
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
			for i, limit := range []int{dupMemBytes, 64, 64} {
				dupMemLimit = limit
				path := filepath.Join(dir, fmt.Sprintf("out%d.%s", i, ext))
				founds = append(founds, writeDups(t, path, rs))
				dupMemLimit = dupMemBytes
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
	for _, limit := range []int{dupMemBytes, 1 << 19} {
		name := "memory"
		if limit < dupMemBytes {
			name = "disk"
		}
		b.Run(name, func(b *testing.B) {
			dupMemLimit = limit
			defer func() { dupMemLimit = dupMemBytes }()
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

// TestDupIndexMemory: the index's live heap per address id, with ids like
// the service's (10 bytes), each a slice of a larger decoded answer that
// the index must not keep. It was about 70 bytes an id with a map of
// cloned strings; an arena and a table of offsets take 27 to 45. Before
// the ids were cloned, the answers stayed: 1 KiB an id here.
func TestDupIndexMemory(t *testing.T) {
	const ids = 100_000
	answer := func(i int) string {
		return fmt.Sprintf("IE%08d", i) + strings.Repeat(" ", 1<<10)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	x := newDupIndex(t.TempDir(), "p", dupMemBytes)
	defer x.close()
	for i := range ids {
		for row := range 2 { // a second row of each id must keep nothing either
			if err := x.add(answer(i)[:10], 2*i+row+1); err != nil {
				t.Fatal(err)
			}
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perID := float64(after.HeapAlloc-before.HeapAlloc) / ids
	if perID > 48 {
		t.Errorf("the index keeps %.1f bytes of heap an id, want at most 48", perID)
	}
	err := x.lookup(func(get func(string) (dupCount, error)) error {
		c, err := get("IE00000007")
		if c != (dupCount{n: 2, first: 15}) {
			t.Errorf("IE00000007: %+v, want 2 rows from row 15", c)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDupIndexCounts checks the counts against a map, in memory and through
// the scratch file at several limits, with ids that are prefixes of one
// another, long, or not UTF-8, and repeated at any distance.
func TestDupIndexCounts(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	pool := []string{"A", "AB", "ABC", "\xff\x00", strings.Repeat("L", 300)}
	for i := range 3000 {
		pool = append(pool, fmt.Sprintf("ID-%d", i))
	}
	var rows []string
	for range 20_000 {
		rows = append(rows, pool[rnd.IntN(len(pool))])
	}
	want := map[string]dupCount{}
	for i, id := range rows {
		c := want[id]
		if c.n == 0 {
			c.first = int64(i + 1)
		}
		c.n++
		want[id] = c
	}
	for _, limit := range []int{dupMemBytes, 1 << 14, 300, 1} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			x := newDupIndex(t.TempDir(), "p", limit)
			defer x.close()
			for i, id := range rows {
				if err := x.add(id, i+1); err != nil {
					t.Fatal(err)
				}
			}
			if longest := dupHead + binary.MaxVarintLen64 + 300; cap(x.arena) > max(limit, longest) {
				t.Fatalf("the arena holds %d bytes, more than its limit", cap(x.arena))
			}
			if spilled := x.f != nil; spilled != (limit < dupMemBytes) {
				t.Fatalf("scratch file used: %v, want %v", spilled, limit < dupMemBytes)
			}
			err := x.lookup(func(get func(string) (dupCount, error)) error {
				for _, id := range append(pool, "never", "I", "ID-") {
					c, err := get(id)
					if err != nil {
						return err
					}
					if c != want[id] {
						t.Errorf("%q: %+v, want %+v", id, c, want[id])
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestOpenOutputsMemory: an enriched and a review CSV output, open and
// written to, hold at most 320 KiB of heap between them (their buffers and
// the spool's; 256 KiB each made 800 KiB, a fifth of a live run's heap).
func TestOpenOutputsMemory(t *testing.T) {
	dir := t.TempDir()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var ws []Writer
	for _, ctor := range []func(string, []string, Options) (Writer, error){NewEnriched, NewReview} {
		w, err := ctor(filepath.Join(dir, fmt.Sprintf("o%d.csv", len(ws))), []string{"n", "a"}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range dupRows(100) {
			if err := w.Write(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
		ws = append(ws, w)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if held := int64(after.HeapAlloc) - int64(before.HeapAlloc); held > 320<<10 {
		t.Errorf("two open outputs hold %d KiB of heap, want at most 320", held>>10)
	}
	for _, w := range ws {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
