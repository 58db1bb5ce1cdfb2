package pipeline

import (
	"errors"
	"fmt"
	"sync"
)

// ErrServiceUnavailable is wrapped by Run's error when the circuit breaker
// stopped the run: the service kept failing after retries. The rows not
// reached were not written; a resumed run verifies them.
var ErrServiceUnavailable = errors.New("service unavailable")

// ErrTooManyErrors is wrapped by Run's error when the Error rows passed
// MaxErrors or MaxErrorShare.
var ErrTooManyErrors = errors.New("too many rows are Error")

// breaker watches the outcomes of verified rows, in the order they finish,
// for a service that keeps failing: an outage must stop the run instead of
// turning every remaining row into an Error row.
type breaker struct {
	rows  int     // consecutive failures that trip it; <= 0: never
	share float64 // share of the window that trips it; <= 0: never

	mu     sync.Mutex
	streak int
	ring   []bool // last outcomes, true = failed
	next   int
	filled bool
	failed int // failures in ring
}

func newBreaker(rows, window int, share float64) *breaker {
	return &breaker{rows: rows, share: share, ring: make([]bool, window)}
}

// observe counts one verified row's outcome; it returns a non-nil error
// (wrapping ErrServiceUnavailable) when the run must stop.
func (b *breaker) observe(failed bool, row int, why string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if failed {
		b.streak++
	} else {
		b.streak = 0
	}
	if b.ring[b.next] {
		b.failed--
	}
	b.ring[b.next] = failed
	if failed {
		b.failed++
	}
	b.next++
	if b.next == len(b.ring) {
		b.next, b.filled = 0, true
	}
	if !failed {
		return nil
	}
	if b.rows > 0 && b.streak >= b.rows {
		return fmt.Errorf("%w: %d rows in a row failed after retries (last, row %d: %s)", ErrServiceUnavailable, b.streak, row, why)
	}
	if b.share > 0 && b.filled && float64(b.failed) > b.share*float64(len(b.ring)) {
		return fmt.Errorf("%w: %d of the last %d rows failed after retries (last, row %d: %s)", ErrServiceUnavailable, b.failed, len(b.ring), row, why)
	}
	return nil
}
