package pipeline

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/url"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/ratelimit"
	"github.com/addrclean/addrclean/runstats"
)

func TestRunValidates(t *testing.T) {
	src := &genSource{n: 1, cells: distinct}
	v := &fakeVerifier{}
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no source", Config{Mapper: cellMapper, Verifier: v}},
		{"no mapper", Config{Source: src, Verifier: v}},
		{"no verifier", Config{Source: src, Mapper: cellMapper}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Run(context.Background(), tt.cfg); err == nil {
				t.Fatal("Run accepted an incomplete Config")
			}
		})
	}
}

// TestOrderExactlyOnce runs rows whose calls finish out of order and checks
// that both outputs get every row once, in input order, with its own answer.
func TestOrderExactlyOnce(t *testing.T) {
	for _, workers := range []int{1, 3, 8, 32} {
		t.Run("workers="+strconv.Itoa(workers), func(t *testing.T) {
			const n = 3000
			v := &fakeVerifier{fn: func(ctx context.Context, a api.Address, call int64) (*api.VerifyResponse, error) {
				// Uneven work so that calls overtake each other.
				for i := int64(0); i < call%7; i++ {
					runtime.Gosched()
				}
				return answer(a, api.ActionAccept), nil
			}}
			enriched, review := &memWriter{}, &memWriter{}
			st, err := Run(testCtx(t), Config{
				Source:   &genSource{n: n, cells: distinct},
				Mapper:   cellMapper,
				Verifier: v,
				Workers:  workers,
			}.with(enriched, review))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []*memWriter{enriched, review} {
				got := w.rows()
				if len(got) != n {
					t.Fatalf("wrote %d rows, want %d", len(got), n)
				}
				checkPrefix(t, got)
				for _, r := range got {
					want := strconv.Itoa(r.Row) + " Main Street"
					if r.Response == nil || r.Response.Input.Label[0] != want || r.InputLabel != want+", IE" {
						t.Fatalf("row %d got the answer of another row: %+v", r.Row, r.Response)
					}
				}
			}
			if st.RowsRead != n || st.RowsWritten != n || st.CallsMade != n || st.CallsSaved != 0 {
				t.Fatalf("stats = %+v", st)
			}
			if st.Actions["Accept"] != n || st.MatchLevels[api.LevelBuilding] != n {
				t.Fatalf("counts = %v %v", st.Actions, st.MatchLevels)
			}
		})
	}
}

// with sets the outputs; it keeps table literals short.
func (c Config) with(ws ...*memWriter) Config {
	c.Outputs = nil
	for _, w := range ws {
		c.Outputs = append(c.Outputs, w)
	}
	return c
}

// TestStuckRowHoldsOrder blocks row 1 until row 40 has been verified: the
// rows in between are held back and still come out in order.
func TestStuckRowHoldsOrder(t *testing.T) {
	row40 := make(chan struct{})
	v := &fakeVerifier{fn: func(ctx context.Context, a api.Address, _ int64) (*api.VerifyResponse, error) {
		switch a.Lines[0] {
		case "1 Main Street":
			select {
			case <-row40:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		case "40 Main Street":
			close(row40)
		}
		return answer(a, api.ActionAccept), nil
	}}
	w := &memWriter{}
	_, err := Run(testCtx(t), Config{
		Source: &genSource{n: 100, cells: distinct}, Mapper: cellMapper, Verifier: v,
		Workers: 4, Window: 64,
	}.with(w))
	if err != nil {
		t.Fatal(err)
	}
	if got := w.rows(); len(got) != 100 {
		t.Fatalf("wrote %d rows", len(got))
	} else {
		checkPrefix(t, got)
	}
}

// TestWindowBoundsReadAhead blocks row 1 for ever and checks that the
// reader is held back by the window instead of reading the whole input.
func TestWindowBoundsReadAhead(t *testing.T) {
	const window, workers = 16, 2
	ctx, cancel := context.WithCancel(testCtx(t))
	release := make(chan struct{})
	src := &genSource{n: 100000, cells: distinct}
	reached := make(chan struct{})
	v := &fakeVerifier{fn: func(c context.Context, a api.Address, call int64) (*api.VerifyResponse, error) {
		if call == window {
			close(reached)
		}
		if a.Lines[0] == "1 Main Street" {
			<-release
			return nil, errors.New("released")
		}
		return answer(a, api.ActionAccept), nil
	}}
	done := make(chan struct{})
	var st runstats.Stats
	var err error
	go func() {
		defer close(done)
		st, err = Run(ctx, Config{Source: src, Mapper: cellMapper, Verifier: v,
			Workers: workers, Window: window}.with(&memWriter{}))
	}()
	// Row 1 is stuck, so the writer is too: the feeder fills the window,
	// the workers verify what it queued, and then everything must stall.
	<-reached
	cancel()
	close(release)
	<-done
	if !errors.Is(err, context.Canceled) || !st.Interrupted {
		t.Fatalf("err = %v, interrupted = %v", err, st.Interrupted)
	}
	if st.RowsWritten != 0 {
		t.Fatalf("wrote %d rows past a stuck row 1", st.RowsWritten)
	}
	if max := int64(window + workers + 2); st.RowsRead > max {
		t.Fatalf("read %d rows with a window of %d: memory not bounded", st.RowsRead, window)
	}
}

func TestMappingErrors(t *testing.T) {
	cells := func(i int) []string {
		if i%3 == 0 {
			return []string{"", "IE"}
		}
		return distinct(i)
	}
	v := &fakeVerifier{}
	w := &memWriter{}
	st, err := Run(testCtx(t), Config{Source: &genSource{n: 30, cells: cells}, Mapper: cellMapper, Verifier: v}.with(w))
	if err != nil {
		t.Fatal(err)
	}
	got := w.rows()
	checkPrefix(t, got)
	for _, r := range got {
		if r.Row%3 == 0 {
			if r.Err != "no address" || r.Response != nil {
				t.Fatalf("row %d: %+v", r.Row, r)
			}
		} else if r.Err != "" {
			t.Fatalf("row %d: unexpected error %q", r.Row, r.Err)
		}
	}
	if v.calls.Load() != 20 || st.Errors[runstats.ErrKindInput] != 10 || st.Actions[ActionError] != 10 {
		t.Fatalf("calls = %d, stats = %+v", v.calls.Load(), st)
	}
}

// script answers attempt n (1-based) with steps[n-1], and succeeds after.
func script(steps ...error) *fakeVerifier {
	return &fakeVerifier{fn: func(ctx context.Context, a api.Address, call int64) (*api.VerifyResponse, error) {
		if int(call) <= len(steps) && steps[call-1] != nil {
			if steps[call-1] == errBlock {
				<-ctx.Done()
				return nil, fmt.Errorf("api: verify: %w", ctx.Err())
			}
			return nil, steps[call-1]
		}
		return answer(a, api.ActionSuggest), nil
	}}
}

// errBlock in a script makes the attempt block until its context ends.
var errBlock = errors.New("block")

func TestRetries(t *testing.T) {
	transient := fmt.Errorf("api: verify: %w", io.ErrUnexpectedEOF)
	tests := []struct {
		name        string
		steps       []error
		retries     int
		maxWait     time.Duration
		timeout     time.Duration
		wantCalls   int64
		wantErr     string // av_error; empty for a verified row
		wantKind    string
		wantWaits   []time.Duration
		wantRetries int64
		want429     int64
	}{
		{name: "first try", wantCalls: 1},
		{name: "transient then success", steps: []error{transient, statusErr(502, "")},
			wantCalls: 3, wantWaits: []time.Duration{500 * time.Millisecond, time.Second}, wantRetries: 2},
		{name: "transient until retries run out", steps: []error{transient, transient, transient, statusErr(500, "")},
			wantCalls: 4, wantErr: "gave up after 4 attempts: service answered 500: Internal Server Error", wantKind: runstats.ErrKindTransient,
			wantWaits: []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}, wantRetries: 3},
		{name: "no retries", steps: []error{transient}, retries: -1,
			wantCalls: 1, wantErr: "gave up after 1 attempt: verify: unexpected EOF", wantKind: runstats.ErrKindTransient},
		{name: "backoff capped", steps: []error{transient, transient, transient, transient, transient, transient, transient, transient}, retries: 8,
			wantCalls: 9, wantRetries: 8, wantWaits: []time.Duration{
				500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}},
		{name: "503 with Retry-After waits at least that", steps: []error{
			&api.StatusError{Op: "verify", StatusCode: 503, RetryAfter: 7 * time.Second}},
			wantCalls: 2, wantRetries: 1, wantWaits: []time.Duration{7 * time.Second}},
		{name: "permanent", steps: []error{statusErr(400, "addressLine is required")},
			wantCalls: 1, wantErr: "service answered 400: addressLine is required", wantKind: runstats.ErrKindPermanent},
		{name: "permanent without message", steps: []error{statusErr(413, "")},
			wantCalls: 1, wantErr: "service answered 413: Request Entity Too Large", wantKind: runstats.ErrKindPermanent},
		{name: "invalid address", steps: []error{fmt.Errorf("%w: no country", api.ErrInvalidAddress)},
			wantCalls: 1, wantErr: "invalid address: no country", wantKind: runstats.ErrKindPermanent},
		{name: "429s do not use up retries", retries: 1,
			steps:     []error{rateLimited(time.Second), rateLimited(2 * time.Second), transient, rateLimited(0), rateLimited(time.Second)},
			wantCalls: 6, wantRetries: 1, want429: 4,
			wantWaits: []time.Duration{time.Second, 2 * time.Second, 500 * time.Millisecond, ratelimit.DefaultPause, time.Second}},
		{name: "429 past max wait", maxWait: 10 * time.Minute,
			steps:     []error{rateLimited(4 * time.Minute), rateLimited(4 * time.Minute), rateLimited(4 * time.Minute)},
			wantCalls: 3, want429: 3, wantErr: "rate limited for longer than the maximum wait (10m0s)", wantKind: runstats.ErrKindRateLimited,
			wantWaits: []time.Duration{4 * time.Minute, 4 * time.Minute}},
		{name: "absurd Retry-After", steps: []error{rateLimited(time.Duration(1<<63 - 1))},
			wantCalls: 1, want429: 1, wantErr: "rate limited for longer than the maximum wait (10m0s)", wantKind: runstats.ErrKindRateLimited},
		{name: "attempt timeout is transient", steps: []error{errBlock, errBlock}, retries: 1, timeout: time.Millisecond,
			wantCalls: 2, wantRetries: 1, wantErr: "gave up after 2 attempts: timed out after 1ms", wantKind: runstats.ErrKindTransient,
			wantWaits: []time.Duration{500 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// The waits are the fake time between the end of one attempt
				// and the start of the next.
				var (
					waits   []time.Duration
					lastEnd time.Time
				)
				steps := script(tt.steps...)
				v := &fakeVerifier{fn: func(ctx context.Context, a api.Address, call int64) (*api.VerifyResponse, error) {
					if call > 1 {
						waits = append(waits, time.Since(lastEnd))
					}
					defer func() { lastEnd = time.Now() }()
					return steps.fn(ctx, a, call)
				}}
				w := &memWriter{}
				st, err := Run(t.Context(), Config{
					Source: &genSource{n: 1, cells: distinct}, Mapper: cellMapper, Verifier: v,
					Retries: tt.retries, MaxWait: tt.maxWait, Timeout: tt.timeout, Jitter: identityJitter,
				}.with(w))
				// The one row failing with the service's fault means the
				// service was never reached.
				serviceFault := tt.wantKind == runstats.ErrKindTransient || tt.wantKind == runstats.ErrKindRateLimited
				if serviceFault != errors.Is(err, ErrServiceUnreachable) || (!serviceFault && err != nil) {
					t.Fatalf("err = %v", err)
				}
				got := w.rows()
				if len(got) != 1 {
					t.Fatalf("wrote %d rows", len(got))
				}
				r := got[0]
				if r.Err != tt.wantErr {
					t.Errorf("av_error = %q, want %q", r.Err, tt.wantErr)
				}
				if (r.Response == nil) != (tt.wantErr != "") {
					t.Errorf("response = %v with error %q", r.Response, r.Err)
				}
				if tt.wantKind != "" && st.Errors[tt.wantKind] != 1 {
					t.Errorf("errors = %v, want one %s", st.Errors, tt.wantKind)
				}
				if st.CallsMade != tt.wantCalls || v.calls.Load() != tt.wantCalls {
					t.Errorf("calls = %d (verifier saw %d), want %d", st.CallsMade, v.calls.Load(), tt.wantCalls)
				}
				if st.Retries != tt.wantRetries || st.RateLimited != tt.want429 {
					t.Errorf("retries = %d, 429s = %d; want %d, %d", st.Retries, st.RateLimited, tt.wantRetries, tt.want429)
				}
				if fmt.Sprint(waits) != fmt.Sprint(tt.wantWaits) && !(len(waits) == 0 && len(tt.wantWaits) == 0) {
					t.Errorf("waits = %v, want %v", waits, tt.wantWaits)
				}
			})
		})
	}
}

// TestFatalStopsPromptly feeds many rows to a service that refuses the key:
// the run must stop after a handful of calls, not grind through the input.
func TestFatalStopsPromptly(t *testing.T) {
	const workers = 8
	cause := fmt.Errorf("api: verify: %w: check the API key", api.ErrUnauthorized)
	for _, okFirst := range []int64{0, 50} {
		t.Run("after "+strconv.FormatInt(okFirst, 10)+" good calls", func(t *testing.T) {
			v := &fakeVerifier{fn: func(ctx context.Context, a api.Address, call int64) (*api.VerifyResponse, error) {
				if call <= okFirst {
					return answer(a, api.ActionAccept), nil
				}
				return nil, cause
			}}
			w := &memWriter{}
			st, err := Run(testCtx(t), Config{
				Source: &genSource{n: 1_000_000, cells: distinct}, Mapper: cellMapper, Verifier: v, Workers: workers,
			}.with(w))
			if !errors.Is(err, api.ErrUnauthorized) {
				t.Fatalf("err = %v, want one wrapping ErrUnauthorized", err)
			}
			if st.Interrupted {
				t.Error("a fatal stop is not an interrupt")
			}
			if extra := v.calls.Load() - okFirst; extra > 2*workers {
				// Say which path the calls took: under load, cancelling the
				// calls before intake once let workers run through 150-250
				// rows (see runner.stop).
				t.Fatalf("%d calls after the first refusal (calls made %d, retries %d, errors %v, actions %v, stopped %q, err %v)",
					extra, st.CallsMade, st.Retries, st.Errors, st.Actions, st.Stopped, err)
			}
			if st.RowsRead > okFirst+int64(DefaultWindow+2*workers) {
				t.Fatalf("read %d rows after a fatal error", st.RowsRead)
			}
			got := w.rows()
			checkPrefix(t, got)
			if int64(len(got)) > okFirst {
				t.Fatalf("wrote %d rows, only %d were verified", len(got), okFirst)
			}
		})
	}
}

func TestDedup(t *testing.T) {
	variants := []string{"1 Main Street", "1  MAIN street", " 1 main   Street ", "1\tMain\u00a0Street", "2 Main Street"}
	cells := func(i int) []string {
		country := "IE"
		if i > 50 {
			country = "ie"
		}
		if i%11 == 0 {
			country = "GB" // a different address
		}
		return []string{variants[i%len(variants)], country}
	}
	v := &fakeVerifier{}
	w := &memWriter{}
	st, err := Run(testCtx(t), Config{Source: &genSource{n: 100, cells: cells}, Mapper: cellMapper, Verifier: v, Workers: 4}.with(w))
	if err != nil {
		t.Fatal(err)
	}
	// Distinct normalised addresses: {1 main street, 2 main street} × {ie, gb}.
	if v.calls.Load() != 4 || st.CallsMade != 4 || st.CallsSaved != 96 {
		t.Fatalf("calls = %d, stats calls = %d, saved = %d", v.calls.Load(), st.CallsMade, st.CallsSaved)
	}
	got := w.rows()
	checkPrefix(t, got)
	cached := 0
	for _, r := range got {
		if r.Response == nil {
			t.Fatalf("row %d not verified", r.Row)
		}
		if r.Cached {
			cached++
		}
	}
	if cached != 96 {
		t.Fatalf("%d rows marked cached, want 96", cached)
	}
}

func TestDedupShares(t *testing.T) {
	d := newDedup(2, t.TempDir())
	defer d.close()
	acquire := func(key string) (role, *flight, verdict) {
		t.Helper()
		rl, f, v, err := d.acquire(key)
		if err != nil {
			t.Fatal(err)
		}
		return rl, f, v
	}
	rl, f, _ := acquire("a")
	if rl != roleLeader {
		t.Fatal("first acquire is not the leader")
	}
	rl2, f2, _ := acquire("a")
	if rl2 != roleFollower || f2 != f {
		t.Fatal("concurrent duplicate does not follow the flight")
	}
	resp := &api.VerifyResponse{Action: api.ActionAccept, Address: api.MatchedAddress{ID: "A1"}}
	d.finish("a", f, verdict{resp: resp})
	<-f2.done
	if f2.v.resp != resp {
		t.Fatal("follower did not get the leader's answer")
	}
	if rl, _, v := acquire("a"); rl != roleHit || v.resp != resp {
		t.Fatal("later duplicate missed the cache")
	}
	// Transient failures and unfinished rows are not cached.
	for _, v := range []verdict{{reason: "gave up", kind: runstats.ErrKindTransient}, {skipped: true}} {
		rl, f, _ := acquire("b")
		if rl != roleLeader {
			t.Fatal("b should be led")
		}
		d.finish("b", f, v)
	}
	if rl, f, _ := acquire("b"); rl != roleLeader {
		t.Fatal("an uncacheable verdict was cached")
	} else {
		d.finish("b", f, verdict{reason: "service answered 400", kind: runstats.ErrKindPermanent})
	}
	if rl, _, _ := acquire("b"); rl != roleHit {
		t.Fatal("a permanent refusal was not cached")
	}
	// The LRU holds two: adding c evicts the least recently used, a, to
	// the spill, where a later duplicate still finds it.
	_, _, _ = acquire("b")
	if rl, f, _ = acquire("c"); rl != roleLeader {
		t.Fatal("c should be led")
	}
	d.finish("c", f, verdict{resp: resp, fromCache: true})
	if _, ok := d.index["a"]; ok {
		t.Fatal("a was not evicted")
	}
	if rl, _, v := acquire("a"); rl != roleHit || v.resp == nil || v.resp.Address.ID != "A1" || v.fromCache {
		t.Fatalf("a was lost with its eviction: role %v, verdict %+v", rl, v)
	}
	// Evicting the refusal and c sends them to the spill too.
	for _, k := range []string{"x", "y", "z"} {
		_, f, _ := acquire(k)
		d.finish(k, f, verdict{reason: "gone", kind: runstats.ErrKindTransient})
	}
	if d.spill.written < 3 {
		t.Fatalf("%d verdicts on disk, want a, the refusal of b and the answer for c", d.spill.written)
	}
	if rl, _, v := acquire("b"); rl != roleHit || v.kind != runstats.ErrKindPermanent || v.reason != "service answered 400" {
		t.Fatalf("b from disk: role %v, verdict %+v", rl, v)
	}
	if rl, _, v := acquire("c"); rl != roleHit || !v.fromCache || v.resp.Address.ID != "A1" {
		t.Fatalf("c from disk: role %v, verdict %+v", rl, v)
	}
	// Size < 0 keeps nothing, but still shares flights.
	d2 := newDedup(-1, "")
	_, f, _, _ = d2.acquire("a")
	d2.finish("a", f, verdict{resp: resp})
	if rl, _, _, _ := d2.acquire("a"); rl != roleLeader {
		t.Fatal("cache of size -1 kept a verdict")
	}
}

func TestDedupKey(t *testing.T) {
	addr := func(lines []string, city, region, country, lang string) api.Address {
		return api.Address{Lines: lines, City: city, Region: region, Country: country, Language: lang}
	}
	tests := []struct {
		name string
		a, b api.Address
		same bool
	}{
		{"case and space", addr([]string{"1 Main St"}, "Cork", "", "IE", ""), addr([]string{" 1  MAIN st"}, "CORK ", "", "ie", ""), true},
		{"unicode case", addr([]string{"Straße 1"}, "", "", "DE", ""), addr([]string{"STRAßE 1"}, "", "", "de", ""), true},
		{"line split differs", addr([]string{"1 Main St", "Cork"}, "", "", "IE", ""), addr([]string{"1 Main St Cork"}, "", "", "IE", ""), false},
		{"field boundary", addr([]string{"a"}, "b", "", "IE", ""), addr([]string{"a b"}, "", "", "IE", ""), false},
		{"city vs region", addr([]string{"a"}, "Cork", "", "IE", ""), addr([]string{"a"}, "", "Cork", "IE", ""), false},
		{"language", addr([]string{"a"}, "", "", "IE", "en"), addr([]string{"a"}, "", "", "IE", "ga"), false},
		{"country", addr([]string{"a"}, "", "", "IE", ""), addr([]string{"a"}, "", "", "GB", ""), false},
		{"separator text", addr([]string{"1:a"}, "", "", "IE", ""), addr([]string{"1", "a"}, "", "", "IE", ""), false},
		{"separator bytes", addr([]string{"a\x00"}, "", "", "IE", ""), addr([]string{"a", ""}, "", "", "IE", ""), false},
		{"field separator bytes", addr([]string{"a"}, "b\x01c", "", "IE", ""), addr([]string{"a"}, "b", "c", "IE", ""), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := dedupKey(tt.a) == dedupKey(tt.b); got != tt.same {
				t.Fatalf("same = %v, want %v (%q, %q)", got, tt.same, dedupKey(tt.a), dedupKey(tt.b))
			}
		})
	}
}

// TestInterruptLeavesOrderedPrefix cancels the run while row 10 is in flight
// and stuck: rows 1-9 are written, row 10 and everything after are not.
func TestInterruptLeavesOrderedPrefix(t *testing.T) {
	ctx, cancel := context.WithCancel(testCtx(t))
	var before sync.WaitGroup
	before.Add(9)
	v := &fakeVerifier{fn: func(c context.Context, a api.Address, _ int64) (*api.VerifyResponse, error) {
		n, _ := strconv.Atoi(strings.Fields(a.Lines[0])[0])
		switch {
		case n < 10:
			defer before.Done()
		case n == 10:
			before.Wait() // rows 1-9 are done: now interrupt
			cancel()
			<-c.Done() // stuck until the grace ends
			return nil, fmt.Errorf("api: verify: %w", c.Err())
		}
		return answer(a, api.ActionAccept), nil
	}}
	w := &memWriter{}
	st, err := Run(ctx, Config{
		Source: &genSource{n: 10000, cells: distinct}, Mapper: cellMapper, Verifier: v,
		Workers: 8, Timeout: 10 * time.Millisecond,
	}.with(w))
	if !errors.Is(err, context.Canceled) || !st.Interrupted {
		t.Fatalf("err = %v, interrupted = %v", err, st.Interrupted)
	}
	got := w.rows()
	checkPrefix(t, got)
	if len(got) != 9 || st.RowsWritten != 9 {
		t.Fatalf("wrote %d rows (stats %d), want 9", len(got), st.RowsWritten)
	}
}

// TestInterruptLetsInFlightFinish cancels while calls are in flight that
// finish within the grace: their rows are written.
func TestInterruptLetsInFlightFinish(t *testing.T) {
	ctx, cancel := context.WithCancel(testCtx(t))
	v := &fakeVerifier{fn: func(c context.Context, a api.Address, _ int64) (*api.VerifyResponse, error) {
		if a.Lines[0] == "300 Main Street" {
			cancel() // this call is in flight: it still answers
		}
		return answer(a, api.ActionAccept), nil
	}}
	w := &memWriter{}
	st, err := Run(ctx, Config{Source: &genSource{n: 100000, cells: distinct}, Mapper: cellMapper, Verifier: v, Workers: 1}.with(w))
	if !errors.Is(err, context.Canceled) || !st.Interrupted {
		t.Fatalf("err = %v, interrupted = %v", err, st.Interrupted)
	}
	got := w.rows()
	checkPrefix(t, got)
	// One worker: rows are verified one at a time, so rows 1-300 are done.
	if len(got) != 300 {
		t.Fatalf("wrote %d rows, want 300", len(got))
	}
}

func TestWriterErrorStops(t *testing.T) {
	v := &fakeVerifier{}
	w := &memWriter{failAt: 5}
	st, err := Run(testCtx(t), Config{Source: &genSource{n: 1_000_000, cells: distinct}, Mapper: cellMapper, Verifier: v}.with(w))
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "row 5") {
		t.Fatalf("err = %v", err)
	}
	if st.RowsWritten != 4 || st.RowsRead > 10000 {
		t.Fatalf("written %d, read %d", st.RowsWritten, st.RowsRead)
	}
}

func TestReaderErrorFinishesRead(t *testing.T) {
	bad := errors.New("line 51: bare quote")
	v := &fakeVerifier{}
	w := &memWriter{}
	st, err := Run(testCtx(t), Config{
		Source: &genSource{n: 100, cells: distinct, failAt: 50, failErr: bad}, Mapper: cellMapper, Verifier: v,
	}.with(w))
	if !errors.Is(err, bad) {
		t.Fatalf("err = %v", err)
	}
	got := w.rows()
	checkPrefix(t, got)
	if len(got) != 49 || st.Interrupted {
		t.Fatalf("wrote %d rows, interrupted %v", len(got), st.Interrupted)
	}
}

// TestLimiterAdapts runs 429s through a real Limiter: every worker waits
// out the pause on the limiter, none sleeps on its own, and the limit is
// cut.
func TestLimiterAdapts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := ratelimit.New(20, 1)
		var (
			mu    sync.Mutex
			calls []time.Time
		)
		v := &fakeVerifier{fn: func(c context.Context, a api.Address, call int64) (*api.VerifyResponse, error) {
			mu.Lock()
			calls = append(calls, time.Now())
			mu.Unlock()
			if call%10 == 0 {
				return nil, rateLimited(2 * time.Second)
			}
			return answer(a, api.ActionAccept), nil
		}}
		w := &memWriter{}
		st, err := Run(t.Context(), Config{Source: &genSource{n: 200, cells: distinct}, Mapper: cellMapper, Verifier: v,
			Limiter: lim, Workers: 4}.with(w))
		if err != nil {
			t.Fatal(err)
		}
		if len(w.rows()) != 200 || st.RateLimited == 0 {
			t.Fatalf("rows %d, 429s %d", len(w.rows()), st.RateLimited)
		}
		// After each 429 (every tenth call) no call goes for 2 s: the
		// pause holds every worker, and the 429's own row goes after it.
		sort.Slice(calls, func(i, j int) bool { return calls[i].Before(calls[j]) })
		pauses := 0
		for i := 1; i < len(calls); i++ {
			if calls[i].Sub(calls[i-1]) >= 2*time.Second {
				pauses++
			}
		}
		if int64(pauses) < st.RateLimited/2 {
			t.Fatalf("%d pauses of 2 s for %d 429s", pauses, st.RateLimited)
		}
		if st.RateLimit <= 0 || st.RateLimit >= 20 {
			t.Fatalf("rate limit at the end = %v, want cut under 20", st.RateLimit)
		}
	})
}

func TestProgress(t *testing.T) {
	var calls []Progress
	var inCall atomic.Bool
	progress := func(p Progress) {
		if !inCall.CompareAndSwap(false, true) {
			t.Error("Progress called concurrently")
		}
		calls = append(calls, p)
		inCall.Store(false)
	}
	cells := func(i int) []string {
		if i%4 == 0 {
			return []string{"", "IE"}
		}
		return distinct(i)
	}
	st, err := Run(testCtx(t), Config{Source: &genSource{n: 40, cells: cells}, Mapper: cellMapper, Verifier: &fakeVerifier{},
		Progress: progress, ProgressInterval: -1}.with(&memWriter{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 41 {
		t.Fatalf("%d progress calls, want 40 rows + 1 final", len(calls))
	}
	for i := 1; i < len(calls); i++ {
		if calls[i].RowsDone < calls[i-1].RowsDone {
			t.Fatal("RowsDone went backwards")
		}
	}
	last := calls[len(calls)-1]
	if last.RowsDone != 40 || last.Actions.Accept != 30 || last.Actions.Error != 10 || last.CallsMade != st.CallsMade {
		t.Fatalf("final progress = %+v", last)
	}
}

func TestReasonText(t *testing.T) {
	secret := "tok_0123456789abcdef"
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"status with message", statusErr(400, "country is required"), "service answered 400: country is required"},
		{"rate limited", rateLimited(time.Second), "service answered 429: Too Many Requests"},
		{"url error keeps no URL", fmt.Errorf("api: verify: %w", &url.Error{Op: "Get", URL: "https://x/3.0/verify?token=" + secret, Err: io.ErrUnexpectedEOF}),
			"verify: Get: unexpected EOF"},
		{"nested url error", &url.Error{Op: "Post", URL: "https://x/?token=" + secret, Err: &url.Error{Op: "Get", URL: secret, Err: errors.New("boom")}},
			"Post: Get: boom"},
		{"multi-line", errors.New("api: one\n two\tthree  "), "one two three"},
		{"empty", errors.New(" "), "unknown error"},
		{"long", errors.New(strings.Repeat("é", 400)), strings.Repeat("é", maxReason/2) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := reason(tt.err)
			if got != tt.want {
				t.Fatalf("reason = %q, want %q", got, tt.want)
			}
			if strings.Contains(got, secret) {
				t.Fatal("the token leaked into a reason")
			}
		})
	}
}

func TestLimit(t *testing.T) {
	for _, tc := range []struct{ limit, rows, want int64 }{{0, 50, 50}, {10, 50, 10}, {50, 50, 50}, {80, 50, 50}, {-1, 5, 5}} {
		t.Run(fmt.Sprintf("limit=%d/rows=%d", tc.limit, tc.rows), func(t *testing.T) {
			v := &fakeVerifier{}
			w := &memWriter{}
			st, err := Run(testCtx(t), Config{Source: &genSource{n: int(tc.rows), cells: distinct}, Mapper: cellMapper,
				Verifier: v, Limit: tc.limit}.with(w))
			if err != nil {
				t.Fatal(err)
			}
			if st.RowsRead != tc.want || int64(len(w.rows())) != tc.want || v.calls.Load() != tc.want {
				t.Fatalf("read %d, wrote %d, calls %d; want %d", st.RowsRead, len(w.rows()), v.calls.Load(), tc.want)
			}
		})
	}
}

// TestCancelAfterLastRow cancels once every row is written: nothing was
// interrupted, so Run succeeds.
func TestCancelAfterLastRow(t *testing.T) {
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	const n = 20
	calls := 0
	st, err := Run(ctx, Config{Source: &genSource{n: n, cells: distinct}, Mapper: cellMapper, Verifier: &fakeVerifier{},
		ProgressInterval: -1, Progress: func(Progress) {
			if calls++; calls == n+1 { // the final report, after the last row
				cancel()
			}
		}}.with(&memWriter{}))
	if err != nil || st.Interrupted || st.RowsWritten != n {
		t.Fatalf("err = %v, interrupted = %v, written = %d", err, st.Interrupted, st.RowsWritten)
	}
}

// mapCache is a Cache in memory.
type mapCache struct {
	mu             sync.Mutex
	m              map[string]*api.VerifyResponse
	puts           int
	getErr, putErr error
}

func (c *mapCache) Get(_ context.Context, key string) (*api.VerifyResponse, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.getErr != nil {
		return nil, false, c.getErr
	}
	r, ok := c.m[key]
	return r, ok, nil
}

func (c *mapCache) Put(_ context.Context, key string, resp *api.VerifyResponse) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.putErr != nil {
		return c.putErr
	}
	c.m[key] = resp
	c.puts++
	return nil
}

func TestCache(t *testing.T) {
	stored := answer(api.Address{Lines: []string{"from the cache"}}, api.ActionConfirm)
	cache := &mapCache{m: map[string]*api.VerifyResponse{
		dedupKey(api.Address{Lines: []string{"2 main street"}, Country: "ie"}): stored,
	}}
	cells := func(i int) []string {
		if i == 5 {
			return distinct(2) // a duplicate of the cached row 2
		}
		if i == 6 {
			return []string{"Bad", "IE"}
		}
		return distinct(i)
	}
	v := &fakeVerifier{fn: func(_ context.Context, a api.Address, _ int64) (*api.VerifyResponse, error) {
		if a.Lines[0] == "Bad" {
			return nil, statusErr(400, "bad")
		}
		return answer(a, api.ActionAccept), nil
	}}
	w := &memWriter{}
	st, err := Run(testCtx(t), Config{Source: &genSource{n: 6, cells: cells}, Mapper: cellMapper, Verifier: v,
		Cache: cache, Workers: 1}.with(w))
	if err != nil {
		t.Fatal(err)
	}
	got := w.rows()
	if got[1].Response != stored || !got[1].Cached || got[4].Response != stored || !got[4].Cached {
		t.Fatalf("rows 2 and 5 were not answered from the cache: %+v", got[1])
	}
	if !got[1].FromCache || !got[4].FromCache {
		t.Fatal("rows 2 and 5 not marked FromCache")
	}
	if got[0].Cached || got[0].FromCache || got[0].Response == stored {
		t.Fatal("row 1 marked cached")
	}
	// Rows 1, 3, 4 are verified and stored; the refusal of row 6 is not.
	if st.CacheHits != 1 || st.CallsSaved != 1 || v.calls.Load() != 4 || cache.puts != 3 {
		t.Fatalf("cache hits %d, saved %d, calls %d, puts %d", st.CacheHits, st.CallsSaved, v.calls.Load(), cache.puts)
	}
}

// TestCacheErrorStopsRun: a broken cache stops the run instead of being
// read as a miss (which would pay again for every stored answer).
func TestCacheErrorStopsRun(t *testing.T) {
	broken := errors.New("disk on fire")
	for _, tc := range []struct {
		name  string
		cache *mapCache
	}{
		{"get", &mapCache{m: map[string]*api.VerifyResponse{}, getErr: broken}},
		{"put", &mapCache{m: map[string]*api.VerifyResponse{}, putErr: broken}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := &fakeVerifier{fn: func(_ context.Context, a api.Address, _ int64) (*api.VerifyResponse, error) {
				return answer(a, api.ActionAccept), nil
			}}
			w := &memWriter{}
			_, err := Run(testCtx(t), Config{Source: &genSource{n: 50, cells: distinct}, Mapper: cellMapper, Verifier: v,
				Cache: tc.cache, Workers: 1}.with(w))
			if !errors.Is(err, broken) {
				t.Fatalf("err = %v, want the cache error", err)
			}
			if n := v.calls.Load(); n > 1 {
				t.Fatalf("%d calls after a cache error; want the run stopped at once", n)
			}
		})
	}
}

// TestSpillChecksDamage: a record damaged on disk is an error, never another
// address's verdict or a changed answer.
func TestSpillChecksDamage(t *testing.T) {
	s := &spill{dir: t.TempDir()}
	defer s.close()
	resp := &api.VerifyResponse{Action: api.ActionAccept, Address: api.MatchedAddress{ID: "A1", Label: []string{"1 Main Street"}}}
	for i := range 3 {
		if err := s.put(strconv.Itoa(i), verdict{resp: resp}); err != nil {
			t.Fatal(err)
		}
	}
	if v, ok, err := s.get("1"); err != nil || !ok || v.resp.Address.ID != "A1" {
		t.Fatalf("get: %+v %v %v", v, ok, err)
	}
	if _, ok, err := s.get("4"); err != nil || ok {
		t.Fatalf("a key never put: %v %v", ok, err)
	}
	// A byte of the answer of the record of "2" (the only one in its chain).
	k := spillKeyOf("2")
	if err := s.w.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.f.WriteAt([]byte{'X'}, int64(s.heads[k.bucket(len(s.heads))])*spillAlign+spillHeader+20); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.get("2"); err == nil || !errors.Is(err, errBadVerdict) {
		t.Fatalf("a damaged record read back without error: %v", err)
	}
}

// claimCache is a SharedCache: every miss is a claim, which Run must end
// with Put or Release.
type claimCache struct {
	mapCache
	claims   map[string]bool
	released []string
}

func (c *claimCache) Get(ctx context.Context, key string) (*api.VerifyResponse, bool, error) {
	r, ok, err := c.mapCache.Get(ctx, key)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !ok && err == nil {
		c.claims[key] = true
	}
	return r, ok, err
}

func (c *claimCache) Put(ctx context.Context, key string, resp *api.VerifyResponse) error {
	c.mu.Lock()
	delete(c.claims, key)
	c.mu.Unlock()
	return c.mapCache.Put(ctx, key, resp)
}

func (c *claimCache) Release(_ context.Context, key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.claims, key)
	c.released = append(c.released, key)
	return nil
}

// TestSharedCacheReleases: a shared cache's claim on a request that got no
// answer (refused, or failed after retries) is released, so that another
// runner waiting for it takes it up at once; answered ones end with Put.
func TestSharedCacheReleases(t *testing.T) {
	c := &claimCache{mapCache: mapCache{m: map[string]*api.VerifyResponse{}}, claims: map[string]bool{}}
	v := &fakeVerifier{fn: func(_ context.Context, a api.Address, _ int64) (*api.VerifyResponse, error) {
		switch a.Lines[0] {
		case "2 Main Street":
			return nil, statusErr(400, "bad")
		case "3 Main Street":
			return nil, statusErr(503, "down")
		}
		return answer(a, api.ActionAccept), nil
	}}
	w := &memWriter{}
	_, err := Run(testCtx(t), Config{Source: &genSource{n: 4, cells: distinct}, Mapper: cellMapper, Verifier: v,
		Cache: c, Workers: 1, Retries: -1, BreakerRows: -1, BreakerShare: -1}.with(w))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.claims) != 0 {
		t.Fatalf("claims left: %v", c.claims)
	}
	want := []string{dedupKey(api.Address{Lines: []string{"2 Main Street"}, Country: "IE"}),
		dedupKey(api.Address{Lines: []string{"3 Main Street"}, Country: "IE"})}
	if !slices.Equal(c.released, want) || c.puts != 2 {
		t.Fatalf("released %q, %d put; want %q and 2", c.released, c.puts, want)
	}
}

// waitingCache is a SharedCache whose Get waits, as for another runner's
// answer, until its context ends.
type waitingCache struct {
	claimCache
	waiting chan struct{}
}

func (c *waitingCache) Get(ctx context.Context, _ string) (*api.VerifyResponse, bool, error) {
	close(c.waiting)
	<-ctx.Done()
	return nil, false, ctx.Err()
}

// TestSharedCacheWaitInterrupted: an interrupt while a row waits for another
// runner's answer ends the wait at once: the run is interrupted (resumable),
// not stopped by a cache error, and the row is not written.
func TestSharedCacheWaitInterrupted(t *testing.T) {
	c := &waitingCache{claimCache: claimCache{mapCache: mapCache{m: map[string]*api.VerifyResponse{}}, claims: map[string]bool{}},
		waiting: make(chan struct{})}
	ctx, cancel := context.WithCancel(testCtx(t))
	go func() {
		<-c.waiting
		cancel()
	}()
	w := &memWriter{}
	v := &fakeVerifier{}
	st, err := Run(ctx, Config{Source: &genSource{n: 1, cells: distinct}, Mapper: cellMapper, Verifier: v,
		Cache: c, Workers: 1, Timeout: time.Millisecond}.with(w))
	if !errors.Is(err, context.Canceled) || !st.Interrupted || st.Stopped != "" {
		t.Fatalf("err %v, interrupted %v, stopped %q", err, st.Interrupted, st.Stopped)
	}
	if len(w.rows()) != 0 || v.calls.Load() != 0 {
		t.Fatalf("%d rows written, %d calls", len(w.rows()), v.calls.Load())
	}
}

// TestSpillIndexGrows: the spill's index starts small, doubles with the
// verdicts it holds and stops at its cap, and every verdict is found
// through every doubling, whatever its chain's length.
func TestSpillIndexGrows(t *testing.T) {
	const maxHeads = 4 * spillMinBuckets
	s := &spill{dir: t.TempDir(), maxHeads: maxHeads}
	defer s.close()
	v := func(i int) verdict {
		return verdict{reason: "refused " + strconv.Itoa(i), kind: runstats.ErrKindPermanent}
	}
	tests := []struct{ puts, heads int }{
		{1, spillMinBuckets},
		{spillMinBuckets, spillMinBuckets},
		{spillMinBuckets + 1, 2 * spillMinBuckets},
		{3 * spillMinBuckets, maxHeads},
		{10 * maxHeads, maxHeads}, // chains ten long on average
	}
	put := 0
	for _, tt := range tests {
		for ; put < tt.puts; put++ {
			if err := s.put(strconv.Itoa(put), v(put)); err != nil {
				t.Fatal(err)
			}
		}
		if len(s.heads) != tt.heads {
			t.Fatalf("after %d verdicts: %d chains, want %d", put, len(s.heads), tt.heads)
		}
		for _, i := range []int{0, put / 3, put / 2, put - 1} {
			if got, ok, err := s.get(strconv.Itoa(i)); err != nil || !ok || got.reason != v(i).reason {
				t.Fatalf("after %d verdicts: get(%d) = %+v %v %v", put, i, got, ok, err)
			}
		}
		if _, ok, err := s.get("never"); err != nil || ok {
			t.Fatalf("after %d verdicts: a key never put: %v %v", put, ok, err)
		}
	}
	for i := 0; i < put; i += 7 {
		if got, ok, err := s.get(strconv.Itoa(i)); err != nil || !ok || got.reason != v(i).reason {
			t.Fatalf("get(%d) = %+v %v %v", i, got, ok, err)
		}
	}
}

// TestSpillChainLoop: a chain damaged into a loop is an error, not a hang.
func TestSpillChainLoop(t *testing.T) {
	s := &spill{dir: t.TempDir()}
	defer s.close()
	if err := s.put("a", verdict{reason: "x", kind: runstats.ErrKindPermanent}); err != nil {
		t.Fatal(err)
	}
	if err := s.w.Flush(); err != nil {
		t.Fatal(err)
	}
	k := spillKeyOf("b") // never put, in a's chain after the damage
	a := spillKeyOf("a")
	at := s.heads[a.bucket(len(s.heads))]
	s.heads[k.bucket(len(s.heads))] = at
	s.sigs[k.bucket(len(s.heads))] = ^uint32(0)
	var self [4]byte
	binary.LittleEndian.PutUint32(self[:], at)
	if _, err := s.f.WriteAt(self[:], int64(at)*spillAlign); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.get("b"); !errors.Is(err, errBadVerdict) {
		t.Fatalf("get through a looping chain: %v", err)
	}
}

// TestSpillMissesReadLittle: the lookup of an address never spilled, the
// most common one, seldom reads the file (the chains' signatures): without
// them, 20,000 such lookups read 42,000 records, their chains being also
// those their twins had before the index doubled.
func TestSpillMissesReadLittle(t *testing.T) {
	s := &spill{dir: t.TempDir()}
	defer s.close()
	const n = 20000
	for i := range n {
		if err := s.put(strconv.Itoa(i), verdict{reason: "x", kind: runstats.ErrKindPermanent}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if _, ok, err := s.get("new " + strconv.Itoa(i)); err != nil || ok {
			t.Fatalf("a key never put: %v %v", ok, err)
		}
	}
	if s.reads > n/10 {
		t.Errorf("%d lookups of keys never put read %d records; want at most %d", n, s.reads, n/10)
	}
	t.Logf("%d lookups of keys never put read %d records (%d chains)", n, s.reads, len(s.heads))
}
