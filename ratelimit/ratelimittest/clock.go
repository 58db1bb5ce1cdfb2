// Package ratelimittest provides a fake clock for tests of code that paces
// requests with package ratelimit, so tests wait on events instead of sleeping.
package ratelimittest

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Clock is a manual clock satisfying ratelimit.Clock: time moves only when
// Advance is called. Its methods are safe for concurrent use.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*timer
	changed chan struct{} // closed and replaced when the set of timers changes
}

type timer struct {
	at time.Time
	c  chan time.Time
}

// NewClock returns a Clock reading start.
func NewClock(start time.Time) *Clock {
	return &Clock{now: start, changed: make(chan struct{})}
}

// Now returns the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Timer returns a channel that receives once the clock has been advanced by
// d, and a function that removes the timer.
func (c *Clock) Timer(d time.Duration) (<-chan time.Time, func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{at: c.now.Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		t.c <- c.now
		return t.c, func() bool { return false }
	}
	c.timers = append(c.timers, t)
	c.notify()
	return t.c, func() bool { return c.remove(t) }
}

func (c *Clock) remove(t *timer) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.timers {
		if x == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			c.notify()
			return true
		}
	}
	return false
}

// notify wakes BlockUntil callers; c.mu is held.
func (c *Clock) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Advance moves the clock forward by d and fires every timer that is due, in
// deadline order.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	sort.SliceStable(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
	kept := c.timers[:0]
	for _, t := range c.timers {
		if !t.at.After(c.now) {
			t.c <- c.now
			continue
		}
		kept = append(kept, t)
	}
	for i := len(kept); i < len(c.timers); i++ {
		c.timers[i] = nil
	}
	c.timers = kept
	c.notify()
}

// Pending returns how many timers are waiting to fire.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// Next returns the time until the earliest pending timer fires, and false
// when none is pending.
func (c *Clock) Next() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.timers) == 0 {
		return 0, false
	}
	first := c.timers[0].at
	for _, t := range c.timers[1:] {
		if t.at.Before(first) {
			first = t.at
		}
	}
	return first.Sub(c.now), true
}

// BlockUntil waits until at least n timers are pending, or ctx is done.
func (c *Clock) BlockUntil(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		if len(c.timers) >= n {
			c.mu.Unlock()
			return nil
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// AwaitTimer waits until a pending timer is due exactly d after the clock's
// current time, or ctx is done. Tests use it to know that a waiter has
// re-planned rather than still holding an older timer.
func (c *Clock) AwaitTimer(ctx context.Context, d time.Duration) error {
	for {
		c.mu.Lock()
		at := c.now.Add(d)
		for _, t := range c.timers {
			if t.at.Equal(at) {
				c.mu.Unlock()
				return nil
			}
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Await waits until cond holds for the delays of the pending timers (from the
// clock's current time, earliest first), or ctx is done.
func (c *Clock) Await(ctx context.Context, cond func(pending []time.Duration) bool) error {
	for {
		c.mu.Lock()
		ds := make([]time.Duration, len(c.timers))
		for i, t := range c.timers {
			ds[i] = t.at.Sub(c.now)
		}
		ch := c.changed
		c.mu.Unlock()
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		if cond(ds) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// MaxInWindow returns the largest number of the sorted times that fall in any
// half-open window [t, t+w).
func MaxInWindow(sorted []time.Time, w time.Duration) int {
	best, j := 0, 0
	for i := range sorted {
		for j < len(sorted) && sorted[j].Sub(sorted[i]) < w {
			j++
		}
		if j-i > best {
			best = j - i
		}
	}
	return best
}
