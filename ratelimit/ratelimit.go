package ratelimit

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// DefaultPause is the shared pause after a 429 that carried no Retry-After.
const DefaultPause = time.Second

// The adaptation after a 429 (see Limiter). A Retry-After of whole seconds
// pauses every worker, so each 429 costs about a second of the quota: find
// the rate at which 429s begin in few steps, then stay just under it.
const (
	// floorDivisor: 429s never cut the limit below the configured rate/16.
	floorDivisor = 16
	// maxPause caps the pause one Retry-After imposes: a wild value must
	// not stall a run for hours.
	maxPause = 10 * time.Minute
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
	// holdTime is how long the limit stays at the settled rate before probing.
	holdTime = 20 * time.Second
	// probeStep is how fast the limit then rises, per second, as a share of
	// the settled rate (or of the highest one held, when higher): about one
	// 429, and one pause, per half minute when the quota does not move.
	probeStep = 0.01
	// measureReleases is how many of the last releases the sent rate is
	// measured over (fewer workers than the limit needs send less than
	// it); few, so that a ramp does not make it lag.
	measureReleases = 8
	// workerBound is how far under the limit the measured rate must be to
	// be taken instead: a busy machine delays a few releases now and then.
	workerBound = 0.5
	// adaptStep is how often the limit changes along a ramp or a probe:
	// each change wakes the waiter at the head of the line to re-reserve.
	adaptStep = 100 * time.Millisecond
	// lateSlack is how late a waiter may wake and the next still keep its
	// slot on the bucket's timeline: Go timers fire up to a millisecond
	// late. Time lost to a longer stall stays lost, as if the request had
	// been charged when it went, so that no stall is made up with a burst.
	lateSlack = 2 * time.Millisecond
)

// Limiter paces requests for every worker of a run. A nil *Limiter never
// waits. Its methods are safe for concurrent use.
//
// Waiters queue in the order they came and only the head of the line holds
// a reservation of the bucket. Reservations sit on the bucket's absolute
// timeline, so a head woken a little late (up to lateSlack) does not delay
// the next one: no spinning for precision. A change of the limit or a
// pause re-prices only the head's reservation, cancelled and taken again:
// never a batch of them, whose cancellation would hand tokens back and let
// a burst go.
//
// A 429 of a request sent since the last cut marks the rate at which 429s
// begin: the limit in force when it went, or the rate actually sent when
// that is under half of it (too few workers). The first cut halves it and
// ramps back over firstRamp to settleMargin under it; later cuts go
// straight there, or steepMargin under (ramping back over steepRamp) when
// the 429 came within steepWithin of the pause's end, deeper each time
// when within quickWithin. The limit holds for holdTime, then probes up by
// probeStep per second. 429s of requests sent before the last cut only
// extend the pause.
type Limiter struct {
	configured float64 // the --rate asked for; +Inf when unlimited
	floor      float64
	maxPause   time.Duration
	bucket     *rate.Limiter
	// turn is held by the head of the line; the others queue to send on it.
	turn chan struct{}

	mu        sync.Mutex
	current   float64 // the limit in force; +Inf when unlimited
	notBefore time.Time
	// changed is closed and replaced when the limit or the pause changes.
	changed chan struct{}
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
	// recent: the last releases since the pause ended (n of them), for measured.
	recent [measureReleases]time.Time
	n      int

	// shared, when set (Share), paces this runner's requests together with
	// other runners' on one timeline. pauses is the timeline's count of
	// pauses last seen (known once one Reserve or Pause has answered).
	shared      Shared
	pauses      int64
	pausesKnown bool
}

// Shared is a timeline of request slots that several runners (processes,
// machines) send on, so that the set of them keeps one rate: each request
// takes the next free slot, interval after the slot before it, whoever
// took that one. pgpace.Pacer keeps it in PostgreSQL.
type Shared interface {
	// Reserve takes the next slot, interval after the previous one (or
	// now, when the timeline is idle).
	Reserve(ctx context.Context, interval time.Duration) (Slot, error)
	// Pause moves the next free slot to d from now at the earliest: a 429
	// seen by one runner holds every runner back. It returns the count of
	// pauses, this one included.
	Pause(ctx context.Context, d time.Duration) (pauses int64, err error)
}

// Slot is a request's place on a Shared timeline.
type Slot struct {
	// Wait is how long from now the slot is.
	Wait time.Duration
	// Pauses counts the timeline's pauses so far: a runner that sees it
	// grow slows down as if the 429 that paused it had been its own, so
	// that the set finds its rate together, not each runner in turn.
	Pauses int64
}

// sharedTimeout bounds a Pause of the shared timeline: a database slow to
// answer must not hold a worker that has a row to retry.
const sharedTimeout = 5 * time.Second

// Share makes l pace its requests on the timeline s as well: once l lets a
// request go at its own rate, the request waits for its slot on s, spaced
// by l's current limit (cut by 429s like its own). A 429 pauses s as well
// as l. l must be limited (New with r > 0). When s fails, l goes on
// pacing alone: s reports its failures itself. Call Share before the first
// Acquire.
func (l *Limiter) Share(s Shared) { l.shared = s }

// New returns a Limiter allowing r requests per second with the given burst.
// r <= 0 (or NaN/Inf) means unlimited; burst < 1 is taken as 1.
func New(r float64, burst int) *Limiter {
	burst = max(burst, 1)
	limit := r
	if r <= 0 || math.IsNaN(r) || math.IsInf(r, 0) {
		limit = math.Inf(1)
	}
	return &Limiter{
		configured: limit,
		current:    limit,
		floor:      limit / floorDivisor,
		maxPause:   maxPause,
		bucket:     rate.NewLimiter(rate.Limit(min(limit, float64(rate.Inf))), burst),
		turn:       make(chan struct{}, 1),
		changed:    make(chan struct{}),
	}
}

// Sent is one request let go by Acquire, for RateLimited to tell 429s caused
// by the limit in force from those of requests sent before the last cut.
// The zero Sent does nothing.
type Sent struct {
	l *Limiter
	// ctx is the context Acquire was given: the run's, which a stop
	// cancels. A 429 answered after it tells the shared timeline nothing,
	// so that no worker outlives the run's grace waiting on the database.
	ctx   context.Context
	gen   uint64
	at    time.Time
	rate  float64 // the limit in force when it went; +Inf when unlimited
	since time.Time
}

// Acquire blocks until the caller may send one request, or ctx is done, and
// returns the request's Sent. Every attempt, retries included, calls it
// once. Callers go in the order they came; each honours the shared pause
// set by 429s and the limit in force when it goes, then its slot on the
// Shared timeline, if any.
func (l *Limiter) Acquire(ctx context.Context) (Sent, error) {
	if l == nil {
		return Sent{}, ctx.Err()
	}
	sent, err := l.acquire(ctx)
	sent.ctx = ctx
	if err != nil || l.shared == nil || math.IsInf(sent.rate, 1) {
		return sent, err
	}
	// Outside the line: the next caller reserves its own slot meanwhile,
	// so a runner's requests are spread on the timeline, not serialised
	// by round trips to it.
	slot, err := l.shared.Reserve(ctx, time.Duration(float64(time.Second)/sent.rate))
	if err != nil {
		if ctx.Err() != nil {
			// Interrupted while waiting for the timeline: no request may
			// start after an interrupt.
			return Sent{}, fmt.Errorf("rate limiter: %w", ctx.Err())
		}
		return sent, nil // the timeline failed: l alone paces
	}
	l.sawPauses(&sent, slot)
	if slot.Wait <= 0 {
		return sent, nil
	}
	timer := time.NewTimer(min(slot.Wait, l.maxPause))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
		return Sent{}, fmt.Errorf("rate limiter: %w", ctx.Err())
	}
	sent.at = time.Now()
	return sent, nil
}

// sawPauses takes in the pauses of the shared timeline counted at slot,
// reserved for s: another runner's 429 cuts l's limit as l's own would
// (without pausing the timeline again: it is paused until slot), once per
// new count.
func (l *Limiter) sawPauses(s *Sent, slot Slot) {
	l.mu.Lock()
	defer l.mu.Unlock()
	known := l.pausesKnown
	if known && slot.Pauses <= l.pauses {
		return
	}
	l.pauses, l.pausesKnown = slot.Pauses, true
	if !known || s.gen != l.gen {
		return // the first count seen; or a limit already cut since s went
	}
	now := time.Now()
	l.adapt(now)
	if until := now.Add(slot.Wait); until.After(l.notBefore) {
		l.notBefore = until
	}
	l.cut(now, s)
}

// acquire is Acquire on l's own bucket and pause.
func (l *Limiter) acquire(ctx context.Context) (Sent, error) {
	if err := ctx.Err(); err != nil {
		return Sent{}, fmt.Errorf("rate limiter: %w", err)
	}
	unlimited := math.IsInf(l.configured, 1)
	if !unlimited {
		select {
		case l.turn <- struct{}{}:
			defer func() { <-l.turn }()
		case <-ctx.Done():
			return Sent{}, fmt.Errorf("rate limiter: %w", ctx.Err())
		}
	}
	for {
		l.mu.Lock()
		now := time.Now()
		l.adapt(now)
		var res *rate.Reservation
		wait := l.notBefore.Sub(now)
		if wait <= 0 {
			if !unlimited {
				res = l.bucket.ReserveN(now, 1) // never refused: n <= burst
				wait = res.DelayFrom(now)
			}
			if wait <= 0 {
				sent := l.take(now)
				l.mu.Unlock()
				return sent, nil
			}
		}
		changed, due := l.changed, now.Add(wait)
		l.mu.Unlock()
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
			l.mu.Lock()
			if now = time.Now(); res != nil && !now.Before(l.notBefore) { // no pause began meanwhile
				if lost := now.Add(-lateSlack); lost.After(due) { // a stall: empty the bucket at lost
					b := l.bucket.Burst()
					l.bucket.SetBurstAt(lost, 0)
					l.bucket.SetBurstAt(lost, b)
				}
				sent := l.take(now)
				l.mu.Unlock()
				return sent, nil
			}
			l.mu.Unlock()
		case <-changed:
		case <-ctx.Done():
		}
		timer.Stop()
		if res != nil {
			res.CancelAt(time.Now()) // nothing once past due
		}
		if ctx.Err() != nil {
			return Sent{}, fmt.Errorf("rate limiter: %w", ctx.Err())
		}
	}
}

// take counts one release at now for the measured rate and returns its
// Sent. The caller holds l.mu.
func (l *Limiter) take(now time.Time) Sent {
	l.recent[l.n%measureReleases] = now
	l.n++
	return Sent{l: l, gen: l.gen, at: now, rate: l.current, since: l.resumed}
}

// setLimit changes the limit at now and wakes the head of the line to
// re-reserve. The caller holds l.mu.
func (l *Limiter) setLimit(now time.Time, r float64) {
	l.current = r
	l.bucket.SetLimitAt(now, rate.Limit(r))
	l.wake()
}

func (l *Limiter) wake() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// RateLimited records a 429 answer to the request s: every waiter pauses
// until retryAfter from now (DefaultPause when retryAfter <= 0, capped at
// ten minutes), and the limit is cut (see Limiter) unless s was sent before
// the last cut. An unlimited Limiter only pauses: it has no rate to cut.
// The Shared timeline is paused too, under the context s was acquired with
// (and sharedTimeout): once that context is done (the run stops) the pause
// is l's own only, and RateLimited does not wait on the timeline.
func (s Sent) RateLimited(retryAfter time.Duration) {
	l := s.l
	if l == nil {
		return
	}
	if retryAfter <= 0 {
		retryAfter = DefaultPause
	}
	retryAfter = min(retryAfter, l.maxPause)
	var pauses int64 = -1
	if l.shared != nil && s.ctx != nil && s.ctx.Err() == nil {
		ctx, cancel := context.WithTimeout(s.ctx, sharedTimeout)
		if n, err := l.shared.Pause(ctx, retryAfter); err == nil { // a failure leaves l's own pause
			pauses = n
		}
		cancel()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if pauses > l.pauses {
		// l's own pause: not to be taken for another runner's.
		l.pauses, l.pausesKnown = pauses, true
	}
	now := time.Now()
	l.adapt(now)
	fresh := s.gen == l.gen
	if until := now.Add(retryAfter); until.After(l.notBefore) {
		l.notBefore = until
		if l.ceiling > 0 && !fresh {
			l.resume() // the pause grew: the schedule starts again at its end
		}
		l.wake()
	}
	if fresh && !math.IsInf(l.configured, 1) {
		l.cut(now, &s)
	}
}

// cut lowers the limit after a 429 to the request s and starts the schedule
// of adapt again from the end of the pause. The caller holds l.mu.
func (l *Limiter) cut(now time.Time, s *Sent) {
	began := s.rate
	since := s.at.Sub(s.since) // from the end of the last pause to the sending
	// Sent soon after the end of the last pause: the settled rate was
	// still well above what the service admits; at once after it: far
	// above.
	steep := l.ceiling > 0 && since < steepWithin
	quick := steep && since < quickWithin
	if m := l.measured(); l.shared == nil && m > 0 && m < workerBound*began {
		// Far fewer went than the limit let go: too few workers for it,
		// and the limit is no mark of what the service refused. Not on a
		// shared timeline: there this runner sends its share of the set's
		// rate, and the limit spaces the set's slots, not its own.
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
	l.resume()
	l.setLimit(now, l.start)
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
// holdTime, then probeStep per second more up to the configured rate. The
// caller holds l.mu.
func (l *Limiter) adapt(now time.Time) {
	if l.ceiling == 0 || l.current == l.configured {
		return
	}
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
		l.setLimit(now, r)
	}
}

// Rate returns the current effective limit in requests per second; 0 means
// unlimited.
func (l *Limiter) Rate() float64 {
	if l == nil || math.IsInf(l.configured, 1) {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.adapt(time.Now())
	return l.current
}

// Configured returns the rate asked for in New; 0 means unlimited.
func (l *Limiter) Configured() float64 {
	if l == nil || math.IsInf(l.configured, 1) {
		return 0
	}
	return l.configured
}
