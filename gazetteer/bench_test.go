package gazetteer_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/sample_data/synth"
)

const benchN = 1_000_000

var bench struct {
	once sync.Once
	dir  string
	path string
	err  error
	ix   *gazetteer.Index
	recs []gazetteer.Record
}

// benchFile writes the million generated references to a temporary file
// once per process; it is made in code, never checked in.
func benchFile(b *testing.B) string {
	bench.once.Do(func() {
		bench.dir, bench.err = os.MkdirTemp("", "gazetteer-bench")
		if bench.err != nil {
			return
		}
		bench.path = filepath.Join(bench.dir, "reference.csv")
		f, err := os.Create(bench.path)
		if err != nil {
			bench.err = err
			return
		}
		w := bufio.NewWriterSize(f, 1<<20)
		bench.err = gazetteer.WriteCSVColumns(w, gazetteer.Columns, synth.Generate(42, benchN))
		if err := w.Flush(); bench.err == nil {
			bench.err = err
		}
		if err := f.Close(); bench.err == nil {
			bench.err = err
		}
	})
	if bench.err != nil {
		b.Fatal(bench.err)
	}
	return bench.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bench.dir != "" {
		os.RemoveAll(bench.dir)
	}
	os.Exit(code)
}

// BenchmarkLoad1M loads a million-address reference file; heap-MB is the
// live heap held by the loaded index.
func BenchmarkLoad1M(b *testing.B) {
	path := benchFile(b)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	var ix *gazetteer.Index
	for b.Loop() {
		ix = nil
		var err error
		ix, err = gazetteer.LoadFile(context.Background(), path)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc-before)/(1<<20), "heap-MB")
	b.ReportMetric(float64(ix.Len()), "records")
	runtime.KeepAlive(ix)
}

// BenchmarkMatch1M matches perturbed addresses against a million
// references on one goroutine; p99-ns is the 99th percentile of one Match.
func BenchmarkMatch1M(b *testing.B) {
	path := benchFile(b)
	if bench.ix == nil {
		ix, err := gazetteer.LoadFile(context.Background(), path)
		if err != nil {
			b.Fatal(err)
		}
		bench.ix = ix
		i := 0
		ix.Records(func(r *gazetteer.Record) bool {
			if i%997 == 0 {
				bench.recs = append(bench.recs, *r)
			}
			i++
			return true
		})
	}
	ix := bench.ix
	p := synth.NewPerturber(5, bench.recs)
	queries := make([]gazetteer.Query, 0, 4096)
	var cases []synth.Case
	for i := 0; len(queries) < cap(queries); i++ {
		c := p.Random(&bench.recs[i%len(bench.recs)])
		cases = append(cases, c)
		queries = append(queries, query(c.Input))
	}
	durs := make([]time.Duration, 0, 1<<16)
	i := 0
	for b.Loop() {
		t0 := time.Now()
		ix.Match(queries[i%len(queries)])
		if len(durs) < cap(durs) {
			durs = append(durs, time.Since(t0))
		}
		i++
	}
	b.StopTimer()
	slices.Sort(durs)
	if len(durs) > 0 {
		b.ReportMetric(float64(durs[len(durs)*99/100].Nanoseconds()), "p99-ns")
	}
	b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "matches/s")
	// Quality at this size, outside the timing.
	var acc, good, want, got int
	for i, c := range cases {
		m := ix.Match(queries[i])
		right := m.Record != nil && m.Record.ID == c.TrueID
		if m.Verdict == gazetteer.VerdictAccept {
			acc++
			if right {
				good++
			}
		}
		if c.Expect != gazetteer.VerdictConfirm {
			want++
			if right && m.Verdict != gazetteer.VerdictConfirm {
				got++
			}
		}
	}
	b.ReportMetric(float64(good)/float64(max(acc, 1)), "accept-precision")
	b.ReportMetric(float64(got)/float64(max(want, 1)), "id-recall")
}

// BenchmarkMatchSample matches against the small sample-sized reference,
// in parallel, as the embedded service does.
func BenchmarkMatchSample(b *testing.B) {
	ix, in, _ := evalIndex(b, 6000)
	p := synth.NewPerturber(5, in)
	queries := make([]gazetteer.Query, 1024)
	for i := range queries {
		queries[i] = query(p.Random(&in[i*5%len(in)]).Input)
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			ix.Match(queries[i%len(queries)])
			i++
		}
	})
}
