package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
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

// Limiter paces requests for every worker of a run. It is a token bucket
// (golang.org/x/time/rate) whose limit is cut on 429 answers and climbs back
// after successes, plus a shared "not before" time that honours Retry-After.
// A nil *Limiter never waits. Its methods are safe for concurrent use.
type Limiter struct {
	clock       Clock
	configured  rate.Limit // the --rate asked for; rate.Inf when unlimited
	floor       float64
	climbAfter  int
	climbFactor float64
	maxPause    time.Duration

	mu        sync.Mutex
	lim       *rate.Limiter
	current   rate.Limit
	notBefore time.Time
	successes int
	// changed is closed and replaced whenever the limit or the pause changes,
	// because rate.Limiter.SetLimit does not wake callers already waiting.
	changed chan struct{}
	cuts    int64
	// recent holds the actual release times for the rate+burst promise;
	// nil when unlimited.
	recent *recentReleases
}

// New returns a Limiter allowing rate requests per second with the given
// burst. rate <= 0 (or NaN/Inf) means unlimited; burst < 1 is taken as 1.
func New(r float64, burst int, opts ...Option) *Limiter {
	if burst < 1 {
		burst = 1
	}
	limit := rate.Limit(r)
	if r <= 0 || math.IsNaN(r) || math.IsInf(r, 0) {
		limit = rate.Inf
	}
	l := &Limiter{
		clock:       realClock{},
		configured:  limit,
		climbAfter:  DefaultClimbAfter,
		climbFactor: DefaultClimbFactor,
		maxPause:    DefaultMaxPause,
		current:     limit,
		changed:     make(chan struct{}),
	}
	if limit != rate.Inf {
		l.floor = float64(limit) / DefaultFloorDivisor
	}
	for _, o := range opts {
		o(l)
	}
	if limit != rate.Inf && l.floor > float64(limit) {
		l.floor = float64(limit)
	}
	l.lim = rate.NewLimiter(limit, burst)
	if limit != rate.Inf {
		l.recent = newRecentReleases(float64(limit) + float64(burst))
	}
	return l
}

// Wait blocks until the caller may send one request, or ctx is done. Every
// attempt, retries included, calls Wait once. It honours the shared pause set
// by OnRateLimited and re-plans when the limit changes while it waits.
//
// Waiting has two steps. A reservation on the token bucket places the
// request on the ideal timeline, so that late wake-ups do not lose capacity.
// Then the release is checked against the actual times of the last
// rate+burst releases: a waiter woken late (a busy machine) must not push
// more than rate+burst requests into any one second.
func (l *Limiter) Wait(ctx context.Context) error {
	if l == nil {
		return ctx.Err()
	}
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("rate limiter: %w", err)
		}
		l.mu.Lock()
		now := l.clock.Now()
		changed := l.changed
		if now.Before(l.notBefore) {
			d := l.notBefore.Sub(now)
			l.mu.Unlock()
			if err := l.sleep(ctx, d, changed, nil); err != nil {
				return err
			}
			continue
		}
		if l.current == rate.Inf {
			l.mu.Unlock()
			return nil
		}
		res := l.lim.ReserveN(now, 1)
		l.mu.Unlock()
		if !res.OK() {
			// Cannot happen with burst >= 1; kept so a broken invariant is an
			// error rather than a hang.
			return errors.New("rate limiter: request exceeds burst")
		}
		if d := res.DelayFrom(now); d > 0 {
			err := l.sleep(ctx, d, changed, res)
			if errors.Is(err, errReplan) {
				continue
			}
			if err != nil {
				return err
			}
		}
		return l.release(ctx)
	}
}

// release lets a waiter whose reservation is due go once the shared pause is
// over and the last second's releases leave room.
func (l *Limiter) release(ctx context.Context) error {
	for {
		l.mu.Lock()
		now := l.clock.Now()
		changed := l.changed
		var d time.Duration
		switch {
		case now.Before(l.notBefore):
			d = l.notBefore.Sub(now)
		case l.recent != nil:
			d = l.recent.wait(now)
		}
		if d <= 0 {
			if l.recent != nil {
				l.recent.record(now)
			}
			l.mu.Unlock()
			return nil
		}
		l.mu.Unlock()
		if err := l.sleep(ctx, d, changed, nil); err != nil {
			return err
		}
	}
}

// maxRecent bounds the ring of release times; above this many requests per
// second the window check is off, and the token bucket alone paces.
const maxRecent = 1 << 16

// recentReleases is a ring of the last releases, enforcing at most its
// length in any one-second window.
type recentReleases struct {
	times []time.Time
	next  int
	full  bool
}

func newRecentReleases(max float64) *recentReleases {
	n := int(math.Floor(max))
	if n < 1 || n > maxRecent {
		return nil
	}
	return &recentReleases{times: make([]time.Time, n)}
}

// wait returns how long until a release at now would keep every one-second
// window within bounds; <= 0 means at once.
func (w *recentReleases) wait(now time.Time) time.Duration {
	if !w.full {
		return 0
	}
	return w.times[w.next].Add(time.Second).Sub(now)
}

func (w *recentReleases) record(now time.Time) {
	w.times[w.next] = now
	w.next++
	if w.next == len(w.times) {
		w.next, w.full = 0, true
	}
}

// errReplan tells Wait that the limit or pause changed while it slept.
var errReplan = errors.New("replan")

// sleep waits d, or until the limiter changes (the reservation is then given
// back and errReplan returned), or until ctx is done.
func (l *Limiter) sleep(ctx context.Context, d time.Duration, changed chan struct{}, res *rate.Reservation) error {
	c, stop := l.clock.Timer(d)
	select {
	case <-c:
		return nil
	case <-changed:
		stop()
		if res != nil {
			res.CancelAt(l.clock.Now())
			return errReplan
		}
		return nil // the caller loops and re-reads the pause
	case <-ctx.Done():
		stop()
		if res != nil {
			res.CancelAt(l.clock.Now())
		}
		return fmt.Errorf("rate limiter: %w", ctx.Err())
	}
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
	if !inPause && l.current != rate.Inf {
		next := float64(l.current) / 2
		if next < l.floor {
			next = l.floor
		}
		if rate.Limit(next) != l.current {
			l.current = rate.Limit(next)
			l.lim.SetLimitAt(now, l.current)
		}
		l.cuts++
	}
	l.wake()
}

// OnSuccess records a successful answer; after a run of them a cut limit
// climbs one step back towards the configured rate.
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
	next := rate.Limit(float64(l.current) * l.climbFactor)
	if next > l.configured {
		next = l.configured
	}
	l.current = next
	l.lim.SetLimitAt(l.clock.Now(), next)
	l.wake()
}

// wake releases every waiter so it re-plans under the new limit or pause.
// The caller holds l.mu.
func (l *Limiter) wake() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// Rate returns the current effective limit in requests per second; 0 means
// unlimited.
func (l *Limiter) Rate() float64 {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.current == rate.Inf {
		return 0
	}
	return float64(l.current)
}

// Configured returns the rate asked for in New; 0 means unlimited.
func (l *Limiter) Configured() float64 {
	if l == nil || l.configured == rate.Inf {
		return 0
	}
	return float64(l.configured)
}

// Burst returns the bucket size.
func (l *Limiter) Burst() int {
	if l == nil {
		return 0
	}
	return l.lim.Burst()
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
