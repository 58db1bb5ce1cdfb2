package ratelimit

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"
)

// Defaults of the adaptive behaviour; options override them.
const (
	// DefaultFloorDivisor bounds how far repeated 429 answers cut the limit:
	// never below the configured rate divided by this.
	DefaultFloorDivisor = 16
	// DefaultClimbAfter is how many successes in a row raise a cut limit one step.
	DefaultClimbAfter = 20
	// DefaultClimbFactor is the step by which a cut limit climbs back.
	DefaultClimbFactor = 1.25
	// DefaultPause is the shared pause after a 429 that carried no Retry-After.
	DefaultPause = time.Second
	// DefaultMaxPause caps the shared pause a single Retry-After can impose.
	DefaultMaxPause = 10 * time.Minute
)

// Clock is the time source of a Limiter; tests inject a fake one.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Timer returns a channel that receives once d has passed, and a function
	// that stops the timer early.
	Timer(d time.Duration) (<-chan time.Time, func() bool)
}

type realClock struct{}

// realTimerLead is how early a waiter whose lateness would cost capacity sets
// its timer on the system clock, to wait out the rest precisely. Go timers on
// Linux fire up to about a millisecond late (the poller sleeps whole
// milliseconds); at burst 1 every such delay is a slot lost for good, about
// 2% of the rate at 100/s.
const realTimerLead = 1500 * time.Microsecond

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Timer(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

// Option adjusts a Limiter built by New.
type Option func(*Limiter)

// WithClock makes the Limiter read time from c instead of the system clock.
func WithClock(c Clock) Option {
	return func(l *Limiter) {
		if c != nil {
			l.clock = c
		}
	}
}

// WithFloor sets the lowest rate (requests per second) that 429 answers can
// cut the limit to; values <= 0 keep the default (configured rate / 16).
func WithFloor(r float64) Option {
	return func(l *Limiter) {
		if r > 0 {
			l.floor = r
		}
	}
}

// WithClimb sets how many successes in a row raise a cut limit, and by which
// factor (> 1) each step raises it.
func WithClimb(after int, factor float64) Option {
	return func(l *Limiter) {
		if after > 0 {
			l.climbAfter = after
		}
		if factor > 1 && !math.IsInf(factor, 0) {
			l.climbFactor = factor
		}
	}
}

// WithMaxPause caps the shared pause one Retry-After can impose on every
// worker, so a wild header value cannot stall a run for hours.
func WithMaxPause(d time.Duration) Option {
	return func(l *Limiter) {
		if d > 0 {
			l.maxPause = d
		}
	}
}

// Limiter paces requests for every worker of a run. It is a token bucket of
// burst tokens refilled at the current limit, which 429 answers cut and
// successes raise back, plus a shared "not before" time that honours
// Retry-After. A nil *Limiter never waits. Its methods are safe for
// concurrent use.
//
// The bucket is charged when a request is let go, at the time it is let go,
// and never in advance: nothing is reserved, so nothing is ever given back,
// and a change of the limit moves only the slots of requests still waiting.
// Hence, whatever the cuts, climbs and late wake-ups, no one-second window
// holds more than the configured rate plus burst releases, and at burst 1
// each release comes at least 1/limit after the one before it.
type Limiter struct {
	clock       Clock
	configured  float64 // the --rate asked for; +Inf when unlimited
	burst       int
	floor       float64
	climbAfter  int
	climbFactor float64
	maxPause    time.Duration
	// lead is realTimerLead on the system clock, 0 on any other: a fake
	// clock fires timers exactly and does not move while a waiter spins.
	lead time.Duration

	mu       sync.Mutex
	current  float64       // the limit in force; +Inf when unlimited
	interval time.Duration // 1/current, rounded up; 0 when unlimited
	// full is when the bucket is full again (the theoretical arrival time
	// of the generic cell rate algorithm): at time t >= full it holds burst
	// tokens, before that burst - (full-t)/interval. Charging a release
	// moves it one interval on from max(full, now).
	full time.Time
	// lastAt is the last release; lastDebt was full-lastAt right after it,
	// under lastInterval. A cut re-prices the bucket from there.
	lastAt       time.Time
	lastDebt     time.Duration
	lastInterval time.Duration
	notBefore    time.Time
	successes    int
	cuts         int64
	// queue holds the waiters in the order they came; the k-th (from 0)
	// may go once the bucket holds k+1 tokens.
	queue []*waiter
}

// waiter is one Wait call that could not go at once. Each holds a timer for
// its slot; the Limiter replaces the timer, under its lock, when the slot
// moves, and tells the waiter on moved.
type waiter struct {
	slot  time.Time
	timer <-chan time.Time
	stop  func() bool
	moved chan struct{} // capacity 1
}

// maxOffset bounds the offsets computed from the interval (146 years). The
// interval is capped at maxOffset/(burst+1), so that a full bucket's worth
// of intervals always fits; only slots further out than that saturate.
const maxOffset = time.Duration(1 << 62)

// New returns a Limiter allowing rate requests per second with the given
// burst. rate <= 0 (or NaN/Inf) means unlimited; burst < 1 is taken as 1.
func New(r float64, burst int, opts ...Option) *Limiter {
	if burst < 1 {
		burst = 1
	}
	limit := r
	if r <= 0 || math.IsNaN(r) || math.IsInf(r, 0) {
		limit = math.Inf(1)
	}
	l := &Limiter{
		clock:       realClock{},
		configured:  limit,
		burst:       burst,
		climbAfter:  DefaultClimbAfter,
		climbFactor: DefaultClimbFactor,
		maxPause:    DefaultMaxPause,
	}
	if !math.IsInf(limit, 1) {
		l.floor = limit / DefaultFloorDivisor
	}
	for _, o := range opts {
		o(l)
	}
	if !math.IsInf(limit, 1) && l.floor > limit {
		l.floor = limit
	}
	if _, ok := l.clock.(realClock); ok {
		l.lead = realTimerLead
	}
	l.current, l.interval = limit, l.intervalOf(limit)
	return l
}

// intervalOf returns 1/r rounded up to the nanosecond, so that pacing by it
// never exceeds r; 0 when r is unlimited. Rates so low that burst+1
// intervals would pass maxOffset (one request in 146 years at burst 1) are
// paced at that cap.
func (l *Limiter) intervalOf(r float64) time.Duration {
	if math.IsInf(r, 1) {
		return 0
	}
	limit := maxOffset / time.Duration(l.burst+1)
	ns := math.Ceil(1e9 / r)
	if ns >= float64(limit) {
		return max(limit, 1)
	}
	return max(time.Duration(ns), 1)
}

// times returns n intervals, saturating at ±maxOffset.
func (l *Limiter) times(n int) time.Duration {
	d := l.interval
	switch {
	case n == 0 || d == 0:
		return 0
	case n > 0 && int64(n) > int64(maxOffset/d):
		return maxOffset
	case n < 0 && -int64(n) > int64(maxOffset/d):
		return -maxOffset
	}
	return time.Duration(n) * d
}

// Wait blocks until the caller may send one request, or ctx is done. Every
// attempt, retries included, calls Wait once. It honours the shared pause set
// by OnRateLimited and follows the limit when it changes while it waits.
//
// Callers go in the order they came. A caller goes at once when the pause is
// over and the bucket holds a token for it and for everyone already waiting;
// otherwise it sleeps until its slot, the time the bucket will hold them. A
// late wake-up is not made up for by letting requests go closer together:
// the time lost is lost, as for any request the bucket could not hold.
func (l *Limiter) Wait(ctx context.Context) error {
	if l == nil {
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("rate limiter: %w", err)
	}
	l.mu.Lock()
	now := l.clock.Now()
	if !l.slot(len(l.queue), now).After(now) {
		l.take(now)
		l.mu.Unlock()
		return nil
	}
	w := &waiter{moved: make(chan struct{}, 1)}
	l.queue = append(l.queue, w)
	l.arm(w, l.slot(len(l.queue)-1, now), now)
	for {
		timer, slot := w.timer, w.slot
		select { // a move already seen: the timer read above is the new one
		case <-w.moved:
		default:
		}
		l.mu.Unlock()
		fired := false
		select {
		case <-timer:
			fired = true
			if l.lead > 0 {
				l.spin(ctx, w, slot)
			}
		case <-w.moved:
		case <-ctx.Done():
		}
		l.mu.Lock()
		if ctx.Err() != nil {
			l.leave(w)
			l.reschedule(l.clock.Now()) // the waiters behind move up
			l.mu.Unlock()
			return fmt.Errorf("rate limiter: %w", ctx.Err())
		}
		now = l.clock.Now()
		k := l.index(w)
		s := l.slot(k, now)
		if !s.After(now) {
			l.leave(w)
			l.take(now)
			l.reschedule(now) // only moves anyone if this release came late
			l.mu.Unlock()
			return nil
		}
		if fired && timer == w.timer {
			// Woken before the slot (it moved later, or the timer fired
			// early): sleep again.
			l.arm(w, s, now)
		}
	}
}

// spin waits out the last stretch before slot, after a timer set early by
// l.lead, yielding the processor meanwhile; it stops early when the slot
// moves or ctx is done. It takes at most about l.lead.
func (l *Limiter) spin(ctx context.Context, w *waiter, slot time.Time) {
	for l.clock.Now().Before(slot) && len(w.moved) == 0 && ctx.Err() == nil {
		runtime.Gosched()
	}
}

// slot returns when the k-th waiter in line (from 0) may go, as seen at now:
// at the end of the pause, or when the bucket holds k+1 tokens, or now. The
// caller holds l.mu.
func (l *Limiter) slot(k int, now time.Time) time.Time {
	if now.Before(l.notBefore) {
		return l.notBefore
	}
	if l.interval == 0 {
		return now
	}
	full := l.full
	if full.Before(now) {
		full = now // a bucket holds burst tokens at most
	}
	s := full.Add(l.times(k + 1 - l.burst))
	if s.Before(now) {
		return now
	}
	return s
}

// take charges one release at now to the bucket. The caller holds l.mu.
func (l *Limiter) take(now time.Time) {
	if l.interval == 0 {
		return
	}
	if l.full.Before(now) {
		l.full = now
	}
	l.full = l.full.Add(l.interval)
	l.lastAt, l.lastDebt, l.lastInterval = now, l.full.Sub(now), l.interval
}

// setRate changes the limit at now. The tokens in the bucket at now are kept
// and those earned later come at the new rate. On a cut, the bucket is also
// re-priced from the last release on, as if the new rate had held since: a
// 429 says the old rate was too fast, and at burst 1 the next release then
// comes at least one new interval after the last one (a climb keeps that by
// itself: its intervals are shorter). The caller holds l.mu.
func (l *Limiter) setRate(now time.Time, r float64, cut bool) {
	if l.full.Before(now) {
		l.full = now
	}
	old := l.interval
	l.current, l.interval = r, l.intervalOf(r)
	if old == 0 || l.interval == 0 {
		return
	}
	if debt := l.full.Sub(now); debt > 0 { // missing tokens times the old interval
		l.full = now.Add(scale(debt, l.interval, old))
	}
	if cut && !l.lastAt.IsZero() {
		if again := l.lastAt.Add(scale(l.lastDebt, l.interval, l.lastInterval)); again.After(l.full) {
			l.full = again
		}
	}
}

// scale returns d*to/from rounded up, saturating at maxOffset. d is at most
// burst intervals from, so the result fits unless to is capped.
func scale(d, to, from time.Duration) time.Duration {
	ns := math.Ceil(float64(d) / float64(from) * float64(to))
	if ns >= float64(maxOffset) {
		return maxOffset
	}
	return time.Duration(ns)
}

// arm sets w's timer for slot s, replacing the one it had, and tells w. The
// caller holds l.mu, so the set of timers is never stale once l.mu is free:
// tests on a fake clock can wait for every waiter to be parked on its slot.
func (l *Limiter) arm(w *waiter, s, now time.Time) {
	if w.stop != nil {
		w.stop()
	}
	w.slot = s
	d := s.Sub(now)
	if l.lead > 0 && l.times(l.burst-1) < l.lead && !s.Equal(l.notBefore) {
		// At small bursts a late wake-up loses capacity: wake early and
		// spin the rest (see realTimerLead). With burst-1 intervals of
		// slack, the bucket absorbs the lateness instead; and the end of
		// a pause, which every waiter shares, is not worth spinning for.
		d = max(d-l.lead, 0)
	}
	w.timer, w.stop = l.clock.Timer(d)
	select {
	case w.moved <- struct{}{}:
	default:
	}
}

// reschedule re-arms every waiter whose slot has moved, earlier or later.
// One whose timer is already due is left alone: it is about to look. The
// caller holds l.mu.
func (l *Limiter) reschedule(now time.Time) {
	for k, w := range l.queue {
		s := l.slot(k, now)
		if s.Equal(w.slot) || (!s.After(now) && !w.slot.After(now)) {
			continue
		}
		l.arm(w, s, now)
	}
}

func (l *Limiter) index(w *waiter) int {
	for i, x := range l.queue {
		if x == w {
			return i
		}
	}
	panic("ratelimit: waiter not in line")
}

// leave takes w out of the line and stops its timer. The caller holds l.mu.
func (l *Limiter) leave(w *waiter) {
	i := l.index(w)
	copy(l.queue[i:], l.queue[i+1:])
	l.queue[len(l.queue)-1] = nil
	l.queue = l.queue[:len(l.queue)-1]
	w.stop()
}

// OnRateLimited records a 429 answer: every waiter pauses until retryAfter
// from now (DefaultPause when retryAfter <= 0, capped by the max pause), and
// the limit is halved, not below the floor. 429s that arrive while a pause is
// already running were sent before the cut, so they extend the pause but do
// not cut again. An unlimited Limiter only pauses: it has no rate to halve.
func (l *Limiter) OnRateLimited(retryAfter time.Duration) {
	if l == nil {
		return
	}
	if retryAfter <= 0 {
		retryAfter = DefaultPause
	}
	if retryAfter > l.maxPause {
		retryAfter = l.maxPause
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	inPause := now.Before(l.notBefore)
	if until := now.Add(retryAfter); until.After(l.notBefore) {
		l.notBefore = until
	}
	l.successes = 0
	if !inPause && !math.IsInf(l.current, 1) {
		if next := max(l.current/2, l.floor); next != l.current {
			l.setRate(now, next, true)
		}
		l.cuts++
	}
	l.reschedule(now)
}

// OnSuccess records a successful answer; after a run of them a cut limit
// climbs one step back towards the configured rate. Waiters already in line
// move up to the new limit; none is let go before its new slot.
func (l *Limiter) OnSuccess() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.current == l.configured {
		return
	}
	l.successes++
	if l.successes < l.climbAfter {
		return
	}
	l.successes = 0
	now := l.clock.Now()
	l.setRate(now, min(l.current*l.climbFactor, l.configured), false)
	l.reschedule(now)
}

// Rate returns the current effective limit in requests per second; 0 means
// unlimited.
func (l *Limiter) Rate() float64 {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if math.IsInf(l.current, 1) {
		return 0
	}
	return l.current
}

// Configured returns the rate asked for in New; 0 means unlimited.
func (l *Limiter) Configured() float64 {
	if l == nil || math.IsInf(l.configured, 1) {
		return 0
	}
	return l.configured
}

// Burst returns the bucket size.
func (l *Limiter) Burst() int {
	if l == nil {
		return 0
	}
	return l.burst
}

// Cuts returns how many times a 429 answer has cut the limit.
func (l *Limiter) Cuts() int64 {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cuts
}

// PausedUntil returns the shared "not before" time set by the last 429; the
// zero time when there never was one.
func (l *Limiter) PausedUntil() time.Time {
	if l == nil {
		return time.Time{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.notBefore
}
