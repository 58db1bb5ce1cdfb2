package api

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// tokenSource holds the one token shared by every goroutine of a Client.
//
// Each fetched token gets the next generation number. A request that was
// refused with generation g asks for a token of generation g+1 or later: the
// first such request starts a fetch, the others join it, and requests that
// come after it finished find g+1 already there. So any number of
// simultaneous 401s cost one createtoken call.
type tokenSource struct {
	fetch    func(ctx context.Context) (string, error)
	now      func() time.Time
	lifetime time.Duration // 0: no proactive refresh
	log      zerolog.Logger
	stats    *clientStats

	mu        sync.Mutex
	token     Secret
	gen       uint64 // generation of token; 0 while there is none
	fetchedAt time.Time
	inflight  *fetchCall

	// onJoin, when set by a test, is called (outside the lock) each time a
	// caller starts waiting on a fetch.
	onJoin func()
}

// Format keeps %v of a tokenSource from printing the token: fmt does not
// call Secret's methods on unexported fields.
func (ts *tokenSource) Format(f fmt.State, _ rune) { _, _ = fmt.Fprint(f, "api.tokenSource") }

// fetchCall is one createtoken call that any number of callers wait on. It
// runs with its own context, cancelled only when every caller waiting on it
// has given up, so one cancelled caller does not fail the others.
type fetchCall struct {
	done    chan struct{}
	cancel  context.CancelFunc
	waiters int

	// Set before done is closed.
	token Secret
	gen   uint64
	err   error
}

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
	call := ts.inflight
	if call == nil {
		call = ts.start(ctx, ts.reason(minGen))
	}
	call.waiters++
	ts.mu.Unlock()
	if ts.onJoin != nil {
		ts.onJoin()
	}

	select {
	case <-call.done:
		if call.err != nil {
			return "", 0, call.err
		}
		return call.token, call.gen, nil
	case <-ctx.Done():
		ts.mu.Lock()
		call.waiters--
		if call.waiters == 0 {
			select {
			case <-call.done:
			default:
				// Nobody wants this fetch any more. Detach it so that a
				// later caller starts afresh instead of joining a call that
				// is being cancelled.
				call.cancel()
				if ts.inflight == call {
					ts.inflight = nil
				}
			}
		}
		ts.mu.Unlock()
		return "", 0, fmt.Errorf("api: waiting for a token: %w", ctx.Err())
	}
}

// stale reports whether the token is past the lifetime hint. ts.mu is held.
func (ts *tokenSource) stale() bool {
	return ts.lifetime > 0 && ts.now().Sub(ts.fetchedAt) >= refreshAt(ts.lifetime)
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

// start begins a fetch in its own goroutine. ts.mu is held.
func (ts *tokenSource) start(ctx context.Context, reason string) *fetchCall {
	// The fetch keeps the first caller's values but not its cancellation:
	// it belongs to all the callers that join it.
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	call := &fetchCall{done: make(chan struct{}), cancel: cancel}
	ts.inflight = call
	go ts.run(fctx, call, reason)
	return call
}

func (ts *tokenSource) run(ctx context.Context, call *fetchCall, reason string) {
	defer call.cancel()
	tok, err := ts.fetch(ctx)

	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.inflight == call {
		ts.inflight = nil
	}
	if err != nil {
		call.err = err
		close(call.done)
		return
	}
	refresh := ts.gen > 0
	age := ts.now().Sub(ts.fetchedAt)
	ts.token, ts.fetchedAt = Secret(tok), ts.now()
	ts.gen++
	call.token, call.gen = ts.token, ts.gen
	// Log before waking the waiters, so the line precedes their requests.
	if refresh {
		ts.stats.tokenRefreshes.Add(1)
		// Never the token itself: only when and why.
		ts.log.Debug().Str("reason", reason).Uint64("generation", ts.gen).
			Dur("previous_age", age).Msg("api: token refreshed")
	} else {
		ts.log.Debug().Str("reason", reason).Uint64("generation", ts.gen).Msg("api: token created")
	}
	close(call.done)
}
