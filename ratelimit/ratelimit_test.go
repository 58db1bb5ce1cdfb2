package ratelimit_test

import (
	"context"
	"errors"
	"math"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/addrclean/addrclean/ratelimit"
	"github.com/addrclean/addrclean/ratelimit/ratelimittest"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitAsync starts l.Wait in a goroutine and returns its result channel.
func waitAsync(ctx context.Context, l *ratelimit.Limiter) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- l.Wait(ctx) }()
	return ch
}

func mustReturn(t *testing.T, ctx context.Context, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		t.Fatal("Wait did not return")
		return nil
	}
}

func notReturned(t *testing.T, ch <-chan error) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("Wait returned early (%v)", err)
	default:
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name      string
		rate      float64
		burst     int
		wantRate  float64
		wantBurst int
	}{
		{"plain", 20, 1, 20, 1},
		{"burst zero becomes one", 20, 0, 20, 1},
		{"negative burst", 5, -3, 5, 1},
		{"zero rate is unlimited", 0, 4, 0, 4},
		{"negative rate is unlimited", -1, 1, 0, 1},
		{"NaN is unlimited", math.NaN(), 1, 0, 1},
		{"Inf is unlimited", math.Inf(1), 1, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := ratelimit.New(tt.rate, tt.burst)
			if got := l.Rate(); got != tt.wantRate {
				t.Errorf("Rate() = %v, want %v", got, tt.wantRate)
			}
			if got := l.Configured(); got != tt.wantRate {
				t.Errorf("Configured() = %v, want %v", got, tt.wantRate)
			}
			if got := l.Burst(); got != tt.wantBurst {
				t.Errorf("Burst() = %v, want %v", got, tt.wantBurst)
			}
		})
	}
}

func TestNilLimiter(t *testing.T) {
	var l *ratelimit.Limiter
	if err := l.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.OnRateLimited(time.Second)
	s, err := l.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s.RateLimited(time.Second)
	var zero ratelimit.Sent
	zero.RateLimited(time.Second)
	if l.Rate() != 0 || l.Burst() != 0 || l.Cuts() != 0 || !l.PausedUntil().IsZero() || l.Configured() != 0 {
		t.Fatal("nil limiter reports state")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait on cancelled ctx = %v", err)
	}
}

func TestUnlimitedNeverWaits(t *testing.T) {
	clk := ratelimittest.NewClock(epoch)
	l := ratelimit.New(0, 1, ratelimit.WithClock(clk))
	for i := 0; i < 1000; i++ {
		if err := l.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if clk.Pending() != 0 {
		t.Fatal("unlimited limiter set a timer")
	}
}

func TestPacing(t *testing.T) {
	tests := []struct {
		name      string
		rate      float64
		burst     int
		wantDelay time.Duration
	}{
		{"10/s burst 1", 10, 1, 100 * time.Millisecond},
		{"10/s burst 3", 10, 3, 100 * time.Millisecond},
		{"4/s burst 2", 4, 2, 250 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			clk := ratelimittest.NewClock(epoch)
			l := ratelimit.New(tt.rate, tt.burst, ratelimit.WithClock(clk))
			for i := 0; i < tt.burst; i++ { // the bucket starts full
				if err := l.Wait(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if clk.Pending() != 0 {
				t.Fatal("burst requests waited")
			}
			ch := waitAsync(ctx, l)
			if err := clk.AwaitTimer(ctx, tt.wantDelay); err != nil {
				t.Fatal(err)
			}
			clk.Advance(tt.wantDelay - time.Millisecond)
			notReturned(t, ch)
			clk.Advance(time.Millisecond)
			if err := mustReturn(t, ctx, ch); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestWaitCancelled(t *testing.T) {
	ctx := testCtx(t)
	clk := ratelimittest.NewClock(epoch)
	l := ratelimit.New(1, 1, ratelimit.WithClock(clk))
	if err := l.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	ch := waitAsync(wctx, l)
	if err := clk.BlockUntil(ctx, 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := mustReturn(t, ctx, ch); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// The cancelled Wait took nothing from the bucket: one second on, a token
	// waits.
	clk.Advance(time.Second)
	if err := l.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if clk.Pending() != 0 {
		t.Fatal("token was not restored")
	}
}

func TestRateLimitedWakesWaiters(t *testing.T) {
	ctx := testCtx(t)
	clk := ratelimittest.NewClock(epoch)
	l := ratelimit.New(10, 1, ratelimit.WithClock(clk))
	if err := l.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	// Three workers wait on the bucket, 100, 200 and 300 ms out.
	var chans []<-chan error
	for i := 1; i <= 3; i++ {
		chans = append(chans, waitAsync(ctx, l))
		if err := clk.BlockUntil(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	l.OnRateLimited(5 * time.Second)
	if got := l.Rate(); got != 5 {
		t.Fatalf("Rate() after 429 = %v, want 5", got)
	}
	if got := l.PausedUntil(); !got.Equal(epoch.Add(5 * time.Second)) {
		t.Fatalf("PausedUntil = %v", got)
	}
	// Every waiter re-plans onto the shared pause; none keeps its old slot.
	if err := clk.Await(ctx, func(p []time.Duration) bool {
		return len(p) == 3 && p[0] == 5*time.Second && p[2] == 5*time.Second
	}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(5*time.Second - time.Millisecond)
	for _, ch := range chans {
		notReturned(t, ch)
	}
	clk.Advance(time.Millisecond)
	// After the pause the bucket (burst 1) lets one through at once and the
	// others one interval of the limit in force apart: the halved rate,
	// 200 ms, then a little less as the limit ramps up again.
	next := func() {
		t.Helper()
		select {
		case err := <-chans[0]:
			chans[0] = nil
			if err != nil {
				t.Fatal(err)
			}
		case err := <-chans[1]:
			chans[1] = nil
			if err != nil {
				t.Fatal(err)
			}
		case err := <-chans[2]:
			chans[2] = nil
			if err != nil {
				t.Fatal(err)
			}
		case <-ctx.Done():
			t.Fatal("no waiter released")
		}
	}
	next()
	if err := clk.Await(ctx, func(p []time.Duration) bool {
		return equalDurations(p, []time.Duration{200 * time.Millisecond, 400 * time.Millisecond})
	}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(200 * time.Millisecond)
	next()
	r := l.Rate()
	if r <= 5 || r >= 10 {
		t.Fatalf("Rate() = %v 200 ms after the pause, want between the cut 5 and the configured 10", r)
	}
	last := time.Duration(math.Ceil(1e9 / r))
	if err := clk.Await(ctx, func(p []time.Duration) bool { return equalDurations(p, []time.Duration{last}) }); err != nil {
		t.Fatal(err)
	}
	clk.Advance(last)
	next()
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestRateLimitedNoDoubleCut: a 429 cuts the limit once; 429s of requests
// sent before that cut (their Sent says so) or, for callers that cannot say,
// arriving during its pause, only extend the pause.
func TestRateLimitedNoDoubleCut(t *testing.T) {
	ctx := testCtx(t)
	clk := ratelimittest.NewClock(epoch)
	l := ratelimit.New(16, 4, ratelimit.WithClock(clk))
	var before []ratelimit.Sent
	for i := 0; i < 4; i++ { // the bucket's burst: in flight together
		s, err := l.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, s)
	}
	before[0].RateLimited(time.Second)
	if got := l.Rate(); got != 8 {
		t.Fatalf("first cut: Rate() = %v, want 8", got)
	}
	before[1].RateLimited(2 * time.Second) // sent before the cut
	clk.Advance(3 * time.Second)           // past the pause: the Sent still says
	before[2].RateLimited(time.Second)
	if got := l.Cuts(); got != 1 {
		t.Fatalf("429s of requests sent before the cut cut again: Cuts() = %d", got)
	}
	if got := l.PausedUntil(); !got.Equal(epoch.Add(4 * time.Second)) {
		t.Fatalf("PausedUntil = %v, want the last 429's 1 s after 3 s", got.Sub(epoch))
	}
	l.OnRateLimited(time.Second) // unknown sending time, during the pause
	if got := l.Cuts(); got != 1 {
		t.Fatalf("a 429 during the pause cut again: Cuts() = %d", got)
	}
	clk.Advance(2 * time.Second) // the pause is over
	after, err := l.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before[3].RateLimited(time.Second) // stale still, and now outside any pause
	if got := l.Cuts(); got != 1 {
		t.Fatalf("a stale 429 after the pause cut again: Cuts() = %d", got)
	}
	r := l.Rate()
	after.RateLimited(time.Second)
	if got := l.Cuts(); got != 2 || l.Rate() >= r {
		t.Fatalf("a 429 of a request sent after the cut: Cuts() = %d, Rate() %v -> %v", got, r, l.Rate())
	}
}

// TestRateLimitedFloor: however many 429s, the limit stays at or above the
// floor.
func TestRateLimitedFloor(t *testing.T) {
	ctx := testCtx(t)
	clk := ratelimittest.NewClock(epoch)
	l := ratelimit.New(16, 1, ratelimit.WithClock(clk), ratelimit.WithFloor(1))
	prev := l.Rate()
	for i := 0; i < 40; i++ {
		s, err := l.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s.RateLimited(time.Second)
		r := l.Rate()
		if r > prev || r < 1 {
			t.Fatalf("cut %d: Rate() %v -> %v, floor 1", i+1, prev, r)
		}
		prev = r
		clk.Advance(time.Second)
	}
	if prev != 1 {
		t.Fatalf("Rate() = %v after 40 cuts, want the floor 1", prev)
	}
}

func TestRateLimitedPauseBounds(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter time.Duration
		opts       []ratelimit.Option
		want       time.Duration
	}{
		{"absent Retry-After", 0, nil, ratelimit.DefaultPause},
		{"negative", -time.Second, nil, ratelimit.DefaultPause},
		{"honoured", 30 * time.Second, nil, 30 * time.Second},
		{"capped", 100 * time.Hour, nil, ratelimit.DefaultMaxPause},
		{"custom cap", time.Hour, []ratelimit.Option{ratelimit.WithMaxPause(time.Minute)}, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := ratelimittest.NewClock(epoch)
			l := ratelimit.New(10, 1, append(tt.opts, ratelimit.WithClock(clk))...)
			l.OnRateLimited(tt.retryAfter)
			if got := l.PausedUntil().Sub(epoch); got != tt.want {
				t.Fatalf("pause = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestUnlimitedHonoursPause(t *testing.T) {
	ctx := testCtx(t)
	clk := ratelimittest.NewClock(epoch)
	l := ratelimit.New(0, 1, ratelimit.WithClock(clk))
	l.OnRateLimited(2 * time.Second)
	if l.Rate() != 0 {
		t.Fatal("unlimited limiter got a rate")
	}
	ch := waitAsync(ctx, l)
	if err := clk.AwaitTimer(ctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Second)
	if err := mustReturn(t, ctx, ch); err != nil {
		t.Fatal(err)
	}
}

// TestScheduleAfterCut follows the limit after 429s at --rate 10: the first
// cut halves it, then it ramps over 2 s after the pause to 5 % under the rate
// at which the 429 came, holds there for 20 s, then probes up by 1 % of that
// per second, up to the configured rate. A later 429 settles it straight to
// 5 % under its rate; one that comes within 5 s of the pause's end cuts
// 15 % under it and ramps back over 10 s.
func TestScheduleAfterCut(t *testing.T) {
	ctx := testCtx(t)
	clk := ratelimittest.NewClock(epoch)
	l := ratelimit.New(10, 1, ratelimit.WithClock(clk))
	at := func(d time.Duration, want float64) {
		t.Helper()
		clk.Advance(epoch.Add(d).Sub(clk.Now()))
		if got := l.Rate(); math.Abs(got-want) > 1e-9 {
			t.Fatalf("at %v: Rate() = %v, want %v", d, got, want)
		}
	}
	s, err := l.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.RateLimited(time.Second) // at 0, from 10/s; the pause ends at 1 s
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
	if s, err = l.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	s.RateLimited(time.Second) // at 40 s; the pause ends at 41 s
	at(40*time.Second, 9.5)
	at(41*time.Second, 9.5)
	// Sent 2 s after that pause ended: the settled rate was still too high.
	at(43*time.Second, 9.5)
	if s, err = l.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	s.RateLimited(time.Second) // the pause ends at 44 s
	at(44*time.Second, 9.5*0.85)
	at(49*time.Second, (9.5*0.85+9.5*0.95)/2)
	at(54*time.Second, 9.5*0.95)
	if got := l.Cuts(); got != 3 {
		t.Fatalf("Cuts() = %d, want 3", got)
	}
}

// TestSteepCuts: 429s that come at once after each pause (within 1 s) cut
// deeper and deeper, the quota lying far below; 429s that come soon after
// it (within 5 s) cut 15 % under only once in a row, so that the noise of a
// quota without burst does not compound.
func TestSteepCuts(t *testing.T) {
	ctx := testCtx(t)
	clk := ratelimittest.NewClock(epoch)
	l := ratelimit.New(100, 1, ratelimit.WithClock(clk), ratelimit.WithFloor(1))
	cut := func(after time.Duration, want float64) {
		t.Helper()
		clk.Advance(after)
		s, err := l.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s.RateLimited(time.Second)
		if got := l.Rate(); math.Abs(got-want) > 1e-9 {
			t.Fatalf("after cut %d: Rate() = %v, want %v", l.Cuts(), got, want)
		}
		clk.Advance(time.Second) // to the end of the pause
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
	clk.Advance(20*time.Second + 10*time.Second)
	if got, want := l.Rate(), low+0.01*held*10; math.Abs(got-want) > 1e-9 {
		t.Fatalf("probing from %v: Rate() = %v, want %v", low, got, want)
	}

	// 429s 2 s after each pause from the start, as the jitter of a quota
	// without burst gives them: steep and plain cuts take turns, none
	// deeper than 15 %, although no rate has been held yet.
	l = ratelimit.New(100, 1, ratelimit.WithClock(clk), ratelimit.WithFloor(1))
	cut(0, 50)
	r = 95 * 0.85 // the 2 s ramp has reached 95
	cut(2*time.Second, r)
	r = (r + (95*0.95-r)*2/10) * 0.95
	cut(2*time.Second, r)
	r *= 0.85
	cut(2*time.Second, r)
}

// TestMeasuredRate: a 429 while fewer requests go than the limit allows (too
// few workers for it) marks the rate actually sent, not the limit.
func TestMeasuredRate(t *testing.T) {
	ctx := testCtx(t)
	clk := ratelimittest.NewClock(epoch)
	l := ratelimit.New(100, 1, ratelimit.WithClock(clk))
	var s ratelimit.Sent
	for i := 0; i < 20; i++ { // one request every 50 ms: 20/s
		var err error
		if s, err = l.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		clk.Advance(50 * time.Millisecond)
	}
	s.RateLimited(time.Second)
	if got := l.Rate(); got != 10 {
		t.Fatalf("Rate() = %v after a 429 at 20/s sent, want half of it", got)
	}
	clk.Advance(3 * time.Second)
	if got := l.Rate(); got != 19 {
		t.Fatalf("Rate() = %v after the ramp, want 5 %% under 20", got)
	}

	// A busy machine delays a release now and then: eight releases at
	// 50/s with one 100 ms late measure 29/s, but that is no sign of too
	// few workers, and the limit marks where the 429 came.
	l = ratelimit.New(50, 1, ratelimit.WithClock(clk))
	for i := 0; i < 8; i++ {
		var err error
		if s, err = l.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		d := 20 * time.Millisecond
		if i == 3 {
			d += 100 * time.Millisecond
		}
		clk.Advance(d)
	}
	s.RateLimited(time.Second)
	if got := l.Rate(); got != 25 {
		t.Fatalf("Rate() = %v after a 429 at 50/s with one late release, want half of 50", got)
	}
}

// TestWindowBound drives many waiters on a fake clock through ten simulated
// seconds and checks the token-bucket promise: never more than rate+burst
// grants in any one-second window, and the full rate used.
func TestWindowBound(t *testing.T) {
	const (
		r       = 50
		burst   = 5
		workers = 8
		span    = 10 * time.Second
	)
	ctx := testCtx(t)
	clk := ratelimittest.NewClock(epoch)
	l := ratelimit.New(r, burst, ratelimit.WithClock(clk))
	var (
		mu    sync.Mutex
		times []time.Time
	)
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for l.Wait(wctx) == nil {
				mu.Lock()
				times = append(times, clk.Now())
				mu.Unlock()
			}
		}()
	}
	for clk.Now().Sub(epoch) < span {
		// Every worker is parked on a timer: the system is quiescent.
		if err := clk.BlockUntil(ctx, workers); err != nil {
			t.Fatal(err)
		}
		d, _ := clk.Next()
		clk.Advance(d)
		// Wait for the released waiter to record and park again.
		if err := clk.BlockUntil(ctx, workers); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	wg.Wait()
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	var inSpan []time.Time
	for _, ts := range times {
		if ts.Sub(epoch) < span {
			inSpan = append(inSpan, ts)
		}
	}
	if got := ratelimittest.MaxInWindow(inSpan, time.Second); got > r+burst {
		t.Errorf("max per 1 s window = %d, want <= %d", got, r+burst)
	}
	if got, want := len(inSpan), r*int(span/time.Second)+burst-1; got < want {
		t.Errorf("grants in %v = %d, want >= %d", span, got, want)
	}
}

// TestLateWakersStaySpaced wakes ten waiters late, all at once (as a busy
// machine does). The bucket is charged when a request goes, at the time it
// goes, so the lateness is not made up with a burst: one goes at once and the
// others follow one interval apart.
func TestLateWakersStaySpaced(t *testing.T) {
	ctx := testCtx(t)
	clk := ratelimittest.NewClock(epoch)
	l := ratelimit.New(10, 1, ratelimit.WithClock(clk))
	if err := l.Wait(ctx); err != nil { // t=0, from the full bucket
		t.Fatal(err)
	}
	var chans []<-chan error
	for i := 1; i <= 10; i++ { // slots at 100ms, 200ms ... 1s
		chans = append(chans, waitAsync(ctx, l))
		if err := clk.BlockUntil(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(time.Second) // every one of them wakes at t=1s
	if err := mustReturnAny(t, ctx, chans); err != nil {
		t.Fatal(err)
	}
	for left := 9; left > 0; left-- {
		want := make([]time.Duration, left)
		for i := range want {
			want[i] = time.Duration(i+1) * 100 * time.Millisecond
		}
		if err := clk.Await(ctx, func(p []time.Duration) bool { return equalDurations(p, want) }); err != nil {
			t.Fatalf("%d left: %v", left, err)
		}
		for _, ch := range chans {
			if ch != nil {
				notReturned(t, ch)
			}
		}
		clk.Advance(100 * time.Millisecond)
		if err := mustReturnAny(t, ctx, chans); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWindowBoundCoarseClock is TestWindowBound with a clock that jumps
// further than the next timer, so that waiters always wake late. At every
// reading of the clock the limiter must let go exactly what a token bucket
// (burst tokens, refilled at the rate, charged at the actual release times)
// holds: no more, which keeps the window bound, and no less, which is the
// utilisation.
func TestWindowBoundCoarseClock(t *testing.T) {
	const (
		r        = 20
		burst    = 2
		workers  = 6
		span     = 10 * time.Second
		interval = time.Second / r
	)
	ctx := testCtx(t)
	clk := ratelimittest.NewClock(epoch)
	l := ratelimit.New(r, burst, ratelimit.WithClock(clk))
	var (
		mu    sync.Mutex
		times []time.Time
	)
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for l.Wait(wctx) == nil {
				mu.Lock()
				times = append(times, clk.Now())
				mu.Unlock()
			}
		}()
	}
	readings := []time.Time{epoch}
	jumps := []time.Duration{130 * time.Millisecond, 7 * time.Millisecond, 260 * time.Millisecond, 45 * time.Millisecond}
	for i := 0; clk.Now().Sub(epoch) < span; i++ {
		if err := clk.BlockUntil(ctx, workers); err != nil {
			t.Fatal(err)
		}
		d, _ := clk.Next()
		clk.Advance(max(d, jumps[i%len(jumps)]))
		readings = append(readings, clk.Now())
	}
	if err := clk.BlockUntil(ctx, workers); err != nil {
		t.Fatal(err)
	}
	cancel()
	wg.Wait()
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	if got := ratelimittest.MaxInWindow(times, time.Second); got > r+burst {
		t.Errorf("max per 1 s window = %d, want <= %d", got, r+burst)
	}
	got := map[time.Time]int{}
	for _, ts := range times {
		got[ts]++
	}
	credit := burst * interval // the bucket in time units: one token per interval
	want := 0
	for i, ts := range readings {
		if i > 0 {
			credit = min(credit+ts.Sub(readings[i-1]), burst*interval)
		}
		n := int(credit / interval)
		credit -= time.Duration(n) * interval
		want += n
		if got[ts] != n {
			t.Errorf("at %v: %d released, a token bucket holds %d", ts.Sub(epoch), got[ts], n)
		}
	}
	if len(times) != want {
		t.Errorf("%d releases, a token bucket holds %d", len(times), want)
	}
}
