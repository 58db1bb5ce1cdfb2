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
	l.OnSuccess()
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
	// others at the halved rate, 200 ms apart.
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
	for _, left := range [][]time.Duration{{200 * time.Millisecond, 400 * time.Millisecond}, {200 * time.Millisecond}} {
		if err := clk.Await(ctx, func(p []time.Duration) bool { return equalDurations(p, left) }); err != nil {
			t.Fatal(err)
		}
		clk.Advance(200 * time.Millisecond)
		next()
	}
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

func TestRateLimitedFloorAndNoDoubleCut(t *testing.T) {
	clk := ratelimittest.NewClock(epoch)
	l := ratelimit.New(16, 1, ratelimit.WithClock(clk))
	want := []float64{8, 4, 2, 1, 1, 1}
	for i, w := range want {
		l.OnRateLimited(time.Second)
		// 429s of requests sent before the cut arrive during the pause: they
		// must not cut again.
		l.OnRateLimited(2 * time.Second)
		if got := l.Rate(); got != w {
			t.Fatalf("cut %d: Rate() = %v, want %v", i, got, w)
		}
		if got := l.PausedUntil().Sub(clk.Now()); got != 2*time.Second {
			t.Fatalf("cut %d: pause = %v, want 2s", i, got)
		}
		clk.Advance(2 * time.Second)
	}
	if got := l.Cuts(); got != int64(len(want)) {
		t.Fatalf("Cuts() = %d, want %d", got, len(want))
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

func TestOnSuccessClimbs(t *testing.T) {
	clk := ratelimittest.NewClock(epoch)
	l := ratelimit.New(10, 1, ratelimit.WithClock(clk), ratelimit.WithClimb(5, 1.5), ratelimit.WithFloor(1))
	l.OnRateLimited(time.Second)
	l.OnRateLimited(0) // inside the pause: no second cut
	clk.Advance(time.Second)
	l.OnRateLimited(time.Second)
	if got := l.Rate(); got != 2.5 {
		t.Fatalf("Rate() = %v, want 2.5", got)
	}
	steps := []float64{3.75, 5.625, 8.4375, 10}
	for i, w := range steps {
		for j := 0; j < 4; j++ {
			l.OnSuccess()
		}
		if got := l.Rate(); got == w {
			t.Fatalf("step %d: climbed before 5 successes", i)
		}
		l.OnSuccess()
		if got := l.Rate(); got != w {
			t.Fatalf("step %d: Rate() = %v, want %v", i, got, w)
		}
	}
	for i := 0; i < 50; i++ {
		l.OnSuccess()
	}
	if got := l.Rate(); got != 10 {
		t.Fatalf("Rate() = %v, climbed past the configured 10", got)
	}
	// A 429 resets the run of successes.
	clk.Advance(time.Second)
	l.OnRateLimited(time.Second)
	for i := 0; i < 4; i++ {
		l.OnSuccess()
	}
	clk.Advance(time.Second)
	l.OnRateLimited(time.Second)
	for i := 0; i < 4; i++ {
		l.OnSuccess()
	}
	if got := l.Rate(); got != 2.5 {
		t.Fatalf("Rate() = %v, want 2.5", got)
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
