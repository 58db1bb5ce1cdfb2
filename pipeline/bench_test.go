package pipeline

import (
	"context"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/ratelimit"
	"github.com/addrclean/addrclean/service"
	"github.com/addrclean/addrclean/service/servicetest"
	"github.com/addrclean/addrclean/writers"
)

// discard is a writer that keeps nothing.
type discard struct{}

func (discard) Write(context.Context, writers.Result) error { return nil }
func (discard) Close() error                                { return nil }
func (discard) Abort() error                                { return nil }

// BenchmarkRun measures the pipeline's own cost per row: one op is one row
// through reader, mapper, dedup, verifier and two outputs.
func BenchmarkRun(b *testing.B) {
	resp := answer(api.Address{Lines: []string{"1 Main Street"}}, api.ActionAccept)
	instant := &fakeVerifier{fn: func(context.Context, api.Address, int64) (*api.VerifyResponse, error) {
		return resp, nil
	}}
	oneMs := &fakeVerifier{fn: func(context.Context, api.Address, int64) (*api.VerifyResponse, error) {
		time.Sleep(time.Millisecond) // the fake service's latency
		return resp, nil
	}}
	same := func(int) []string { return []string{"1 Main Street", "IE"} }
	// Every address comes back 5,000 rows later, out of the LRU's reach:
	// the second half of the rows are answered from the spill on disk.
	far := func(i int) []string { return distinct(i % 5000) }
	for _, bc := range []struct {
		name    string
		v       Verifier
		cells   func(int) []string
		workers int
	}{
		{"latency=0/workers=8", instant, distinct, 8},
		{"latency=0/duplicates/workers=8", instant, same, 8},
		{"latency=0/far-duplicates/workers=8", instant, far, 8},
		{"latency=1ms/workers=8", oneMs, distinct, 8},
		{"latency=1ms/workers=64", oneMs, distinct, 64},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			start := time.Now()
			st, err := Run(context.Background(), Config{
				Source: &genSource{n: b.N, cells: bc.cells}, Mapper: cellMapper, Verifier: bc.v,
				Workers: bc.workers, Outputs: []writers.Writer{discard{}, discard{}},
			})
			if err != nil {
				b.Fatal(err)
			}
			if st.RowsWritten != int64(b.N) {
				b.Fatalf("wrote %d of %d rows", st.RowsWritten, b.N)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rows/s")
		})
	}
}

// BenchmarkRateUtilisation runs the pipeline against a fake service that
// takes 50 ms per call, under --rate 100 --burst 1 with enough workers, on
// the real clock. It reports the achieved call rate as a share of the limit
// (util_%) and the most calls started in any one-second window (max/1s),
// which must not pass rate+burst (bound/1s). One op is one row.
func BenchmarkRateUtilisation(b *testing.B) {
	const (
		r       = 100
		burst   = 1
		workers = 32
	)
	var mu sync.Mutex
	starts := make([]time.Time, 0, b.N)
	v := &fakeVerifier{fn: func(_ context.Context, a api.Address, _ int64) (*api.VerifyResponse, error) {
		now := time.Now() // before the lock, which would add its own delay
		mu.Lock()
		starts = append(starts, now)
		mu.Unlock()
		time.Sleep(50 * time.Millisecond) // the fake service's latency
		return answer(a, api.ActionAccept), nil
	}}
	_, err := Run(context.Background(), Config{
		Source: &genSource{n: b.N, cells: distinct}, Mapper: cellMapper, Verifier: v,
		Limiter: ratelimit.New(r, burst), Workers: workers, Outputs: []writers.Writer{discard{}},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	sort.Slice(starts, func(i, j int) bool { return starts[i].Before(starts[j]) })
	if n := len(starts); n > burst+1 {
		achieved := float64(n-burst) / starts[n-1].Sub(starts[0]).Seconds()
		b.ReportMetric(100*achieved/r, "util_%")
	}
	b.ReportMetric(float64(maxInWindow(starts, time.Second)), "max/1s")
	b.ReportMetric(r+burst, "bound/1s")
}

// BenchmarkDedupKey measures the per-row cost of the duplicate key.
func BenchmarkDedupKey(b *testing.B) {
	a := api.Address{Lines: []string{"Apartment 4", "12 Main Street", "D02 X285"}, City: "Dublin", Country: "IE"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		a.Lines[0] = "Apartment " + strconv.Itoa(i&1023)
		_ = dedupKey(a)
	}
}

// acceptAll matches every query to itself, at building level.
type acceptAll struct{}

func (acceptAll) Match(q gazetteer.Query) gazetteer.Match {
	return gazetteer.Match{Verdict: gazetteer.VerdictAccept, Level: gazetteer.LevelBuilding,
		Lines: q.Lines, City: q.City, Region: q.Region, Country: q.Country}
}

// BenchmarkWithAPIClient runs rows through the real api.Client to the real
// service handler on a loopback httptest server, with a matcher that
// accepts every address: the pipeline plus a real HTTP round trip, without
// the matching cost of the service. One op is one row.
func BenchmarkWithAPIClient(b *testing.B) {
	svc, err := service.New(acceptAll{}, []service.Integration{service.NewIntegration(testKey)})
	if err != nil {
		b.Fatal(err)
	}
	srv := servicetest.Start(b, servicetest.Wrap(svc))
	client, err := api.New(srv.URL, api.Secret(testKey))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	start := time.Now()
	st, err := Run(context.Background(), Config{
		Source: &genSource{n: b.N, cells: distinct}, Mapper: cellMapper, Verifier: client,
		Workers: 8, Outputs: []writers.Writer{discard{}},
	})
	if err != nil {
		b.Fatal(err)
	}
	if st.RowsWritten != int64(b.N) {
		b.Fatalf("wrote %d of %d rows", st.RowsWritten, b.N)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rows/s")
}

// BenchmarkPeakHeap runs a fixed number of rows per op and reports the
// largest live heap seen (sampled every 10,000 rows, after a GC): it must not
// grow with the number of rows.
func BenchmarkPeakHeap(b *testing.B) {
	for _, rows := range []int{100_000, 1_000_000} {
		b.Run("rows="+strconv.Itoa(rows), func(b *testing.B) {
			var peak uint64
			sample := func(p Progress) {
				if p.RowsDone%10_000 != 0 {
					return
				}
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
			}
			for i := 0; i < b.N; i++ {
				_, err := Run(context.Background(), Config{
					Source: &genSource{n: rows, cells: distinct}, Mapper: cellMapper, Verifier: &fakeVerifier{},
					Outputs: []writers.Writer{discard{}}, Progress: sample, ProgressInterval: -1,
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}

// maxInWindow returns the largest number of the sorted times that fall in
// any half-open window [t, t+w).
func maxInWindow(sorted []time.Time, w time.Duration) int {
	best, j := 0, 0
	for i := range sorted {
		for j < len(sorted) && sorted[j].Sub(sorted[i]) < w {
			j++
		}
		best = max(best, j-i)
	}
	return best
}
