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

// ErrServiceUnreachable is wrapped by Run's error, with
// ErrServiceUnavailable, when every row sent to the service failed with the
// service's fault and none was answered, from the service, the cache or a
// journal: the service was never reached (a wrong --base-url, a network
// down). The outputs hold nothing worth keeping: callers leave the last
// run's outputs in place rather than replace them with Error rows.
var ErrServiceUnreachable = errors.New("the service could not be reached: no row was verified")

// ErrTooManyErrors is wrapped by Run's error when the Error rows passed
// MaxErrors or MaxErrorShare.
var ErrTooManyErrors = errors.New("too many rows are Error")

// breaker watches the outcomes of verified rows, in the order they finish,
// for a service that keeps failing: an outage must stop the run instead of
// turning every remaining row into an Error row.
type breaker struct {
	rows  int     // consecutive failures that trip it; <= 0: never
	share float64 // share of the window that trips it; <= 0: never

	mu       sync.Mutex
	answered int64  // rows the service answered or refused
	faults   int64  // rows that failed with the service's fault
	firstWhy string // the first fault's reason
	streak   int
	ring     []bool // last outcomes, true = failed, by observation number
	failed   int    // failures in ring
}

func newBreaker(rows, window int, share float64) *breaker {
	return &breaker{rows: rows, share: share, ring: make([]bool, window)}
}

// observe counts one verified row's outcome; it returns a non-nil error
// (wrapping ErrServiceUnavailable) when the run must stop.
func (b *breaker) observe(failed bool, row int, why string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := int((b.answered + b.faults) % int64(len(b.ring)))
	if b.ring[i] {
		b.failed--
	}
	b.ring[i] = failed
	if !failed {
		b.streak = 0
		b.answered++
		return nil
	}
	b.failed++
	b.streak++
	if b.faults == 0 {
		b.firstWhy = fmt.Sprintf("row %d: %s", row, why)
	}
	b.faults++
	if b.rows > 0 && b.streak >= b.rows {
		return fmt.Errorf("%w: %d rows in a row failed after retries (last, row %d: %s)", ErrServiceUnavailable, b.streak, row, why)
	}
	filled := b.answered+b.faults >= int64(len(b.ring))
	if b.share > 0 && filled && float64(b.failed) > b.share*float64(len(b.ring)) {
		return fmt.Errorf("%w: %d of the last %d rows failed after retries (last, row %d: %s)", ErrServiceUnavailable, b.failed, len(b.ring), row, why)
	}
	return nil
}

// unreached reports that rows failed with the service's fault and none was
// answered, with the first failure's reason.
func (b *breaker) unreached() (bool, string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.faults > 0 && b.answered == 0, b.firstWhy
}
