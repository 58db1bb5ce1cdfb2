package ratelimit

import (
	"context"
	"errors"
	"math"
	"runtime"
	"sort"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// The tests run in synctest bubbles: time moves only when every goroutine
// is blocked, to the next timer, so releases happen exactly when the
// limiter lets them and a test never sleeps on the system clock.

// release is one return of Acquire seen by a simulated worker: when, and
// the limit in force at that moment.
type release struct {
	at   time.Time
	rate float64
}

// acquireAsync starts l.Acquire in a goroutine of the bubble and returns the
// time it returned at and its error.
func acquireAsync(ctx context.Context, l *Limiter) <-chan result {
	ch := make(chan result, 1)
	go func() {
		_, err := l.Acquire(ctx)
		ch <- result{time.Now(), err}
	}()
	return ch
}

type result struct {
	at  time.Time
	err error
}

func mustAcquire(t *testing.T, l *Limiter) Sent {
	t.Helper()
	s, err := l.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// simulate runs workers goroutines that loop on l.Acquire and call answer
// after each release (i counts releases from 0, in release order). It stops
// once done reports true (checked after each release) and returns the
// releases in order.
func simulate(t *testing.T, l *Limiter, workers int, answer func(i int, s Sent), done func(rs []release) bool) []release {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var (
		mu       sync.Mutex
		rs       []release
		finished bool
		wg       sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for {
				s, err := l.Acquire(ctx)
				if err != nil {
					return
				}
				mu.Lock()
				i := len(rs)
				rs = append(rs, release{at: time.Now(), rate: l.Rate()})
				if !finished && done(rs) {
					finished = true
					cancel()
				}
				mu.Unlock()
				answer(i, s)
			}
		})
	}
	wg.Wait()
	return rs
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

// checkSpacing asserts the pacing promise on release times: at burst 1 each
// release comes at least 1/rate after the one before, rate being the limit
// in force when it is let go (to a nanosecond of rounding); with any burst
// no one-second window holds more than configured rate + burst releases.
func checkSpacing(t *testing.T, rs []release, configured float64, burst int) {
	t.Helper()
	times := make([]time.Time, len(rs))
	for i, r := range rs {
		times[i] = r.at
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	if burst == 1 {
		bad := 0
		for i := 1; i < len(rs); i++ {
			if gap := rs[i].at.Sub(rs[i-1].at); (gap+time.Nanosecond).Seconds()*rs[i].rate < 1 {
				if bad < 5 {
					t.Errorf("release %d: %v after the previous one, below 1/%v", i, gap, rs[i].rate)
				}
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("%d of %d releases came too close to the previous one", bad, len(rs))
		}
	}
	if got, bound := maxInWindow(times, time.Second), int(configured)+burst; got > bound {
		t.Errorf("max releases in a 1 s window = %d, want <= %d", got, bound)
	}
	if got := maxInWindow(times, time.Nanosecond); got > burst {
		t.Errorf("%d releases at one instant, burst is %d", got, burst)
	}
}

func TestNew(t *testing.T) {
	for _, tt := range []struct {
		name     string
		rate     float64
		burst    int
		wantRate float64
	}{
		{"plain", 20, 1, 20},
		{"burst zero becomes one", 20, 0, 20},
		{"zero rate is unlimited", 0, 4, 0},
		{"negative rate is unlimited", -1, 1, 0},
		{"NaN is unlimited", math.NaN(), 1, 0},
		{"Inf is unlimited", math.Inf(1), 1, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := New(tt.rate, tt.burst)
			if got := l.Rate(); got != tt.wantRate {
				t.Errorf("Rate() = %v, want %v", got, tt.wantRate)
			}
			if got := l.Configured(); got != tt.wantRate {
				t.Errorf("Configured() = %v, want %v", got, tt.wantRate)
			}
			if got := l.bucket.Burst(); got != max(tt.burst, 1) {
				t.Errorf("burst = %v, want %v", got, max(tt.burst, 1))
			}
		})
	}
}

func TestNilLimiter(t *testing.T) {
	var l *Limiter
	s, err := l.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s.RateLimited(time.Second)
	var zero Sent
	zero.RateLimited(time.Second)
	if l.Rate() != 0 || l.Configured() != 0 {
		t.Fatal("nil limiter reports state")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Acquire(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire on cancelled ctx = %v", err)
	}
}

func TestUnlimitedNeverWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := New(0, 1)
		start := time.Now()
		for range 1000 {
			mustAcquire(t, l)
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("unlimited limiter waited %v", d)
		}
	})
}

func TestPacing(t *testing.T) {
	for _, tt := range []struct {
		name      string
		rate      float64
		burst     int
		wantDelay time.Duration
	}{
		{"10/s burst 1", 10, 1, 100 * time.Millisecond},
		{"10/s burst 3", 10, 3, 100 * time.Millisecond},
		{"4/s burst 2", 4, 2, 250 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				l := New(tt.rate, tt.burst)
				for range tt.burst { // the bucket starts full
					mustAcquire(t, l)
				}
				if d := time.Since(start); d != 0 {
					t.Fatalf("burst requests waited %v", d)
				}
				mustAcquire(t, l)
				if d := time.Since(start); d != tt.wantDelay {
					t.Fatalf("next request after %v, want %v", d, tt.wantDelay)
				}
			})
		})
	}
}

// TestAcquireCancelled: a waiter cancelled at the head of the line takes
// nothing from the bucket, and one cancelled behind it leaves the line.
func TestAcquireCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := New(1, 1)
		mustAcquire(t, l)
		ctx, cancel := context.WithCancel(t.Context())
		head, behind := acquireAsync(ctx, l), acquireAsync(ctx, l)
		time.Sleep(500 * time.Millisecond)
		cancel()
		for _, ch := range []<-chan result{head, behind} {
			if r := <-ch; !errors.Is(r.err, context.Canceled) || r.at.Sub(start) != 500*time.Millisecond {
				t.Fatalf("cancelled at 500ms: returned %v at %v", r.err, r.at.Sub(start))
			}
		}
		mustAcquire(t, l)
		if d := time.Since(start); d != time.Second {
			t.Fatalf("next request at %v, want at 1s: the cancelled ones took no token", d)
		}
	})
}

// TestRateLimitedWakesWaiters: a 429 makes every waiter, the head of the
// line included, wait out the shared pause; then they go one interval of
// the cut limit apart, a little less as the limit ramps up.
func TestRateLimitedWakesWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := New(10, 1)
		s := mustAcquire(t, l)
		var chans []<-chan result
		for range 3 { // 100, 200 and 300 ms out
			chans = append(chans, acquireAsync(t.Context(), l))
		}
		time.Sleep(50 * time.Millisecond)
		s.RateLimited(5 * time.Second)
		if got := l.Rate(); got != 5 {
			t.Fatalf("Rate() after 429 = %v, want 5", got)
		}
		var at []time.Duration
		for _, ch := range chans {
			r := <-ch
			if r.err != nil {
				t.Fatal(r.err)
			}
			at = append(at, r.at.Sub(start))
		}
		sort.Slice(at, func(i, j int) bool { return at[i] < at[j] })
		// The pause ends at 5.05 s, the limit is 5/s, ramping up in 100 ms
		// steps: the third goes a little under 200 ms after the second.
		if at[0] != 5050*time.Millisecond || at[1] != 5250*time.Millisecond || at[2] <= 5400*time.Millisecond || at[2] >= 5450*time.Millisecond {
			t.Fatalf("released at %v, want 5.05s, 5.25s, then a little under 200 ms on", at)
		}
	})
}

// TestRateLimitedNoDoubleCut: a 429 cuts the limit once; 429s of requests
// sent before that cut only extend the pause.
func TestRateLimitedNoDoubleCut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := New(16, 4)
		var before []Sent
		for range 4 { // the bucket's burst: in flight together
			before = append(before, mustAcquire(t, l))
		}
		before[0].RateLimited(time.Second)
		if got := l.Rate(); got != 8 {
			t.Fatalf("first cut: Rate() = %v, want 8", got)
		}
		before[1].RateLimited(2 * time.Second) // sent before the cut
		time.Sleep(3 * time.Second)            // past the pause: the Sent still says
		before[2].RateLimited(time.Second)
		if l.gen != 1 {
			t.Fatalf("429s of requests sent before the cut cut again: %d cuts", l.gen)
		}
		if got := l.notBefore.Sub(start); got != 4*time.Second {
			t.Fatalf("paused until %v, want the last 429's 1 s after 3 s", got)
		}
		time.Sleep(time.Second) // the pause is over
		after := mustAcquire(t, l)
		before[3].RateLimited(time.Second) // stale still, and now outside any pause
		if l.gen != 1 {
			t.Fatalf("a stale 429 after the pause cut again: %d cuts", l.gen)
		}
		r := l.Rate()
		after.RateLimited(time.Second)
		if l.gen != 2 || l.Rate() >= r {
			t.Fatalf("a 429 of a request sent after the cut: %d cuts, Rate() %v -> %v", l.gen, r, l.Rate())
		}
	})
}

// TestRateLimitedFloor: however many 429s, the limit stays at or above the
// floor.
func TestRateLimitedFloor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := New(16, 1)
		l.floor = 1
		prev := l.Rate()
		for i := range 40 {
			mustAcquire(t, l).RateLimited(time.Second)
			r := l.Rate()
			if r > prev || r < 1 {
				t.Fatalf("cut %d: Rate() %v -> %v, floor 1", i+1, prev, r)
			}
			prev = r
			time.Sleep(time.Second)
		}
		if prev != 1 {
			t.Fatalf("Rate() = %v after 40 cuts, want the floor 1", prev)
		}
	})
}

func TestRateLimitedPauseBounds(t *testing.T) {
	for _, tt := range []struct {
		name       string
		retryAfter time.Duration
		want       time.Duration
	}{
		{"absent Retry-After", 0, DefaultPause},
		{"negative", -time.Second, DefaultPause},
		{"honoured", 30 * time.Second, 30 * time.Second},
		{"capped", 100 * time.Hour, maxPause},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				for _, r := range []float64{10, 0} { // limited and unlimited
					l := New(r, 1)
					mustAcquire(t, l).RateLimited(tt.retryAfter)
					if got := l.notBefore.Sub(start); got != tt.want {
						t.Fatalf("rate %v: pause = %v, want %v", r, got, tt.want)
					}
				}
			})
		})
	}
}

func TestUnlimitedHonoursPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := New(0, 1)
		mustAcquire(t, l).RateLimited(2 * time.Second)
		if l.Rate() != 0 {
			t.Fatal("unlimited limiter got a rate")
		}
		mustAcquire(t, l)
		if d := time.Since(start); d != 2*time.Second {
			t.Fatalf("went after %v, want the 2 s pause", d)
		}
	})
}

// TestScheduleAfterCut follows the limit after 429s at --rate 10: the first
// cut halves it, then it ramps over 2 s after the pause to 5 % under the rate
// at which the 429 came, holds there for 20 s, then probes up by 1 % of that
// per second, up to the configured rate. A later 429 settles it straight to
// 5 % under its rate; one that comes within 5 s of the pause's end cuts
// 15 % under it and ramps back over 10 s.
func TestScheduleAfterCut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := New(10, 1)
		at := func(d time.Duration, want float64) {
			t.Helper()
			time.Sleep(time.Until(start.Add(d)))
			if got := l.Rate(); math.Abs(got-want) > 1e-9 {
				t.Fatalf("at %v: Rate() = %v, want %v", d, got, want)
			}
		}
		mustAcquire(t, l).RateLimited(time.Second) // at 0, from 10/s; the pause ends at 1 s
		at(500*time.Millisecond, 5)
		at(time.Second, 5)
		at(2*time.Second, 7.25) // half way from 5 to 9.5
		at(3*time.Second, 9.5)
		at(22*time.Second, 9.5)
		at(23*time.Second, 9.5)
		at(24*time.Second, 9.5*1.01)
		at(27*time.Second, 9.5*1.04)
		at(29*time.Second, 10) // 9.5*1.06 is past the configured rate
		at(40*time.Second, 10)

		// A 429 long after the pause: straight to 5 % under, no ramp.
		mustAcquire(t, l).RateLimited(time.Second) // at 40 s; the pause ends at 41 s
		at(40*time.Second, 9.5)
		at(41*time.Second, 9.5)
		// Sent 2 s after that pause ended: the settled rate was still too high.
		at(43*time.Second, 9.5)
		mustAcquire(t, l).RateLimited(time.Second) // the pause ends at 44 s
		at(44*time.Second, 9.5*0.85)
		at(49*time.Second, (9.5*0.85+9.5*0.95)/2)
		at(54*time.Second, 9.5*0.95)
		if l.gen != 3 {
			t.Fatalf("%d cuts, want 3", l.gen)
		}
	})
}

// TestSteepCuts: 429s that come at once after each pause (within 1 s) cut
// deeper and deeper, the quota lying far below; 429s that come soon after
// it (within 5 s) cut 15 % under only once in a row, so that the noise of a
// quota without burst does not compound.
func TestSteepCuts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := New(100, 1)
		l.floor = 1
		cut := func(after time.Duration, want float64) {
			t.Helper()
			time.Sleep(after)
			mustAcquire(t, l).RateLimited(time.Second)
			if got := l.Rate(); math.Abs(got-want) > 1e-9 {
				t.Fatalf("after cut %d: Rate() = %v, want %v", l.gen, got, want)
			}
			time.Sleep(time.Second) // to the end of the pause
		}
		// Sent at once after each pause, each at the rate the last cut left.
		r := 100.0
		for _, margin := range []float64{0.5, 0.15, 0.3, 0.5, 0.5} { // never more than half
			r *= 1 - margin
			cut(0, r)
		}
		held := r / 0.5 * 0.95 // the ramp (10 s) rises to 5 % under the rate of the last 429
		settled := held * 0.95
		cut(30*time.Second, settled) // sent after the ramp and the hold (20 s): 5 % under
		start := settled * 0.85
		cut(2*time.Second, start) // 2 s after the pause: 15 % under
		ramped := start + (settled*0.95-start)*2/10
		low := ramped * 0.95
		cut(2*time.Second, low) // 2 s after again, up the ramp: 5 % under only
		// Held 20 s, then the probe climbs at 1 % per second of the higher
		// rate held before, not of this one.
		time.Sleep(20*time.Second + 10*time.Second)
		if got, want := l.Rate(), low+0.01*held*10; math.Abs(got-want) > 1e-9 {
			t.Fatalf("probing from %v: Rate() = %v, want %v", low, got, want)
		}

		// 429s 2 s after each pause from the start, as the jitter of a quota
		// without burst gives them: steep and plain cuts take turns, none
		// deeper than 15 %, although no rate has been held yet.
		l = New(100, 1)
		l.floor = 1
		cut(0, 50)
		r = 95 * 0.85 // the 2 s ramp has reached 95
		cut(2*time.Second, r)
		r = (r + (95*0.95-r)*2/10) * 0.95
		cut(2*time.Second, r)
		r *= 0.85
		cut(2*time.Second, r)
	})
}

// TestMeasuredRate: a 429 while fewer requests go than the limit allows (too
// few workers for it) marks the rate actually sent, not the limit.
func TestMeasuredRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := New(100, 1)
		var s Sent
		for range 20 { // one request every 50 ms: 20/s
			s = mustAcquire(t, l)
			time.Sleep(50 * time.Millisecond)
		}
		s.RateLimited(time.Second)
		if got := l.Rate(); got != 10 {
			t.Fatalf("Rate() = %v after a 429 at 20/s sent, want half of it", got)
		}
		time.Sleep(3 * time.Second)
		if got := l.Rate(); got != 19 {
			t.Fatalf("Rate() = %v after the ramp, want 5 %% under 20", got)
		}

		// A busy machine delays a release now and then: eight releases at
		// 50/s with one 100 ms late measure 29/s, but that is no sign of too
		// few workers, and the limit marks where the 429 came.
		l = New(50, 1)
		for i := range 8 {
			s = mustAcquire(t, l)
			d := 20 * time.Millisecond
			if i == 3 {
				d += 100 * time.Millisecond
			}
			time.Sleep(d)
		}
		s.RateLimited(time.Second)
		if got := l.Rate(); got != 25 {
			t.Fatalf("Rate() = %v after a 429 at 50/s with one late release, want half of 50", got)
		}
	})
}

// TestWindowBound drives many waiters through ten seconds and checks the
// token-bucket promise: never more than rate+burst releases in any
// one-second window, and the full rate used.
func TestWindowBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			r     = 50
			burst = 5
			span  = 10 * time.Second
		)
		start := time.Now()
		l := New(r, burst)
		rs := simulate(t, l, 8, func(int, Sent) {}, func(rs []release) bool {
			return rs[len(rs)-1].at.Sub(start) >= span
		})
		rs = rs[:len(rs)-1] // the one past the span
		checkSpacing(t, rs, r, burst)
		if got, want := len(rs), r*int(span/time.Second)+burst; got < want-1 {
			t.Errorf("releases in %v = %d, want %d", span, got, want)
		}
	})
}

// TestClimbKeepsSpacing is the reviewer's reproduction: 16 workers at 40/s
// burst 1, one 429, then the limit climbs back: the ramp after the pause,
// the hold, and the probe up to the configured rate. Each climb once
// cancelled and re-reserved every waiter's token, which handed back more
// tokens than it took and let a burst of waiters go at once. Release times
// must stay spaced at 1/rate through every climb, and the climbs be used.
func TestClimbKeepsSpacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const r = 40
		start := time.Now()
		l := New(r, 1)
		climbed := 0
		rs := simulate(t, l, 16, func(i int, s Sent) {
			if i == 10 {
				s.RateLimited(time.Second)
			}
		}, func(rs []release) bool {
			if n := len(rs); n > 1 && rs[n-1].rate > rs[n-2].rate {
				climbed++
			}
			// The ramp takes 2 s after the 1 s pause, the hold 20 s, and
			// the probe about 5 s from 38/s (5 % under) back to 40/s.
			return rs[len(rs)-1].at.Sub(start) > 32*time.Second
		})
		checkSpacing(t, rs, r, 1)
		if climbed < 4 || rs[len(rs)-1].rate != r || l.gen != 1 {
			t.Errorf("%d cuts, climbed %d times, to %v/s: want 1 cut and back to %v/s", l.gen, climbed, rs[len(rs)-1].rate, r)
		}
		last, n := rs[len(rs)-1].at, 0
		for _, x := range rs {
			if last.Sub(x.at) < time.Second && x.rate == r {
				n++
			}
		}
		if n < r {
			t.Errorf("only %d releases in the last second at %v/s", n, r)
		}
	})
}

// TestClimbAndCutsKeepWindow runs 429s and climbs in turn, with a burst, a
// short pause (so pacing, not the pause, spaces requests after a cut), and
// checks the window bound and, at burst 1, the spacing at the rate in force.
func TestClimbAndCutsKeepWindow(t *testing.T) {
	for _, tc := range []struct {
		name    string
		r       float64
		burst   int
		workers int
	}{
		{"burst 1", 30, 1, 12},
		{"burst 4", 30, 4, 12},
		{"fractional rate", 7.5, 1, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := New(tc.r, tc.burst)
				l.maxPause = 30 * time.Millisecond
				rs := simulate(t, l, tc.workers, func(i int, s Sent) {
					if i%37 == 36 || i%53 == 52 {
						s.RateLimited(time.Hour) // capped to 30 ms
					}
				}, func(rs []release) bool { return len(rs) >= 600 })
				checkSpacing(t, rs, tc.r, tc.burst)
				if l.gen < 5 {
					t.Errorf("only %d cuts", l.gen)
				}
			})
		})
	}
}

// TestRampInSteps: along a ramp the limit changes at most every 100 ms,
// since each change wakes the head of the line to re-reserve.
func TestRampInSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := New(100, 1)
		l.maxPause = time.Nanosecond
		mustAcquire(t, l).RateLimited(0) // 100 -> 50/s, ramping to 95/s over 2 s
		rs := simulate(t, l, 8, func(int, Sent) {}, func(rs []release) bool {
			return rs[len(rs)-1].at.Sub(start) > 3*time.Second
		})
		checkSpacing(t, rs, 100, 1)
		changes := 0
		for i := 1; i < len(rs); i++ {
			if rs[i].rate != rs[i-1].rate {
				changes++
			}
		}
		if changes < 10 || changes > 20 || rs[len(rs)-1].rate != 95 {
			t.Fatalf("%d changes of the limit, ending at %v/s: want a ramp to 95/s in at most 20 steps of 100 ms", changes, rs[len(rs)-1].rate)
		}
	})
}

// TestExtremeRates checks that absurd limits saturate instead of overflowing.
func TestExtremeRates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := New(1e-15, 1000)
		for range 1000 {
			mustAcquire(t, slow)
		}
		ctx, cancel := context.WithCancel(t.Context())
		ch := acquireAsync(ctx, slow)
		time.Sleep(50 * 24 * time.Hour)
		select {
		case r := <-ch:
			t.Fatalf("after the burst, went within 50 days at 1e-15/s (%v)", r.err)
		default:
		}
		cancel()
		<-ch

		fast := New(1e12, 1)
		start := time.Now()
		for range 1000 {
			mustAcquire(t, fast)
		}
		if d := time.Since(start); d > time.Microsecond {
			t.Fatalf("1000 requests at 1e12/s took %v", d)
		}
	})
}

// TestSystemClockPacing paces twenty sequential calls at 200/s burst 1 on the
// system clock: the first goes at once, the last at least 19 intervals later.
func TestSystemClockPacing(t *testing.T) {
	ctx := t.Context()
	l := New(200, 1)
	start := time.Now()
	for range 20 {
		if _, err := l.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d < 19*5*time.Millisecond-time.Millisecond || d > 5*time.Second {
		t.Fatalf("20 calls at 200/s took %v, want about 95ms", d)
	}
}

// TestStallIsNotMadeUp: on the system clock, a waiter held up long past its
// slot (here by the limiter's lock, as a stalled machine holds it) loses
// that time: the next request still comes one interval after it, not at
// once on the bucket's timeline (which at 100/s let 103-104 calls into one
// second at the service under load).
func TestStallIsNotMadeUp(t *testing.T) {
	const interval = 100 * time.Millisecond
	l := New(10, 1)
	mustAcquire(t, l)
	start := time.Now()
	head := acquireAsync(t.Context(), l)
	for l.bucket.TokensAt(time.Now()) >= 0 { // until the head has reserved its slot
		runtime.Gosched()
	}
	l.mu.Lock()
	time.Sleep(3 * interval) // the stall, not a wait for an event
	l.mu.Unlock()
	r := <-head
	if r.err != nil {
		t.Fatal(r.err)
	}
	if late := r.at.Sub(start); late < 2*interval {
		t.Skipf("the head went %v after it queued: not held up, nothing to check", late)
	}
	mustAcquire(t, l)
	if gap := time.Since(r.at); gap < interval-lateSlack-time.Millisecond {
		t.Fatalf("the request after a stalled one went %v after it, want about %v", gap, interval)
	}
}
