package pipeline

import (
	"maps"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// TestDigestSet: the set holds what was added, once, through its growth,
// the digest 0 included, and yields each digest once.
func TestDigestSet(t *testing.T) {
	for _, tc := range []struct {
		name    string
		digests []uint64
	}{
		{name: "empty"},
		{name: "zero", digests: []uint64{0, 0, 5}},
		{name: "same low bits", digests: []uint64{1 << 40, 2 << 40, 3 << 40, 1 << 40, 1024, 2048}}, // one chain of probes
		{name: "growing", digests: randomDigests(5000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s digestSet
			want := map[uint64]bool{}
			for _, d := range tc.digests {
				if added := s.add(d); added == want[d] {
					t.Fatalf("add(%#x) = %v, had it: %v", d, added, want[d])
				}
				want[d] = true
			}
			if s.len() != len(want) {
				t.Errorf("len %d, want %d", s.len(), len(want))
			}
			for d := range want {
				if !s.has(d) {
					t.Errorf("has(%#x) = false", d)
				}
			}
			for _, d := range []uint64{7, 1 << 63, 0} {
				if !want[d] && s.has(d) {
					t.Errorf("has(%#x) = true, never added", d)
				}
			}
			got := slices.Sorted(s.all())
			if w := slices.Sorted(maps.Keys(want)); !slices.Equal(got, w) {
				t.Errorf("all = %v\nwant %v", got, w)
			}
			s.release()
			if s.len() != 0 || s.has(5) {
				t.Errorf("released: len %d", s.len())
			}
		})
	}
}

func randomDigests(n int) []uint64 {
	r := rand.New(rand.NewPCG(1, 2))
	ds := make([]uint64, n)
	for i := range ds {
		ds[i] = r.Uint64()
		if i%10 == 9 {
			ds[i] = ds[r.IntN(i)] // a duplicate
		}
	}
	return ds
}

// TestEstimateWritesNoSpill: the estimate keeps its distinct requests in
// memory, 8 bytes each, and writes no temporary file, so a spill directory
// that cannot be written does not stop it (the run's dedup spill did).
func TestEstimateWritesNoSpill(t *testing.T) {
	const n = 3000
	cells := func(i int) []string { return distinct(i % 1000) }
	cfg := Config{Source: &genSource{n: n, cells: cells}, Mapper: cellMapper, DedupCache: 1,
		SpillDir: filepath.Join(t.TempDir(), "missing")}
	est, err := EstimateRun(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if est.Rows != n || est.DistinctRequests != 1000 || est.CallsToPay != 1000 {
		t.Errorf("estimate %+v, want %d rows, 1000 distinct requests and calls", est, n)
	}
}

// TestDigestSetOutsideHeap: on Unix the table is not in the Go heap, whose
// collector would otherwise let the garbage of the rows read grow to the
// table's size (419 MB at the peak on 10 million rows, for a 128 MiB table).
func TestDigestSetOutsideHeap(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("no mmap: the table is in the heap")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var s digestSet
	for _, d := range randomDigests(1 << 20) { // a table of 2 Mi slots, 16 MiB
		s.add(d)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	defer s.release()
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 4<<20 {
		t.Errorf("the heap grew by %d MiB with the set: its table is in the heap", grew>>20)
	}
}
