package writers

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/addrclean/addrclean/api"
)

// benchHeader is a typical CRM export.
var benchHeader = []string{"Customer ID", "First Name", "Last Name", "Company", "Address 1", "Address 2", "Town", "County", "Eircode", "Country", "Phone", "Email"}

// benchResults are the rows the benchmarks cycle through: mostly Accept, some
// Suggest with highlights, some Error.
func benchResults() []Result {
	cells := []string{"C0012345", "Mary", "Byrne", "Byrne & Sons Ltd", "Unit 4, Ballymount Industrial Estate", "Ballymount Road", "Dublin", "Dublin", "D12 X2Y3", "Ireland", "+353 1 234 5678", "mary@example.com"}
	acc := response(api.ActionAccept, []string{"Unit 4", "Ballymount Industrial Estate", "Ballymount Road"},
		[]string{"Unit 4", "Ballymount Industrial Estate", "Ballymount Road", "Dublin 12", "D12 X2Y3"}, [][]int{{}, {}, {}, {}, {}})
	sug := response(api.ActionSuggest, []string{"Unit 4", "Ballymount Road"},
		[]string{"Unit 4", "Ballymount Road", "Dublin 12", "D12 X2Y4"}, [][]int{{}, {}, {}, {4, 4}})
	return []Result{
		{Cells: cells, InputLabel: "Unit 4, Ballymount Industrial Estate, Ballymount Road, Dublin, Dublin, D12 X2Y3", Response: acc},
		{Cells: cells, InputLabel: "Unit 4, Ballymount Industrial Estate, Ballymount Road, Dublin, Dublin, D12 X2Y3", Response: acc},
		{Cells: cells, InputLabel: "Unit 4, Ballymount Industrial Estate, Ballymount Road, Dublin, Dublin, D12 X2Y3", Response: sug},
		{Cells: cells, InputLabel: "Unit 4, Ballymount Industrial Estate, Ballymount Road, Dublin, Dublin, D12 X2Y3", Err: "service unavailable"},
	}
}

// writeRows writes n benchmark rows through a new writer at path.
func writeRows(b *testing.B, ctor constructor, path string, n int, progress func(int)) {
	w, err := ctor(path, benchHeader, Options{})
	if err != nil {
		b.Fatal(err)
	}
	rs := benchResults()
	ctx := context.Background()
	for i := range n {
		r := rs[i%len(rs)]
		r.Row = i + 1
		if err := w.Write(ctx, r); err != nil {
			b.Fatal(err)
		}
		if progress != nil {
			progress(i + 1)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

func reportRate(b *testing.B, rows int) {
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkWrite measures the cost of one row in each format (b.N rows into
// one output).
func BenchmarkWrite(b *testing.B) {
	for _, bb := range []struct {
		name string
		ctor constructor
		file string
	}{
		{"enriched-csv", NewEnriched, "a.csv"},
		{"review-csv", NewReview, "a.csv"},
		{"enriched-jsonl", NewEnriched, "a.jsonl"},
		{"enriched-xlsx", NewEnriched, "a.xlsx"},
		{"review-xlsx", NewReview, "a.xlsx"},
	} {
		b.Run(bb.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), bb.file)
			b.ReportAllocs()
			writeRows(b, bb.ctor, path, b.N, nil)
			reportRate(b, b.N)
		})
	}
}

// BenchmarkEnrichedCSV1M writes 1,000,000 enriched rows as CSV per
// iteration (target: at least 300,000 rows/s).
func BenchmarkEnrichedCSV1M(b *testing.B) {
	const rows = 1_000_000
	path := filepath.Join(b.TempDir(), "a.csv")
	for range b.N {
		writeRows(b, NewEnriched, path, rows, nil)
	}
	reportRate(b, rows*b.N)
	if fi, err := os.Stat(path); err == nil {
		b.ReportMetric(float64(fi.Size())/(1<<20), "MB-file")
	}
}

// BenchmarkEnrichedXLSX1M writes 1,000,000 enriched rows as XLSX and reports
// the live heap after 100,000 and after 1,000,000 rows (flat while
// streaming) and the peak heap while excelize builds the zip on Close.
func BenchmarkEnrichedXLSX1M(b *testing.B) {
	if os.Getenv("ADDRCLEAN_BENCH_XLSX1M") == "" {
		b.Skip("set ADDRCLEAN_BENCH_XLSX1M=1: writes about 1.7 GB of temporary sheet XML and takes about a minute")
	}
	const rows = 1_000_000
	path := filepath.Join(b.TempDir(), "a.xlsx")
	var at100k, at1M float64
	for range b.N {
		var peak heapPeak
		writeRows(b, NewEnriched, path, rows, func(n int) {
			switch n {
			case 100_000:
				at100k = liveHeapMB()
			case rows:
				at1M = liveHeapMB()
				peak.start()
			}
		})
		b.ReportMetric(peak.stop(), "MB-heap-peak-saving")
	}
	reportRate(b, rows*b.N)
	b.ReportMetric(at100k, "MB-heap-at-100k")
	b.ReportMetric(at1M, "MB-heap-at-1M")
	if fi, err := os.Stat(path); err == nil {
		b.ReportMetric(float64(fi.Size())/(1<<20), "MB-file")
	}
}

// liveHeapMB collects garbage and returns the live heap in MB.
func liveHeapMB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// heapPeak samples the heap until stopped and keeps the largest figure.
type heapPeak struct {
	done chan struct{}
	wg   sync.WaitGroup
	max  atomic.Uint64
}

func (p *heapPeak) start() {
	p.done = make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > p.max.Load() {
				p.max.Store(v)
			}
			select {
			case <-p.done:
				return
			case <-t.C:
			}
		}
	}()
}

// stop ends sampling and returns the peak in MB.
func (p *heapPeak) stop() float64 {
	if p.done == nil {
		return 0
	}
	close(p.done)
	p.wg.Wait()
	return float64(p.max.Load()) / (1 << 20)
}

// BenchmarkBracketLabel measures the CSV highlight renderer.
func BenchmarkBracketLabel(b *testing.B) {
	label := []string{"Unit 4", "Ballymount Road", "Baile Átha Cliath 12", "D12 X2Y4"}
	hl := [][]int{{}, {0, 10}, {6, 4, 12, 2}, {4, 4}}
	b.ReportAllocs()
	for b.Loop() {
		_ = MarkChanges(label, hl)
	}
}

// BenchmarkChanges measures what av_changes adds to a row: Changes (every
// output with a response) and the review's MarkDiff.
func BenchmarkChanges(b *testing.B) {
	rs := benchResults()
	b.Run("Changes", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			_ = Changes(rs[i%len(rs)])
		}
	})
	b.Run("MarkDiff", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			r := rs[i%len(rs)]
			if r.Response != nil {
				a := &r.Response.Address
				_ = MarkDiff(r.InputLabel, a.Label, a.Highlights)
			}
		}
	})
}
