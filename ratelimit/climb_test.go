package ratelimit_test

import (
	"context"
	"math"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/addrclean/addrclean/ratelimit"
	"github.com/addrclean/addrclean/ratelimit/ratelimittest"
)

// release is one return of Wait seen by a simulated worker: when, and the
// limit in force at that moment.
type release struct {
	at   time.Time
	rate float64
}

// simulate runs workers goroutines that loop on l.Wait on the fake clock and
// call answer after each release (i counts releases from 0, in release
// order). The clock moves only when every worker is parked on a timer, to
// the earliest one, so every release happens exactly when the limiter lets
// it. It stops once done reports true (checked after each release) and
// returns the releases in order.
func simulate(t *testing.T, clk *ratelimittest.Clock, l *ratelimit.Limiter, workers int,
	answer func(i int), done func(rs []release) bool) []release {
	t.Helper()
	ctx := testCtx(t)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		rs       []release
		finished bool
		wg       sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for l.Wait(wctx) == nil {
				// Every other worker is parked, so the clock reads the
				// release time and the rate is the one in force.
				mu.Lock()
				i := len(rs)
				rs = append(rs, release{at: clk.Now(), rate: l.Rate()})
				if !finished && done(rs) {
					finished = true
					cancel()
				}
				mu.Unlock()
				answer(i)
			}
		}()
	}
	for clk.BlockUntil(wctx, workers) == nil {
		d, _ := clk.Next()
		clk.Advance(d)
	}
	if ctx.Err() != nil {
		t.Fatal("the workers stopped parking on the clock")
	}
	cancel()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	out := append([]release(nil), rs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].at.Before(out[j].at) })
	return out
}

// checkSpacing asserts the pacing promise on actual release times: at burst
// 1 each release comes at least 1/rate after the one before, rate being the
// limit in force when it is let go; with any burst no one-second window
// holds more than configured rate + burst releases.
func checkSpacing(t *testing.T, rs []release, configured float64, burst int) {
	t.Helper()
	times := make([]time.Time, len(rs))
	for i, r := range rs {
		times[i] = r.at
	}
	if burst == 1 {
		bad := 0
		for i := 1; i < len(rs); i++ {
			gap := rs[i].at.Sub(rs[i-1].at)
			if gap.Seconds()*rs[i].rate < 1-1e-9 {
				if bad < 5 {
					t.Errorf("release %d at %v: %v after the previous one, below 1/%v",
						i, rs[i].at.Sub(epoch), gap, rs[i].rate)
				}
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("%d of %d releases came too close to the previous one", bad, len(rs))
		}
	}
	if got, bound := ratelimittest.MaxInWindow(times, time.Second), int(configured)+burst; got > bound {
		t.Errorf("max releases in a 1 s window = %d, want <= %d", got, bound)
	}
	if got := ratelimittest.MaxInWindow(times, time.Nanosecond); got > burst {
		t.Errorf("%d releases at one instant, burst is %d", got, burst)
	}
}

// TestClimbKeepsSpacing is the reviewer's reproduction on the fake clock: 16
// workers at 40/s burst 1, one 429, then the limit climbs back: the ramp
// after the pause, the hold, and the probe up to the configured rate. Each
// climb used to cancel and re-reserve every waiter's token, which handed
// back more tokens than it took and let a burst of waiters go at once.
// Release times must stay spaced at 1/rate through every climb.
func TestClimbKeepsSpacing(t *testing.T) {
	const (
		r       = 40
		burst   = 1
		workers = 16
	)
	clk := ratelimittest.NewClock(epoch)
	l := ratelimit.New(r, burst, ratelimit.WithClock(clk))
	climbed := 0
	rs := simulate(t, clk, l, workers, func(i int) {
		if i == 10 {
			l.OnRateLimited(time.Second)
			return
		}
	}, func(rs []release) bool {
		if n := len(rs); n > 1 && rs[n-1].rate > rs[n-2].rate {
			climbed++
		}
		// The ramp takes 2 s after the 1 s pause, the hold 20 s, and the
		// probe about 5 s from 38/s (5 % under) back to 40/s.
		return rs[len(rs)-1].at.Sub(epoch) > 32*time.Second
	})
	checkSpacing(t, rs, r, burst)
	if climbed < 4 || rs[len(rs)-1].rate != r {
		t.Errorf("climbed %d times, to %v/s: want back to %v/s", climbed, rs[len(rs)-1].rate, r)
	}
	if l.Cuts() != 1 {
		t.Errorf("Cuts() = %d, want 1", l.Cuts())
	}
	// The climbs must also be used: once back at 40/s, releases come at 40/s.
	last := rs[len(rs)-1].at
	n := 0
	for _, x := range rs {
		if last.Sub(x.at) < time.Second && x.rate == r {
			n++
		}
	}
	if n < r-1 {
		t.Errorf("only %d releases in the last second at %v/s", n, r)
	}
}

// TestClimbAndCutsKeepWindow runs 429s and climbs in turn, with a burst, a
// short pause (so pacing, not the pause, spaces requests after a cut) and
// climbs every few successes, and checks the window bound and, at burst 1,
// the spacing at the rate in force.
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
			clk := ratelimittest.NewClock(epoch)
			l := ratelimit.New(tc.r, tc.burst, ratelimit.WithClock(clk),
				ratelimit.WithMaxPause(30*time.Millisecond))
			rs := simulate(t, clk, l, tc.workers, func(i int) {
				if i%37 == 36 || i%53 == 52 {
					l.OnRateLimited(time.Hour) // capped to 30 ms
					return
				}
			}, func(rs []release) bool { return len(rs) >= 600 })
			checkSpacing(t, rs, tc.r, tc.burst)
			if l.Cuts() < 5 {
				t.Errorf("only %d cuts", l.Cuts())
			}
		})
	}
}

// TestClimbMovesOnlyFutureSlots checks what a rise of the limit does to
// waiters already queued: nobody is let go early, the queue moves up to the
// new limit from the last release, and each release still comes at least
// one interval of the limit in force after the one before.
func TestClimbMovesOnlyFutureSlots(t *testing.T) {
	ctx := testCtx(t)
	clk := ratelimittest.NewClock(epoch)
	l := ratelimit.New(10, 1, ratelimit.WithClock(clk), ratelimit.WithMaxPause(time.Nanosecond))
	l.OnRateLimited(0) // 10 -> 5/s, pause of 1 ns, then a ramp towards 9.5/s
	clk.Advance(time.Nanosecond)
	if err := l.Wait(ctx); err != nil { // from the full bucket, at 5/s
		t.Fatal(err)
	}
	last := clk.Now()
	var chans []<-chan error
	for i := 1; i <= 3; i++ { // at 5/s: 200, 400, 600 ms
		chans = append(chans, waitAsync(ctx, l))
		if err := clk.BlockUntil(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	if err := clk.Await(ctx, func(p []time.Duration) bool {
		return equalDurations(p, []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 600 * time.Millisecond})
	}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(100 * time.Millisecond) // half of the 200 ms wait has passed
	r := l.Rate()                       // the ramp has raised the limit
	if r <= 5 {
		t.Fatalf("Rate() = %v 100 ms into the ramp, want above 5", r)
	}
	for _, ch := range chans {
		notReturned(t, ch)
	}
	// The half token still missing now comes at the new rate; the next ones
	// follow one new interval apart.
	interval := time.Duration(math.Ceil(1e9 / r))
	half := time.Duration(math.Ceil(float64(100*time.Millisecond) * 5 / r))
	want := []time.Duration{half, half + interval, half + 2*interval}
	if err := clk.Await(ctx, func(p []time.Duration) bool { return nearDurations(p, want, 2) }); err != nil {
		t.Fatalf("after the rise to %v/s: %v", r, err)
	}
	for i := range chans {
		d, _ := clk.Next()
		clk.Advance(d - time.Nanosecond)
		for _, ch := range chans {
			if ch != nil {
				notReturned(t, ch)
			}
		}
		clk.Advance(time.Nanosecond)
		if err := mustReturnAny(t, ctx, chans); err != nil {
			t.Fatal(err)
		}
		now, rate := clk.Now(), l.Rate()
		if gap := now.Sub(last); gap.Seconds()*rate < 1-1e-9 {
			t.Errorf("release %d came %v after the one before, at %v/s", i+1, gap, rate)
		}
		last = now
	}
}

// nearDurations reports whether a and b are as long and each pair differs by
// at most slack nanoseconds (rounding of re-priced intervals).
func nearDurations(a, b []time.Duration, slack time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if d := a[i] - b[i]; d > slack || d < -slack {
			return false
		}
	}
	return true
}

// mustReturnAny waits for one of the Waits in chans to return, and clears its
// entry.
func mustReturnAny(t *testing.T, ctx context.Context, chans []<-chan error) error {
	t.Helper()
	for {
		for i, ch := range chans {
			if ch == nil {
				continue
			}
			select {
			case err := <-ch:
				chans[i] = nil
				return err
			default:
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal("no Wait returned")
		case <-time.After(time.Millisecond):
		}
	}
}

// TestSystemClockPacing paces twenty sequential calls at 200/s burst 1 on the
// system clock, where the waiter due next wakes early and waits out the rest
// of its slot precisely. The first goes at once, the last at least 19
// intervals later.
func TestSystemClockPacing(t *testing.T) {
	ctx := testCtx(t)
	l := ratelimit.New(200, 1)
	start := time.Now()
	for i := 0; i < 20; i++ {
		if err := l.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d < 19*5*time.Millisecond || d > 5*time.Second {
		t.Fatalf("20 calls at 200/s took %v, want about 95ms", d)
	}
	// A Wait cancelled while it waits gives up at once.
	wctx, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	l = ratelimit.New(1, 1)
	if err := l.Wait(wctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Wait(wctx); err == nil {
		t.Fatal("second Wait at 1/s did not fail on its context")
	}
}

// TestExtremeRates checks that absurd limits saturate instead of overflowing.
func TestExtremeRates(t *testing.T) {
	ctx := testCtx(t)
	clk := ratelimittest.NewClock(epoch)
	slow := ratelimit.New(1e-15, 1000, ratelimit.WithClock(clk))
	for i := 0; i < 1000; i++ {
		if err := slow.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	ch := waitAsync(ctx, slow)
	if err := clk.BlockUntil(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if d, _ := clk.Next(); d < 50*24*time.Hour {
		t.Fatalf("after the burst, next slot in %v at 1e-15/s", d)
	}
	slow.OnRateLimited(time.Second)
	for i := 0; i < 100; i++ {
	}
	notReturned(t, ch)

	fast := ratelimit.New(1e12, 1, ratelimit.WithClock(clk))
	if err := fast.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	ch = waitAsync(ctx, fast)
	if err := clk.AwaitTimer(ctx, time.Nanosecond); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Nanosecond)
	if err := mustReturn(t, ctx, ch); err != nil {
		t.Fatal(err)
	}
}

// TestCutSpacesFromLastRelease: a 429 that arrives when the bucket is already
// full again, with a pause shorter than the new interval, must not let the
// next request go sooner than one new interval after the last release.
func TestCutSpacesFromLastRelease(t *testing.T) {
	ctx := testCtx(t)
	clk := ratelimittest.NewClock(epoch)
	l := ratelimit.New(10, 1, ratelimit.WithClock(clk), ratelimit.WithMaxPause(time.Nanosecond))
	if err := l.Wait(ctx); err != nil { // t=0
		t.Fatal(err)
	}
	clk.Advance(150 * time.Millisecond) // a token is back at 100 ms
	l.OnRateLimited(0)                  // 10 -> 5/s: 200 ms from the last release
	clk.Advance(time.Nanosecond)        // the pause is over
	ch := waitAsync(ctx, l)
	parked := make(chan error, 1)
	go func() { parked <- clk.BlockUntil(ctx, 1) }()
	select {
	case err := <-ch:
		t.Fatalf("went at once (%v), 150ms after the last release", err)
	case err := <-parked:
		if err != nil {
			t.Fatal(err)
		}
	}
	if d, _ := clk.Next(); d != 50*time.Millisecond-time.Nanosecond {
		t.Fatalf("next request %v after the last one, want 200ms", 150*time.Millisecond+time.Nanosecond+d)
	}
	clk.Advance(50*time.Millisecond - 2*time.Nanosecond)
	notReturned(t, ch)
	clk.Advance(time.Nanosecond)
	if err := mustReturn(t, ctx, ch); err != nil {
		t.Fatal(err)
	}
}

// TestRampInSteps: along a ramp the limit changes at most every 100 ms. Each
// change re-arms every waiter; on the system clock each waiter woken for it
// read a later time, changed the limit again and woke the others: 2.5 ms of
// CPU per release instead of 0.8 at 47/s with 8 workers.
func TestRampInSteps(t *testing.T) {
	clk := ratelimittest.NewClock(epoch)
	l := ratelimit.New(100, 1, ratelimit.WithClock(clk), ratelimit.WithMaxPause(time.Nanosecond))
	l.OnRateLimited(0) // 100 -> 50/s, ramping to 95/s over 2 s
	rs := simulate(t, clk, l, 8, func(int) {}, func(rs []release) bool {
		return rs[len(rs)-1].at.Sub(epoch) > 3*time.Second
	})
	checkSpacing(t, rs, 100, 1)
	var changes []time.Time
	for i := 1; i < len(rs); i++ {
		if rs[i].rate != rs[i-1].rate {
			changes = append(changes, rs[i].at)
		}
	}
	if len(changes) < 10 || rs[len(rs)-1].rate != 95 {
		t.Fatalf("%d changes of the limit, ending at %v/s: want a ramp to 95/s", len(changes), rs[len(rs)-1].rate)
	}
	if len(changes) > 20 { // 2 s of ramp in steps of 100 ms
		t.Errorf("%d changes of the limit along a 2 s ramp, want at most 20", len(changes))
	}
}
