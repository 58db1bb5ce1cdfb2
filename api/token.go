package api

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sync/singleflight"
)

// tokenSource holds the one token shared by every goroutine of a Client.
//
// Each fetched token gets the next generation number. A request that was
// refused with generation g asks for a token of generation g+1 or later: the
// first such request starts a fetch, the others join it through a
// singleflight.Group, and requests that come after it finished find g+1
// already there. So any number of simultaneous 401s cost one createtoken
// call.
type tokenSource struct {
	fetch    func(ctx context.Context) (string, error)
	lifetime time.Duration // 0: no proactive refresh
	log      zerolog.Logger
	stats    *clientStats

	group singleflight.Group

	mu        sync.Mutex
	token     Secret
	gen       uint64 // generation of token; 0 while there is none
	fetchedAt time.Time
	// The fetch in flight, if any. Each fetch has its own singleflight key
	// (its number), so that a fetch abandoned by every caller is left to
	// end alone while a later caller starts a new one; cancel is nil while
	// no fetch is in flight.
	flight  uint64
	cancel  context.CancelFunc
	waiters int
}

// fetched is what a fetch shares with every caller waiting on it.
type fetched struct {
	token Secret
	gen   uint64
}

// Format keeps %v of a tokenSource from printing the token: fmt does not
// call Secret's methods on unexported fields.
func (ts *tokenSource) Format(f fmt.State, _ rune) { _, _ = fmt.Fprint(f, "api.tokenSource") }

func (ts *tokenSource) generation() uint64 {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.gen
}

// refreshAt is the age at which a token is replaced ahead of its lifetime:
// a little before it, so that requests in flight do not meet the expiry.
func refreshAt(lifetime time.Duration) time.Duration {
	return lifetime - min(lifetime/10, time.Minute)
}

// get returns a token of generation minGen or later that is not past the
// lifetime hint, fetching one (once, for all callers) if needed.
func (ts *tokenSource) get(ctx context.Context, minGen uint64) (Secret, uint64, error) {
	ts.mu.Lock()
	if ts.gen > 0 && ts.gen >= minGen && !ts.stale() {
		tok, gen := ts.token, ts.gen
		ts.mu.Unlock()
		return tok, gen, nil
	}
	if err := ctx.Err(); err != nil {
		ts.mu.Unlock()
		return "", 0, fmt.Errorf("api: waiting for a token: %w", err)
	}
	var ch <-chan singleflight.Result
	if ts.cancel == nil {
		ch = ts.start(ctx, ts.reason(minGen))
	} else {
		// While cancel is set the fetch's function has not returned, so
		// the group still holds its key: this joins it, and the function
		// given here never runs.
		ch = ts.group.DoChan(flightKey(ts.flight), errJoinedLate)
	}
	flight := ts.flight
	ts.waiters++
	ts.mu.Unlock()

	select {
	case res := <-ch:
		if res.Err != nil {
			return "", 0, res.Err
		}
		f := res.Val.(fetched)
		return f.token, f.gen, nil
	case <-ctx.Done():
		ts.mu.Lock()
		if ts.flight == flight && ts.cancel != nil {
			ts.waiters--
			if ts.waiters == 0 {
				// Nobody wants this fetch any more: cancel it, and let a
				// later caller start afresh instead of joining it.
				ts.cancel()
				ts.cancel = nil
			}
		}
		ts.mu.Unlock()
		return "", 0, fmt.Errorf("api: waiting for a token: %w", ctx.Err())
	}
}

// stale reports whether the token is past the lifetime hint. ts.mu is held.
func (ts *tokenSource) stale() bool {
	return ts.lifetime > 0 && time.Since(ts.fetchedAt) >= refreshAt(ts.lifetime)
}

// reason says why a fetch starts, for the debug log. ts.mu is held.
func (ts *tokenSource) reason(minGen uint64) string {
	switch {
	case ts.gen == 0:
		return "initial"
	case minGen > ts.gen:
		return "rejected"
	default:
		return "lifetime"
	}
}

func flightKey(flight uint64) string { return strconv.FormatUint(flight, 10) }

// errJoinedLate stands in for the fetch when a caller joins one: it is
// never called while the invariant in get holds.
func errJoinedLate() (any, error) {
	return nil, errors.New("api: internal error: joined a token fetch that had ended")
}

// start begins the next fetch under a new key. ts.mu is held.
func (ts *tokenSource) start(ctx context.Context, reason string) <-chan singleflight.Result {
	// The fetch keeps the first caller's values but not its cancellation:
	// it belongs to all the callers that join it, and is cancelled only
	// when the last of them gives up.
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ts.flight++
	ts.cancel, ts.waiters = cancel, 0
	flight := ts.flight
	// DoChan runs the function in its own goroutine, so holding ts.mu here
	// is safe.
	return ts.group.DoChan(flightKey(flight), func() (any, error) {
		defer cancel()
		return ts.run(fctx, flight, reason)
	})
}

// run fetches a token and makes it the current one.
func (ts *tokenSource) run(ctx context.Context, flight uint64, reason string) (any, error) {
	tok, err := ts.fetch(ctx)

	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.flight == flight {
		ts.cancel = nil
	}
	if err != nil {
		return nil, err
	}
	refresh := ts.gen > 0
	now := time.Now()
	age := now.Sub(ts.fetchedAt)
	ts.token, ts.fetchedAt = Secret(tok), now
	ts.gen++
	// Log before waking the waiters, so the line precedes their requests.
	if refresh {
		ts.stats.tokenRefreshes.Add(1)
		// Never the token itself: only when and why.
		ts.log.Debug().Str("reason", reason).Uint64("generation", ts.gen).
			Dur("previous_age", age).Msg("api: token refreshed")
	} else {
		ts.log.Debug().Str("reason", reason).Uint64("generation", ts.gen).Msg("api: token created")
	}
	return fetched{token: ts.token, gen: ts.gen}, nil
}
