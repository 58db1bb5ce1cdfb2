package ratelimit

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/time/rate"
)

// quotaServer is a simulated service quota: admit decides a request that
// arrives at now, and returns the Retry-After of a refusal.
type quotaServer interface {
	admit(now time.Time) (ok bool, retryAfter time.Duration)
}

// bucketQuota is the local service's quota (service.limit): an x/time/rate
// bucket per key, refusals answered with Retry-After in whole seconds,
// never less than one.
type bucketQuota struct{ lim *rate.Limiter }

func (q bucketQuota) admit(now time.Time) (bool, time.Duration) {
	res := q.lim.ReserveN(now, 1)
	d := res.DelayFrom(now)
	if d <= 0 {
		return true, 0
	}
	res.CancelAt(now)
	return false, max(time.Second, time.Duration(math.Ceil(d.Seconds()))*time.Second)
}

// windowQuota refuses a request when n were admitted in the last second, as
// a quota kept as a sliding log does; Retry-After is one second.
type windowQuota struct {
	n        int
	admitted []time.Time
}

func (q *windowQuota) admit(now time.Time) (bool, time.Duration) {
	for len(q.admitted) > 0 && now.Sub(q.admitted[0]) >= time.Second {
		q.admitted = q.admitted[1:]
	}
	if len(q.admitted) >= q.n {
		return false, time.Second
	}
	q.admitted = append(q.admitted, now)
	return true, 0
}

// quotaRun is what runQuota saw.
type quotaRun struct {
	sent, answered, limited int
	releases                []release
}

// runQuota runs workers against srv for span in a synctest bubble: each
// worker acquires, travels to the service in latency plus up to jitter
// (drawn from a seeded source, so a run is repeatable), is admitted or
// refused there, travels back in latency, and reports a refusal to the
// limiter.
func runQuota(t *testing.T, l *Limiter, srv quotaServer, workers int, latency, jitter, span time.Duration) quotaRun {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	end := time.Now().Add(span)
	var (
		mu  sync.Mutex
		run quotaRun
		rng = rand.New(rand.NewPCG(11, 12))
		wg  sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for {
				sent, err := l.Acquire(ctx)
				if err != nil {
					return
				}
				mu.Lock()
				now := time.Now()
				if !now.Before(end) {
					mu.Unlock()
					cancel()
					return
				}
				run.sent++
				run.releases = append(run.releases, release{at: now, rate: l.Rate()})
				up := latency + time.Duration(rng.Int64N(int64(jitter)+1))
				mu.Unlock()
				time.Sleep(up)
				mu.Lock()
				ok, ra := srv.admit(time.Now())
				mu.Unlock()
				time.Sleep(latency)
				mu.Lock()
				if ok {
					run.answered++
				} else {
					run.limited++
				}
				mu.Unlock()
				if !ok {
					sent.RateLimited(ra)
				}
			}
		})
	}
	wg.Wait()
	return run
}

// TestQuotaBelowRate is issue 11: --rate 100 against a service whose key
// admits 50/s. Halving on every 429 and climbing by a quarter after twenty
// successes used only 43-60 % of such a quota (unless its burst refills in
// the one-second pause); the limiter must use at least 85 % of it, over a
// minute that includes finding it, with at most 5 % of requests answered
// 429, and keep the pacing promise. Also the reviewer's earlier case (a
// sliding 30/s against --rate 40) and too few workers for the limit.
func TestQuotaBelowRate(t *testing.T) {
	const span = 60 * time.Second
	bucket := func(r float64, b int) func() quotaServer {
		return func() quotaServer { return bucketQuota{rate.NewLimiter(rate.Limit(r), b)} }
	}
	window := func(n int) func() quotaServer {
		return func() quotaServer { return &windowQuota{n: n} }
	}
	for _, tc := range []struct {
		name            string
		quota, r        float64
		srv             func() quotaServer
		workers         int
		latency, jitter time.Duration
	}{
		{"burst 10, 1 ms", 50, 100, bucket(50, 10), 8, 500 * time.Microsecond, 500 * time.Microsecond},
		{"burst 1, 1 ms", 50, 100, bucket(50, 1), 8, 500 * time.Microsecond, 500 * time.Microsecond},
		{"burst 50 (the service's default), 1 ms", 50, 100, bucket(50, 50), 8, 500 * time.Microsecond, 500 * time.Microsecond},
		{"sliding window, 50 ms", 50, 100, window(50), 14, 25 * time.Millisecond, time.Millisecond},
		{"burst 10, 200 ms", 50, 100, bucket(50, 10), 32, 100 * time.Millisecond, 2 * time.Millisecond},
		{"sliding window 30/s, --rate 40", 30, 40, window(30), 16, 500 * time.Microsecond, 500 * time.Microsecond},
		{"8 workers at 200 ms send 40/s of --rate 100, burst 5", 30, 100, bucket(30, 5), 8, 100 * time.Millisecond, 2 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := New(tc.r, 1)
				run := runQuota(t, l, tc.srv(), tc.workers, tc.latency, tc.jitter, span)
				util := float64(run.answered) / span.Seconds() / tc.quota
				share := float64(run.limited) / float64(run.sent)
				t.Logf("%d sent, %d answered (%.1f %% of the quota), %d answered 429 (%.1f %%), %d cuts, limit at the end %.1f/s",
					run.sent, run.answered, 100*util, run.limited, 100*share, l.gen, l.Rate())
				if util < 0.85 {
					t.Errorf("answered %.1f %% of the quota, want >= 85 %%", 100*util)
				}
				if share > 0.05 {
					t.Errorf("%.1f %% of requests answered 429, want <= 5 %%", 100*share)
				}
				checkSpacing(t, run.releases, tc.r, 1)
			})
		})
	}
}
