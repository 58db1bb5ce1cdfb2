package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/record"
	"github.com/addrclean/addrclean/writers"
)

// genSource yields n rows; cells(i) gives row i's cells (1-based). It holds
// no rows, so memory does not grow with n.
type genSource struct {
	n       int
	cells   func(i int) []string
	failAt  int // Next fails at this row number when > 0
	failErr error
	next    int
	closed  bool
}

func (s *genSource) Header() []string { return []string{"line", "country"} }

func (s *genSource) Next(ctx context.Context) (record.Row, error) {
	if err := ctx.Err(); err != nil {
		return record.Row{}, err
	}
	if s.next >= s.n {
		return record.Row{}, io.EOF
	}
	s.next++
	if s.next == s.failAt {
		return record.Row{}, s.failErr
	}
	return record.Row{Num: s.next, Line: s.next + 1, Cells: s.cells(s.next)}, nil
}

func (s *genSource) Close() error { s.closed = true; return nil }

// distinct gives every row its own address.
func distinct(i int) []string { return []string{strconv.Itoa(i) + " Main Street", "IE"} }

// MapperFunc adapts a function to Mapper.
type MapperFunc func(record.Row) readers.Mapped

// Map calls f.
func (f MapperFunc) Map(r record.Row) readers.Mapped { return f(r) }

// cellMapper maps cells[0] as the only line and cells[1] as the country; an
// empty line is the "no address" row error.
var cellMapper = MapperFunc(func(r record.Row) readers.Mapped {
	if len(r.Cells) < 2 || r.Cells[0] == "" {
		return readers.Mapped{Err: errors.New("no address")}
	}
	return readers.Mapped{
		Address: api.Address{Lines: []string{r.Cells[0]}, Country: r.Cells[1]},
		Label:   r.Cells[0] + ", " + r.Cells[1],
	}
})

// answer is a plausible verify answer echoing the address.
func answer(a api.Address, action api.Action) *api.VerifyResponse {
	return &api.VerifyResponse{
		Type:        "verify",
		Action:      action,
		Information: api.Information{Status: api.StatusVerified, MatchLevel: api.LevelBuilding, Complete: true},
		Input:       api.InputAddress{Label: append([]string(nil), a.Lines...)},
		Address:     api.MatchedAddress{Label: append([]string(nil), a.Lines...)},
	}
}

// fakeVerifier calls fn and counts calls.
type fakeVerifier struct {
	calls atomic.Int64
	fn    func(ctx context.Context, a api.Address, call int64) (*api.VerifyResponse, error)
}

func (f *fakeVerifier) Verify(ctx context.Context, a api.Address) (*api.VerifyResponse, error) {
	n := f.calls.Add(1)
	if f.fn == nil {
		return answer(a, api.ActionAccept), nil
	}
	return f.fn(ctx, a, n)
}

// memWriter keeps what it is given.
type memWriter struct {
	mu      sync.Mutex
	results []writers.Result
	failAt  int // Write fails for this row number when > 0
}

func (w *memWriter) Write(ctx context.Context, r writers.Result) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r.Row == w.failAt {
		return errors.New("disk full")
	}
	w.results = append(w.results, r)
	return nil
}

func (w *memWriter) Close() error { return nil }
func (w *memWriter) Abort() error { return nil }

func (w *memWriter) rows() []writers.Result {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]writers.Result(nil), w.results...)
}

// checkPrefix fails unless results are rows 1..len in order, each once.
func checkPrefix(t *testing.T, results []writers.Result) {
	t.Helper()
	for i, r := range results {
		if r.Row != i+1 {
			t.Fatalf("result %d is row %d: not an ordered prefix", i, r.Row)
		}
	}
}

// identityJitter makes the backoff deterministic: always the ceiling.
func identityJitter(max time.Duration) time.Duration { return max }

// noJitter makes every backoff zero, for tests that do not look at waits.
func noJitter(time.Duration) time.Duration { return 0 }

func statusErr(code int, msg string) error {
	return fmt.Errorf("api: verify: %w", &api.StatusError{Op: "verify", StatusCode: code, Message: msg})
}

func rateLimited(d time.Duration) error {
	return &api.RateLimitedError{RetryAfter: d, Status: &api.StatusError{Op: "verify", StatusCode: 429}}
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
