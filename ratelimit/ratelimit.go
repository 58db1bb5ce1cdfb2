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
	// DefaultFloorDivisor bounds how far 429 answers cut the limit: never
	// below the configured rate divided by this.
	DefaultFloorDivisor = 16
	// DefaultPause is the shared pause after a 429 that carried no Retry-After.
	DefaultPause = time.Second
	// DefaultMaxPause caps the shared pause a single Retry-After can impose.
	DefaultMaxPause = 10 * time.Minute
)

// The shape of the adaptation after a 429 (see Limiter). A service that
// answers 429 with Retry-After in whole seconds makes every worker pause for
// at least a second, so each 429 costs about a second of the quota: the
// limiter must find the rate at which 429s begin in few steps, then stay just
// under it and look above it only now and then.
const (
	// settleMargin is how far under the rate at which 429s began the limit
	// settles: room for the jitter of arrival times at the service.
	settleMargin = 0.05
	// steepMargin replaces settleMargin when 429s began again soon after the
	// limit had settled (within steepWithin of sending again): the rate
	// they began at was then still well above what the service admits.
	steepMargin = 0.15
	steepWithin = 5 * time.Second
	// quickWithin marks 429s that came at once after the pause: each such
	// cut in a row goes twice as deep as the one before (at most half).
	quickWithin = time.Second
	// firstRamp is how long the limit takes, after the pause, to rise from
	// the first cut (half the rate 429s began at) to the settled rate;
	// steepRamp the same from a steep cut (steepMargin under it).
	firstRamp = 2 * time.Second
	steepRamp = 10 * time.Second
	// holdTime is how long the limit stays at the settled rate before it
	// probes above it.
	holdTime = 20 * time.Second
	// probeStep is how fast the limit then rises, per second, as a share of
	// the settled rate (or of the highest one held, when higher): about one
	// 429, and one pause, per half minute when the quota does not move.
	probeStep = 0.01
	// measureReleases is how many of the last releases the sent rate is
	// measured over: the rate at which 429s began is the lower of the limit
	// and what was actually sent (fewer workers than the limit needs send
	// less). Few, so that a ramp does not make it lag.
	measureReleases = 8
	// workerBound is how far under the limit the measured rate must be
	// to be taken instead: well under, since a busy machine delays a few
	// releases now and then.
	workerBound = 0.5
	// adaptStep is how often the limit changes along a ramp or a probe.
	adaptStep = 100 * time.Millisecond
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
// burst tokens refilled at the current limit, plus a shared "not before"
// time that honours Retry-After. A nil *Limiter never waits. Its methods are
// safe for concurrent use.
//
// The limit adapts to a service quota below the configured rate. A 429 of a
// request sent since the last cut marks the rate at which 429s begin: the
// limit in force when that request went, or the rate at which the last few
// requests actually went when that is under half of it (too few workers).
// The limit is then cut: the first time to half that rate, rising over
// firstRamp after the pause to settleMargin (5 %) under it; later straight
// to that settled rate. A 429 of a request sent within steepWithin of the
// end of the pause (the settled rate was still too high) cuts steepMargin
// under instead and rises back over steepRamp, once in a row; one sent
// within quickWithin of it (far above the quota) cuts twice as deep as the
// quick one before, up to half. The limit holds the settled rate for
// holdTime, then probes above it by probeStep per second (of the highest
// rate held) until the next 429 or the configured rate. 429s of requests
// sent before the last cut were caused by the old limit: they extend the
// pause but do not cut again.
//
// The bucket is charged when a request is let go, at the time it is let go,
// and never in advance: nothing is reserved, so nothing is ever given back,
// and a change of the limit moves only the slots of requests still waiting.
// Hence, whatever the cuts, climbs and late wake-ups, no one-second window
// holds more than the configured rate plus burst releases, and at burst 1
// each release comes at least 1/limit after the one before it.
type Limiter struct {
	clock      Clock
	configured float64 // the --rate asked for; +Inf when unlimited
	burst      int
	floor      float64
	maxPause   time.Duration
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
	cuts         int64
	// The adaptation. gen counts cuts: a Sent of an older generation was
	// sent under a limit already cut. Once cut, the limit follows the
	// schedule of adapt from resumed (the end of the pause): start, a ramp
	// to settled, a hold, then a probe upwards.
	gen            uint64
	ceiling        float64 // the rate at which 429s last began; 0 before any
	start, settled float64
	ramp           time.Duration
	steeps, quick  int     // steep cuts, and quick ones, in a row
	held           float64 // the highest settled rate held through holdTime
	resumed        time.Time
	// recent holds the times of the last releases since the pause ended,
	// for the measured rate; n counts them.
	recent [measureReleases]time.Time
	n      int
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
		clock:      realClock{},
		configured: limit,
		burst:      burst,
		maxPause:   DefaultMaxPause,
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

// Sent is one request let go by Acquire. Its RateLimited method reports a
// 429 answer to it, so that the limiter can tell 429s caused by the limit in
// force from those of requests sent before the last cut. The zero Sent
// stands for a request of unknown sending time.
type Sent struct {
	l     *Limiter
	gen   uint64
	at    time.Time
	rate  float64 // the limit in force when it went; +Inf when unlimited
	since time.Time
}

// RateLimited records a 429 answer to the request s, as OnRateLimited does
// for a request of unknown sending time, except that a 429 to a request sent
// before the last cut only extends the pause.
func (s Sent) RateLimited(retryAfter time.Duration) {
	if s.l == nil {
		return
	}
	s.l.rateLimited(&s, retryAfter)
}

// Wait blocks until the caller may send one request, or ctx is done; it is
// Acquire for callers that do not report 429s per request.
func (l *Limiter) Wait(ctx context.Context) error {
	_, err := l.Acquire(ctx)
	return err
}

// Acquire blocks until the caller may send one request, or ctx is done, and
// returns the request's Sent. Every attempt, retries included, calls it once.
// It honours the shared pause set by 429s and follows the limit when it
// changes while it waits.
//
// Callers go in the order they came. A caller goes at once when the pause is
// over and the bucket holds a token for it and for everyone already waiting;
// otherwise it sleeps until its slot, the time the bucket will hold them. A
// late wake-up is not made up for by letting requests go closer together:
// the time lost is lost, as for any request the bucket could not hold.
func (l *Limiter) Acquire(ctx context.Context) (Sent, error) {
	if l == nil {
		return Sent{}, ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		return Sent{}, fmt.Errorf("rate limiter: %w", err)
	}
	l.mu.Lock()
	now := l.clock.Now()
	l.adapt(now)
	if !l.slot(len(l.queue), now).After(now) {
		sent := l.take(now)
		l.mu.Unlock()
		return sent, nil
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
			return Sent{}, fmt.Errorf("rate limiter: %w", ctx.Err())
		}
		now = l.clock.Now()
		l.adapt(now)
		k := l.index(w)
		s := l.slot(k, now)
		if !s.After(now) {
			l.leave(w)
			sent := l.take(now)
			// Moves the others if this release came late, or if the
			// limit rose since they were armed.
			l.reschedule(now)
			l.mu.Unlock()
			return sent, nil
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

// take charges one release at now to the bucket and counts it for the
// measured rate. The caller holds l.mu.
func (l *Limiter) take(now time.Time) Sent {
	sent := Sent{l: l, gen: l.gen, at: now, rate: l.current, since: l.resumed}
	if l.interval == 0 {
		return sent
	}
	if l.full.Before(now) {
		l.full = now
	}
	l.full = l.full.Add(l.interval)
	l.lastAt, l.lastDebt, l.lastInterval = now, l.full.Sub(now), l.interval
	l.recent[l.n%measureReleases] = now
	l.n++
	return sent
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

// OnRateLimited records a 429 answer to a request of unknown sending time:
// every waiter pauses until retryAfter from now (DefaultPause when
// retryAfter <= 0, capped by the max pause), and the limit is cut (see
// Limiter). A 429 that arrives while a pause is already running is taken
// for one of a request sent before the cut: it extends the pause but does
// not cut again. An unlimited Limiter only pauses: it has no rate to cut.
// Callers that can should report 429s with Sent.RateLimited instead.
func (l *Limiter) OnRateLimited(retryAfter time.Duration) {
	if l == nil {
		return
	}
	l.rateLimited(nil, retryAfter)
}

// rateLimited records a 429 answer to s (nil: unknown).
func (l *Limiter) rateLimited(s *Sent, retryAfter time.Duration) {
	if retryAfter <= 0 {
		retryAfter = DefaultPause
	}
	if retryAfter > l.maxPause {
		retryAfter = l.maxPause
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	l.adapt(now)
	fresh := !now.Before(l.notBefore) // unknown: sent since the last pause
	if s != nil {
		fresh = s.gen == l.gen
	}
	if until := now.Add(retryAfter); until.After(l.notBefore) {
		l.notBefore = until
		if l.ceiling > 0 && !fresh {
			// The pause grew: the schedule starts again at its end.
			l.resume()
		}
	}
	if fresh && !math.IsInf(l.configured, 1) {
		l.cut(now, s)
	}
	l.reschedule(now)
}

// cut lowers the limit after a 429 to the request s (nil: unknown) and
// starts the schedule of adapt again from the end of the pause. The caller
// holds l.mu.
func (l *Limiter) cut(now time.Time, s *Sent) {
	began := l.current
	var since time.Duration // from the end of the last pause to the sending
	if s != nil {
		began = s.rate
		since = s.at.Sub(s.since)
	} else {
		since = now.Sub(l.resumed)
	}
	// Sent soon after the end of the last pause: the settled rate was
	// still well above what the service admits; at once after it: far
	// above.
	steep := l.ceiling > 0 && since < steepWithin
	quick := steep && since < quickWithin
	if m := l.measured(); m > 0 && m < workerBound*began {
		// Far fewer went than the limit let go: too few workers for it,
		// and the limit is no mark of what the service refused.
		began = m
	}
	first := l.ceiling == 0
	// Quick cuts in a row go twice as deep each time: the quota may lie
	// far under the limit. Steep ones only once in a row: a second would
	// compound on the noise of a quota without burst (arrival jitter alone
	// makes it refuse within seconds at any rate near it), and settles as
	// any later cut does.
	margin := 0.0
	switch {
	case quick:
		l.quick++
		l.steeps = 1
		margin = min(0.5, steepMargin*float64(int(1)<<min(l.quick-1, 3)))
	case steep && l.steeps == 0:
		l.quick, l.steeps = 0, 1
		margin = steepMargin
	default:
		l.quick, l.steeps = 0, 0
	}
	l.ceiling = began
	l.settled = max(l.floor, began*(1-settleMargin))
	l.start, l.ramp = l.settled, 0
	switch {
	case first:
		// Nothing is known yet of where the quota lies: halve, and let
		// the ramp find the rate at which 429s begin.
		l.start, l.ramp = max(l.floor, min(began/2, l.settled)), firstRamp
	case margin > 0:
		// Still above the quota: get under it at once, and come back
		// slowly enough that the next 429 marks where it lies.
		l.start, l.ramp = max(l.floor, began*(1-margin)), steepRamp
	}
	l.gen++
	l.cuts++
	l.resume()
	l.setRate(now, l.start, true)
}

// resume restarts the schedule and the measured rate at the end of the
// pause. The caller holds l.mu.
func (l *Limiter) resume() {
	l.resumed = l.notBefore
	l.n = 0
}

// measured returns the rate at which the last measureReleases requests were
// let go since the pause ended, or 0 when fewer went. The caller holds l.mu.
func (l *Limiter) measured() float64 {
	if l.n < measureReleases {
		return 0
	}
	newest, oldest := l.recent[(l.n-1)%measureReleases], l.recent[l.n%measureReleases]
	span := newest.Sub(oldest)
	if span <= 0 {
		return 0
	}
	return float64(measureReleases-1) / span.Seconds()
}

// adapt sets the limit the schedule gives at now, once a 429 has cut it:
// start during the pause, a ramp to settled over l.ramp, settled for
// holdTime, then probeStep per second more up to the configured rate.
// Waiters in line move up to a raised limit. The caller holds l.mu.
func (l *Limiter) adapt(now time.Time) {
	if l.ceiling == 0 || l.current == l.configured {
		return
	}
	// In steps: every change of the limit re-arms the waiters, and each of
	// them, woken, would see a later time and change it again.
	t := now.Sub(l.resumed).Truncate(adaptStep)
	r := l.start
	switch {
	case t <= 0:
	case t < l.ramp:
		r = l.start + (l.settled-l.start)*t.Seconds()/l.ramp.Seconds()
	case t < l.ramp+holdTime:
		r = l.settled
	default:
		// Held without a 429: a rate to climb back at, should noise
		// have cut far below it since.
		l.held = max(l.held, l.settled)
		r = min(l.configured, l.settled+probeStep*l.held*(t-l.ramp-holdTime).Seconds())
	}
	if r > l.current {
		l.setRate(now, r, false)
		l.reschedule(now)
	}
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
	l.adapt(l.clock.Now())
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
