package ratelimit

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// timeline is an in-memory Shared, as pgpace.Pacer keeps one in a table.
type timeline struct {
	mu     sync.Mutex
	next   time.Time
	fail   bool
	pauses int
}

func (tl *timeline) Reserve(_ context.Context, interval time.Duration) (Slot, error) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.fail {
		return Slot{}, errors.New("database down")
	}
	now := time.Now()
	slot := now
	if tl.next.After(now) {
		slot = tl.next
	}
	tl.next = slot.Add(interval)
	return Slot{Wait: slot.Sub(now), Pauses: int64(tl.pauses)}, nil
}

func (tl *timeline) Pause(_ context.Context, d time.Duration) (int64, error) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.pauses++
	if until := time.Now().Add(d); until.After(tl.next) {
		tl.next = until
	}
	return int64(tl.pauses), nil
}

// runners runs each limiter with workers goroutines looping on Acquire
// until n releases in all, calling answer after each, and returns the
// release times in order.
func runners(t *testing.T, ls []*Limiter, workers, n int, answer func(i, runner int, s Sent)) []time.Time {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var (
		mu sync.Mutex
		at []time.Time
		wg sync.WaitGroup
	)
	for r, l := range ls {
		for range workers {
			wg.Go(func() {
				for {
					s, err := l.Acquire(ctx)
					if err != nil {
						return
					}
					mu.Lock()
					i := len(at)
					if i >= n {
						mu.Unlock()
						cancel()
						return
					}
					at = append(at, time.Now())
					mu.Unlock()
					answer(i, r, s)
				}
			})
		}
	}
	wg.Wait()
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	return at
}

// TestSharedTimeline: three runners at --rate 10 that share a timeline send
// 10 requests a second between them, evenly spaced, not 30; a 429 one of
// them sees pauses all three and slows all three down; a timeline that
// fails leaves each runner pacing alone.
func TestSharedTimeline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := &timeline{}
		ls := []*Limiter{New(10, 1), New(10, 1), New(10, 1)}
		for _, l := range ls {
			l.Share(tl)
		}
		at := runners(t, ls, 4, 60, func(int, int, Sent) {})
		for i := 1; i < len(at); i++ {
			if gap := at[i].Sub(at[i-1]); gap != 100*time.Millisecond {
				t.Fatalf("release %d came %v after the one before; want 100ms, the set's rate", i, gap)
			}
		}
	})
	synctest.Test(t, func(t *testing.T) {
		tl := &timeline{}
		ls := []*Limiter{New(10, 1), New(10, 1), New(10, 1)}
		for _, l := range ls {
			l.Share(tl)
		}
		var limitedAt time.Time
		at := runners(t, ls, 2, 40, func(i, r int, s Sent) {
			if i == 20 {
				limitedAt = time.Now()
				s.RateLimited(2 * time.Second)
			}
		})
		if tl.pauses != 1 {
			t.Fatalf("%d pauses of the timeline, want 1", tl.pauses)
		}
		// Every runner slowed down, not only the one that saw the 429.
		for r, l := range ls {
			if l.Rate() >= 10 {
				t.Errorf("runner %d still at %g/s after another's 429", r, l.Rate())
			}
		}
		// Releases already given their slot before the 429 may go (at
		// most one per worker); none else until the pause ends.
		early := 0
		for _, a := range at {
			if a.After(limitedAt) && a.Before(limitedAt.Add(2*time.Second)) {
				early++
			}
		}
		if early > 6 {
			t.Errorf("%d releases within the pause, want at most the 6 workers' slots reserved before it", early)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		tl := &timeline{fail: true}
		ls := []*Limiter{New(10, 1), New(10, 1)}
		for _, l := range ls {
			l.Share(tl)
		}
		start := time.Now()
		at := runners(t, ls, 2, 40, func(int, int, Sent) {})
		// Each runner at its own 10/s: 40 releases in about 2 s.
		if took := at[len(at)-1].Sub(start); took > 2*time.Second {
			t.Errorf("40 releases of two runners pacing alone took %v, want under 2s", took)
		}
	})
}

// blockedTimeline is a Shared timeline that answers no reservation until
// the caller gives up: a database that does not answer.
type blockedTimeline struct{ entered chan struct{} }

func (b blockedTimeline) Reserve(ctx context.Context, _ time.Duration) (Slot, error) {
	close(b.entered)
	<-ctx.Done()
	return Slot{}, ctx.Err()
}

func (blockedTimeline) Pause(context.Context, time.Duration) (int64, error) { return 0, nil }

// TestSharedInterrupted: an interrupt while a request waits for its slot
// on the timeline ends Acquire with the interrupt, not with a release: no
// request may start after an interrupt (a timeline that fails otherwise
// leaves the runner pacing alone).
func TestSharedInterrupted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := New(10, 1)
		b := blockedTimeline{entered: make(chan struct{})}
		l.Share(b)
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			<-b.entered
			cancel()
		}()
		if _, err := l.Acquire(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Acquire interrupted while waiting for the timeline: %v, want context.Canceled", err)
		}
	})
}

// stalledPause is a Shared timeline whose reservations answer at once and
// whose Pause does not answer until its caller gives up: a database slow
// to take the write. It records the context of each Pause.
type stalledPause struct {
	timeline
	entered chan context.Context
}

func (s *stalledPause) Pause(ctx context.Context, _ time.Duration) (int64, error) {
	s.entered <- ctx
	<-ctx.Done()
	return 0, ctx.Err()
}

// TestRateLimitedStops: a 429 answered while the run stops does not hold
// its worker on a timeline slow to take the pause: RateLimited gives up
// the timeline's Pause the instant the context the request was acquired
// with is done (before, it waited up to 5 s under a context of its own,
// past the run's grace), and a 429 answered once the run is stopped does
// not ask the timeline at all. Either way the runner's own pause holds.
func TestRateLimitedStops(t *testing.T) {
	for _, tc := range []struct {
		name        string
		stopBefore  bool // the run stopped before the 429 came back
		wantEntered bool
	}{
		{"stopped while pausing the timeline", false, true},
		{"stopped before the 429", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tl := &stalledPause{entered: make(chan context.Context, 1)}
				l := New(10, 1)
				l.Share(tl)
				run, stop := context.WithCancel(t.Context())
				defer stop()
				s, err := l.Acquire(run)
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				if tc.stopBefore {
					stop()
				}
				done := make(chan struct{})
				go func() {
					s.RateLimited(2 * time.Second)
					close(done)
				}()
				synctest.Wait()
				select {
				case <-tl.entered:
					if !tc.wantEntered {
						t.Fatal("the timeline was paused after the run had stopped")
					}
					stop() // Ctrl-C while the database is slow to answer
				default:
					if tc.wantEntered {
						t.Fatal("the timeline was not paused by a 429 of a running run")
					}
				}
				<-done
				if took := time.Since(start); took != 0 {
					t.Fatalf("RateLimited returned %v after the run stopped, want at once", took)
				}
				// The runner's own pause is recorded: the next request (of
				// a run that goes on) waits it out.
				if _, err := l.Acquire(t.Context()); err != nil {
					t.Fatal(err)
				}
				if waited := time.Since(start); waited != 2*time.Second {
					t.Fatalf("the next request went after %v, want the 2s pause", waited)
				}
			})
		})
	}
	// A run that goes on still pauses the timeline.
	synctest.Test(t, func(t *testing.T) {
		tl := &timeline{}
		l := New(10, 1)
		l.Share(tl)
		s, err := l.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		s.RateLimited(time.Second)
		if tl.pauses != 1 {
			t.Fatalf("%d pauses of the timeline, want 1", tl.pauses)
		}
	})
}
