package ratelimit

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"
)

// BenchmarkAchievedRate paces calls to a fake service that takes 50 ms per
// call, with more workers than the rate needs, on the real clock. It reports
// the achieved rate as a share of the configured one (util_%) and the most
// calls started in any one-second window (max/1s), which must not pass
// rate+burst (reported as bound/1s). One op is one call.
func BenchmarkAchievedRate(b *testing.B) {
	const latency = 50 * time.Millisecond
	for _, tc := range []struct {
		rate    float64
		burst   int
		workers int
	}{
		{100, 1, 32},
		{200, 5, 64},
	} {
		b.Run(fmt.Sprintf("rate=%v/burst=%d/workers=%d", tc.rate, tc.burst, tc.workers), func(b *testing.B) {
			l := New(tc.rate, tc.burst)
			starts := make([]time.Time, 0, b.N)
			var mu sync.Mutex
			jobs := make(chan struct{})
			var wg sync.WaitGroup
			ctx := context.Background()
			for w := 0; w < tc.workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range jobs {
						if _, err := l.Acquire(ctx); err != nil {
							b.Error(err)
							return
						}
						now := time.Now() // before the lock, which would add its own delay
						mu.Lock()
						starts = append(starts, now)
						mu.Unlock()
						time.Sleep(latency) // the fake service's latency
					}
				}()
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				jobs <- struct{}{}
			}
			close(jobs)
			wg.Wait()
			b.StopTimer()
			sort.Slice(starts, func(i, j int) bool { return starts[i].Before(starts[j]) })
			if n := len(starts); n > tc.burst+1 {
				span := starts[n-1].Sub(starts[0]).Seconds()
				achieved := float64(n-tc.burst) / span
				b.ReportMetric(100*achieved/tc.rate, "util_%")
			}
			b.ReportMetric(float64(maxInWindow(starts, time.Second)), "max/1s")
			b.ReportMetric(tc.rate+float64(tc.burst), "bound/1s")
		})
	}
}

// BenchmarkClimbAfter429 is the reviewer's reproduction on the real clock:
// 16 workers at 40/s burst 1, one 429 at the tenth call, after which the
// limit, halved, ramps back over 2 s to 38/s (and holds there 20 s before it
// probes up). One op is one call; run it with -benchtime 300x or more to see
// the whole ramp. It reports the most calls
// started within 20 ms (max/20ms; 1 at burst 1, since the interval is at
// least 25 ms), within any second (max/1s, bound 41) and the limit at the end.
func BenchmarkClimbAfter429(b *testing.B) {
	l := New(40, 1)
	var (
		mu     sync.Mutex
		starts []time.Time
	)
	jobs := make(chan struct{})
	var wg sync.WaitGroup
	ctx := context.Background()
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				s, err := l.Acquire(ctx)
				if err != nil {
					b.Error(err)
					return
				}
				now := time.Now()
				mu.Lock()
				starts = append(starts, now)
				n := len(starts)
				mu.Unlock()
				if n == 10 {
					s.RateLimited(time.Second)
				}
			}
		}()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		jobs <- struct{}{}
	}
	close(jobs)
	wg.Wait()
	b.StopTimer()
	sort.Slice(starts, func(i, j int) bool { return starts[i].Before(starts[j]) })
	b.ReportMetric(float64(maxInWindow(starts, 20*time.Millisecond)), "max/20ms")
	b.ReportMetric(float64(maxInWindow(starts, time.Second)), "max/1s")
	b.ReportMetric(l.Rate(), "rate_end")
}

// BenchmarkWaitUnlimited measures the cost of Acquire on an unlimited limiter,
// the embedded-service default, where it must not be a bottleneck.
func BenchmarkWaitUnlimited(b *testing.B) {
	l := New(0, 1)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := l.Acquire(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
