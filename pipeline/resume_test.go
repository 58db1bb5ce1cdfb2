package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/journal"
	"github.com/addrclean/addrclean/runstats"
	"github.com/addrclean/addrclean/writers"
)

// outage answers the first ok calls and fails every later one with 503.
func outage(ok int64) *fakeVerifier {
	return &fakeVerifier{fn: func(ctx context.Context, a api.Address, call int64) (*api.VerifyResponse, error) {
		if call <= ok {
			return answer(a, api.ActionAccept), nil
		}
		return nil, statusErr(503, "down for maintenance")
	}}
}

// TestBreakerStopsOutage: a service that fails everything after some calls
// stops the run with ErrServiceUnavailable after about BreakerRows rows, not
// a million Error rows; the rows not reached are not written.
func TestBreakerStopsOutage(t *testing.T) {
	const workers, good = 8, 300
	v := outage(good)
	w := &memWriter{}
	st, err := Run(testCtx(t), Config{
		Source: &genSource{n: 1_000_000, cells: distinct}, Mapper: cellMapper, Verifier: v, Workers: workers,
		Retries: 2, Jitter: noJitter,
	}.with(w))
	if !errors.Is(err, ErrServiceUnavailable) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("err = %v, want ErrServiceUnavailable naming the last failure", err)
	}
	if st.Stopped != "service_unavailable" || st.Complete || st.Interrupted {
		t.Fatalf("stats: stopped %q complete %v interrupted %v", st.Stopped, st.Complete, st.Interrupted)
	}
	// Each failed row costs 3 calls and the breaker needs 20 in a row; good
	// answers finishing late (rows overtake each other) may restart the
	// count once or twice. A million rows must not be tried.
	if calls := v.calls.Load(); calls > good+200 {
		t.Fatalf("%d calls for %d good ones: the outage was not cut short", calls, good)
	}
	got := w.rows()
	checkPrefix(t, got)
	// How many good rows come before the first gap depends on scheduling
	// (a row may be in its retries when the breaker trips): the written
	// rows must be answers, or failures of the outage itself.
	for _, r := range got {
		if r.Response == nil && !strings.Contains(r.Err, "503") {
			t.Fatalf("row %d: %q", r.Row, r.Err)
		}
	}
	// Every good answer that finishes after a failure restarts the count,
	// and up to a worker's worth of them can; under load that happened with
	// 38 Error rows (5 runs in 300 went past 20+workers).
	if errs := st.Actions[ActionError]; errs > 2*(DefaultBreakerRows+workers) {
		t.Fatalf("%d Error rows written", errs)
	}
}

// TestBreakerShare trips on a service failing most calls without ever
// failing twenty rows in a row; refusals and scattered failures do not trip.
func TestBreakerShare(t *testing.T) {
	tests := []struct {
		name     string
		fail     func(call int64) error
		wantTrip bool
	}{
		{"three of four rows fail", func(c int64) error {
			if c%4 != 0 {
				return statusErr(502, "bad gateway")
			}
			return nil
		}, true},
		{"one in ten rows fails", func(c int64) error {
			if c%10 == 0 {
				return statusErr(502, "bad gateway")
			}
			return nil
		}, false},
		{"every row refused (400)", func(int64) error { return statusErr(400, "no such address") }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := &fakeVerifier{fn: func(ctx context.Context, a api.Address, call int64) (*api.VerifyResponse, error) {
				if err := tc.fail(call); err != nil {
					return nil, err
				}
				return answer(a, api.ActionAccept), nil
			}}
			const n = 2000
			st, err := Run(testCtx(t), Config{
				Source: &genSource{n: n, cells: distinct}, Mapper: cellMapper, Verifier: v, Workers: 1,
				Retries: -1,
			}.with(&memWriter{}))
			if tripped := errors.Is(err, ErrServiceUnavailable); tripped != tc.wantTrip {
				t.Fatalf("err = %v, want tripped %v", err, tc.wantTrip)
			}
			if tc.wantTrip && (st.RowsWritten < DefaultBreakerWindow || st.RowsWritten > DefaultBreakerWindow+10) {
				t.Fatalf("tripped after %d rows, want just after the window of %d", st.RowsWritten, DefaultBreakerWindow)
			}
			if !tc.wantTrip && (err != nil || st.RowsWritten != n) {
				t.Fatalf("err %v, %d rows written", err, st.RowsWritten)
			}
		})
	}
}

// TestMaxErrors: the run stops once the Error rows pass the limit, or
// finishes and still reports the limit passed when the share is judged at
// the end.
func TestMaxErrors(t *testing.T) {
	everyTenth := func(i int) []string {
		if i%10 == 0 {
			return []string{"", "IE"} // no address: an Error row
		}
		return distinct(i)
	}
	tests := []struct {
		name         string
		n            int
		count        int64
		share        float64
		wantErr      bool
		wantComplete bool
		maxWritten   int64
	}{
		{"count passed", 1000, 5, 0, true, false, 60},
		{"count not passed", 1000, 100, 0, false, true, 1000},
		{"share passed after 100 rows", 1000, 0, 0.05, true, false, 100},
		{"share not passed", 1000, 0, 0.2, false, true, 1000},
		{"share passed at the end of a small file", 30, 0, 0.05, true, true, 30},
		{"no limit", 1000, 0, 0, false, true, 1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := &memWriter{}
			st, err := Run(testCtx(t), Config{
				Source: &genSource{n: tc.n, cells: everyTenth}, Mapper: cellMapper, Verifier: &fakeVerifier{},
				Workers: 4, LimitErrors: tc.count > 0, MaxErrors: tc.count, MaxErrorShare: tc.share,
			}.with(w))
			if got := errors.Is(err, ErrTooManyErrors); got != tc.wantErr {
				t.Fatalf("err = %v, want ErrTooManyErrors %v", err, tc.wantErr)
			}
			if tc.wantErr && !strings.Contains(err.Error(), "more than the limit") {
				t.Errorf("err %q does not name the limit", err)
			}
			if st.Complete != tc.wantComplete || st.RowsWritten > tc.maxWritten {
				t.Fatalf("complete %v, %d rows written; want %v, at most %d", st.Complete, st.RowsWritten, tc.wantComplete, tc.maxWritten)
			}
			if tc.wantErr && st.Stopped != "max_errors" {
				t.Errorf("stopped = %q", st.Stopped)
			}
			checkPrefix(t, w.rows())
		})
	}
}

// TestResumeFromJournal interrupts a run, resumes it from its journal and
// checks that the resumed outputs equal an uninterrupted run's, that no row
// is verified twice, that refusals are replayed and that rows whose retries
// ran out are tried again.
func TestResumeFromJournal(t *testing.T) {
	const n, workers = 3000, 8
	cells := func(i int) []string {
		switch {
		case i%97 == 0:
			return []string{"", "IE"} // no address
		case i%13 == 0:
			return distinct(i - 1) // a duplicate of the row before
		case i%17 == 0:
			// A case variant of the row before: it shares that row's verdict
			// in every run, even when that row failed in the first one.
			c := distinct(i - 1)
			c[0] = strings.ToUpper(c[0])
			return c
		}
		return distinct(i)
	}
	refused := func(a api.Address) bool { return strings.HasPrefix(a.Lines[0], "5") }
	flaky := func(a api.Address) bool { return strings.HasPrefix(a.Lines[0], "7") }
	var broken atomic.Bool // rows starting 7 fail while broken
	var mu sync.Mutex
	answered := map[string]int{} // calls the service answered or refused, per address
	service := func(cancelAt int64, cancel context.CancelFunc) *fakeVerifier {
		return &fakeVerifier{fn: func(ctx context.Context, a api.Address, call int64) (*api.VerifyResponse, error) {
			if call == cancelAt {
				cancel()
			}
			if flaky(a) && broken.Load() {
				return nil, statusErr(503, "down")
			}
			mu.Lock()
			answered[a.Lines[0]]++
			mu.Unlock()
			if refused(a) {
				return nil, statusErr(400, "refused")
			}
			resp := answer(a, api.ActionSuggest)
			if a.Lines[0] == strings.ToUpper(a.Lines[0]) {
				resp.Information.Status = "Corrected" // the answer depends on the spelling
			}
			return resp, nil
		}}
	}
	cfg := func(v Verifier, j Journal, w *memWriter) Config {
		c := Config{Source: &genSource{n: n, cells: cells}, Mapper: cellMapper, Verifier: v, Workers: workers,
			Retries: -1, BreakerRows: -1, BreakerShare: -1}.with(w)
		if j != nil {
			c.Journal = j
		}
		return c
	}

	// The reference: one uninterrupted run with the service healthy, which
	// answers every distinct address once.
	clean := &memWriter{}
	if _, err := Run(testCtx(t), cfg(service(0, nil), nil, clean)); err != nil {
		t.Fatal(err)
	}
	broken.Store(true)

	path := filepath.Join(t.TempDir(), "out.journal")
	meta := journal.Meta{Options: map[string]string{"test": "1"}}
	j, err := journal.Create(context.Background(), path, meta)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	v1 := service(1200, cancel)
	st1, err := Run(ctx, cfg(v1, j, &memWriter{}))
	if !errors.Is(err, context.Canceled) || !st1.Interrupted {
		t.Fatalf("first run: %v", err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}

	broken.Store(false) // the service recovered
	j, err = journal.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Continue(); err != nil {
		t.Fatal(err)
	}
	v2 := service(0, nil)
	resumed := &memWriter{}
	counted := &countingJournal{Journal: j}
	st2, err := Run(testCtx(t), cfg(v2, counted, resumed))
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}

	got, want := resumed.rows(), clean.rows()
	if len(got) != len(want) {
		t.Fatalf("resumed run wrote %d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if !sameResult(got[i], want[i]) {
			t.Fatalf("row %d differs:\n resumed %+v\n   clean %+v", want[i].Row, got[i], want[i])
		}
	}
	if st2.RowsResumed == 0 || st2.RowsResumed != counted.found.Load() {
		t.Fatalf("rows resumed %d, journal replayed %d", st2.RowsResumed, counted.found.Load())
	}
	// The clean run's calls are not counted: once for each address over
	// both runs of the interrupted one, apart from the 503s.
	for addr, calls := range answered {
		if calls != 2 {
			t.Fatalf("%q answered %d times by the interrupted and resumed runs", addr, calls-1)
		}
	}
	if st1.Errors[runstats.ErrKindTransient] == 0 {
		t.Fatal("the first run had no failed rows to retry: the test proves nothing about them")
	}
	if st2.Errors[runstats.ErrKindTransient] != 0 {
		t.Fatalf("rows that failed in the first run are still Error: %v", st2.Errors)
	}
	if st2.Errors[runstats.ErrKindPermanent] == 0 {
		t.Fatal("no refusals")
	}
}

// sameResult compares what the writers see of a result.
func sameResult(a, b writers.Result) bool {
	return a.Row == b.Row && a.Err == b.Err && a.FromCache == b.FromCache && a.Cached == b.Cached && a.InputLabel == b.InputLabel &&
		reflect.DeepEqual(a.Cells, b.Cells) && reflect.DeepEqual(a.Response, b.Response)
}

// TestOutputsDoNotDependOnTiming: with case variants of addresses (which
// share one verdict, the first's) and a small deduplication cache, the
// outputs are the same whatever the workers and whichever call finishes
// first: which row leads is decided in input order.
func TestOutputsDoNotDependOnTiming(t *testing.T) {
	spellings := []string{"7 Kickham Lane", "7 kickham lane", "7 KICKHAM LANE"}
	cells := func(i int) []string {
		// 40 addresses, each under three spellings, in a shuffled order.
		n := (i * 7919) % 120
		return []string{strings.Replace(spellings[n%3], "7", strconv.Itoa(n/3), 1), "IE"}
	}
	run := func(workers int, seed uint64) []writers.Result {
		rnd := rand.New(rand.NewPCG(seed, 3))
		var mu sync.Mutex
		v := &fakeVerifier{fn: func(ctx context.Context, a api.Address, call int64) (*api.VerifyResponse, error) {
			mu.Lock()
			spin := rnd.IntN(200)
			mu.Unlock()
			for range spin {
				runtime.Gosched()
			}
			resp := answer(a, api.ActionAccept)
			if a.Lines[0] != strings.ToUpper(a.Lines[0][:1])+a.Lines[0][1:] {
				resp.Information.Status = "Corrected" // the answer depends on the spelling sent
			}
			return resp, nil
		}}
		w := &memWriter{}
		if _, err := Run(testCtx(t), Config{Source: &genSource{n: 3000, cells: cells}, Mapper: cellMapper,
			Verifier: v, Workers: workers, DedupCache: 16}.with(w)); err != nil {
			t.Fatal(err)
		}
		return w.rows()
	}
	want := run(1, 1)
	for i, workers := range []int{8, 64, 8, 64} {
		got := run(workers, uint64(i+2))
		for j := range want {
			if !sameResult(got[j], want[j]) || got[j].Cached != want[j].Cached {
				t.Fatalf("workers %d: row %d differs from the one-worker run:\n got %+v\nwant %+v",
					workers, want[j].Row, got[j].Response.Information, want[j].Response.Information)
			}
		}
	}
}

// TestFatalAfterLastRowIsNotComplete: a cache that fails to store the last
// row's answer stops the run after every row was written; the run must not
// call itself complete, or its caller would throw the journal away.
func TestFatalAfterLastRowIsNotComplete(t *testing.T) {
	c := &mapCache{m: map[string]*api.VerifyResponse{}, putErr: errors.New("disk full")}
	w := &memWriter{}
	st, err := Run(testCtx(t), Config{Source: &genSource{n: 1, cells: distinct}, Mapper: cellMapper,
		Verifier: &fakeVerifier{}, Cache: c}.with(w))
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v", err)
	}
	if len(w.rows()) != 1 || st.Complete || st.Stopped != "fatal" {
		t.Fatalf("%d rows written, complete %v, stopped %q", len(w.rows()), st.Complete, st.Stopped)
	}
}

// TestOutageWithErrorLimit: during an outage a small error limit may stop
// the run before the breaker; its error says the rows failed after
// retries, not that the input is bad.
func TestOutageWithErrorLimit(t *testing.T) {
	_, err := Run(testCtx(t), Config{Source: &genSource{n: 10_000, cells: distinct}, Mapper: cellMapper,
		Verifier: outage(50), Workers: 4, Retries: -1, LimitErrors: true, MaxErrors: 5,
		// Which of the two stops the run first depends on timing (the
		// breaker counts rows as they finish, the limit as they are
		// written): this test is about the limit's message.
		BreakerRows: -1, BreakerShare: -1}.with(&memWriter{}))
	if !errors.Is(err, ErrTooManyErrors) || !strings.Contains(err.Error(), "6 failed after retries") {
		t.Fatalf("err = %v", err)
	}
}

// TestReplayFillsTheCache: a run killed after journalling a row and before
// caching its answer leaves the answer out of the cache. The resumed run
// must put it there, or a later case variant of the address would miss the
// cache and be answered for its own spelling, unlike in an uninterrupted
// run. In-run deduplication would answer the variant first, so it is off
// here (DedupCache -1): the next run, which has only the cache, is what the
// test stands for.
func TestReplayFillsTheCache(t *testing.T) {
	const n = 40
	cells := func(i int) []string {
		if i == n {
			return []string{"1 MAIN STREET", "IE"} // row 1's address, another spelling
		}
		return distinct(i)
	}
	v := &fakeVerifier{fn: func(ctx context.Context, a api.Address, call int64) (*api.VerifyResponse, error) {
		resp := answer(a, api.ActionAccept)
		if a.Lines[0] == strings.ToUpper(a.Lines[0]) {
			resp.Information.Status = "Corrected"
		}
		return resp, nil
	}}
	cfg := func(c Cache, j Journal, w *memWriter) Config {
		cfg := Config{Source: &genSource{n: n, cells: cells}, Mapper: cellMapper, Verifier: v, Workers: 1,
			Window: 1, DedupCache: -1, Cache: c}.with(w)
		if j != nil {
			cfg.Journal = j
		}
		return cfg
	}
	clean := &memWriter{}
	if _, err := Run(testCtx(t), cfg(&mapCache{m: map[string]*api.VerifyResponse{}}, nil, clean)); err != nil {
		t.Fatal(err)
	}
	if got := clean.rows()[n-1]; !got.FromCache {
		t.Fatal("the variant did not reach the cache: the test proves nothing")
	}

	// The killed run journalled row 1 and died before caching it.
	path := filepath.Join(t.TempDir(), "j")
	j, err := journal.Create(context.Background(), path, journal.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	row1 := distinct(1)
	addr := api.Address{Lines: []string{row1[0]}, Country: row1[1]}
	resp, _ := v.Verify(context.Background(), addr)
	if err := j.Record(journal.Entry{Row: 1, Key: keyHash(dedupKey(addr)), Response: resp}); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if j, err = journal.Open(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	if err := j.Continue(); err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	resumed := &memWriter{}
	if _, err := Run(testCtx(t), cfg(&mapCache{m: map[string]*api.VerifyResponse{}}, j, resumed)); err != nil {
		t.Fatal(err)
	}
	got, want := resumed.rows(), clean.rows()
	for i := range want {
		if !sameResult(got[i], want[i]) || got[i].Cached != want[i].Cached {
			t.Fatalf("row %d differs from the uninterrupted run's:\n got %+v\nwant %+v", want[i].Row, got[i], want[i])
		}
	}
}

// TestFarDuplicatesArePaidOnce: an address is paid for once per run however
// far apart its rows are (the in-memory LRU holds 1,024 verdicts; these
// duplicates are 1,500 rows apart), and a run interrupted and resumed pays
// once over both runs, the duplicates of journalled rows included.
func TestFarDuplicatesArePaidOnce(t *testing.T) {
	const n, distinctN, workers = 6000, 1500, 8
	cells := func(i int) []string {
		c := distinct(i % distinctN)
		if i%7 == 0 {
			c[0] = strings.ToUpper(c[0]) // another spelling of the same request
		}
		return c
	}
	var mu sync.Mutex
	answered := map[string]int{} // per request, folded as the service's bill would be
	service := func(cancelAt int64, cancel context.CancelFunc) *fakeVerifier {
		return &fakeVerifier{fn: func(ctx context.Context, a api.Address, call int64) (*api.VerifyResponse, error) {
			if call == cancelAt {
				cancel()
			}
			mu.Lock()
			answered[strings.ToLower(a.Lines[0])]++
			mu.Unlock()
			if strings.HasPrefix(a.Lines[0], "5") {
				return nil, statusErr(400, "refused") // refusals are paid too
			}
			return answer(a, api.ActionAccept), nil
		}}
	}
	cfg := func(v Verifier, w *memWriter) Config {
		return Config{Source: &genSource{n: n, cells: cells}, Mapper: cellMapper, Verifier: v, Workers: workers,
			SpillDir: t.TempDir()}.with(w)
	}
	check := func(what string) {
		t.Helper()
		if len(answered) != distinctN {
			t.Fatalf("%s: %d distinct requests answered, want %d", what, len(answered), distinctN)
		}
		for k, c := range answered {
			if c != 1 {
				t.Fatalf("%s: %q answered %d times", what, k, c)
			}
		}
	}

	clean := &memWriter{}
	st, err := Run(testCtx(t), cfg(service(0, nil), clean))
	if err != nil {
		t.Fatal(err)
	}
	check("one run")
	if st.CallsMade != distinctN || st.CallsSaved != n-distinctN {
		t.Fatalf("calls made %d, saved %d; want %d and %d", st.CallsMade, st.CallsSaved, distinctN, n-distinctN)
	}
	for _, r := range clean.rows() {
		if r.Response == nil && r.Err == "" {
			t.Fatalf("row %d has neither an answer nor an error", r.Row)
		}
	}

	clear(answered)
	path := filepath.Join(t.TempDir(), "out.journal")
	j, err := journal.Create(context.Background(), path, journal.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	c1 := cfg(service(1400, cancel), &memWriter{})
	c1.Journal = j
	if _, err := Run(ctx, c1); !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v", err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if j, err = journal.Open(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	if err := j.Continue(); err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	resumed := &memWriter{}
	c2 := cfg(service(0, nil), resumed)
	c2.Journal = j
	if _, err := Run(testCtx(t), c2); err != nil {
		t.Fatal(err)
	}
	check("interrupted and resumed")
	got, want := resumed.rows(), clean.rows()
	for i := range want {
		if !sameResult(got[i], want[i]) {
			t.Fatalf("row %d differs from the uninterrupted run's:\n got %+v\nwant %+v", want[i].Row, got[i], want[i])
		}
	}
}

// TestSpillErrorStopsTheRun: verdicts that cannot be kept for later
// duplicates stop the run with the directory named, rather than paying
// again for them.
func TestSpillErrorStopsTheRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	w := &memWriter{}
	v := &fakeVerifier{}
	_, err := Run(testCtx(t), Config{Source: &genSource{n: 3000, cells: distinct}, Mapper: cellMapper,
		Verifier: v, Workers: 2, SpillDir: dir}.with(w))
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "TMPDIR") {
		t.Fatalf("error %v, want one naming %s and TMPDIR", err, dir)
	}
	if got := len(w.rows()); got >= 3000 {
		t.Fatalf("%d rows written before the stop", got)
	}
	checkPrefix(t, w.rows())
}

// TestServiceNeverReached: when every row sent failed with the service's
// fault and none was answered, the run says the service was never reached
// (its caller then keeps the last outputs), whether the file is too small
// for the breaker or not; one answer, from the service or the cache, makes
// it an ordinary run with Error rows.
func TestServiceNeverReached(t *testing.T) {
	refused := func(ctx context.Context, a api.Address, call int64) (*api.VerifyResponse, error) {
		return nil, fmt.Errorf("dial tcp 127.0.0.1:9: connect: connection refused")
	}
	tests := []struct {
		name      string
		rows      int
		fn        func(context.Context, api.Address, int64) (*api.VerifyResponse, error)
		cache     Cache
		wantErr   bool
		wantCause string
	}{
		{"small file", 5, refused, nil, true, "connection refused"},
		{"breaker trips", 500, refused, nil, true, "connection refused"},
		{"one answer", 5, func(ctx context.Context, a api.Address, call int64) (*api.VerifyResponse, error) {
			if a.Lines[0] == "3 Main Street" {
				return answer(a, api.ActionAccept), nil
			}
			return refused(ctx, a, call)
		}, nil, false, ""},
		{"a refusal is an answer", 5, func(ctx context.Context, a api.Address, call int64) (*api.VerifyResponse, error) {
			if a.Lines[0] == "3 Main Street" {
				return nil, statusErr(400, "refused")
			}
			return refused(ctx, a, call)
		}, nil, false, ""},
		{"cache answered", 5, refused, &mapCache{m: map[string]*api.VerifyResponse{
			dedupKey(api.Address{Lines: []string{"2 Main Street"}, Country: "IE"}): answer(api.Address{}, api.ActionAccept),
		}}, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := &memWriter{}
			st, err := Run(testCtx(t), Config{Source: &genSource{n: tc.rows, cells: distinct}, Mapper: cellMapper,
				Verifier: &fakeVerifier{fn: tc.fn}, Workers: 2, Retries: 1, Jitter: noJitter,
				Cache: tc.cache}.with(w))
			if !tc.wantErr {
				if err != nil || st.Stopped != "" {
					t.Fatalf("err %v, stopped %q; want an ordinary run", err, st.Stopped)
				}
				return
			}
			if !errors.Is(err, ErrServiceUnreachable) || !errors.Is(err, ErrServiceUnavailable) ||
				!strings.Contains(err.Error(), tc.wantCause) || !strings.Contains(err.Error(), "first, row ") {
				t.Fatalf("err = %v, want ErrServiceUnreachable naming the first failure, %q", err, tc.wantCause)
			}
			if st.Stopped != "service_unreachable" || st.Complete {
				t.Fatalf("stopped %q, complete %v", st.Stopped, st.Complete)
			}
		})
	}
}

// countingJournal counts the rows its Journal answers.
type countingJournal struct {
	Journal
	found atomic.Int64
}

func (c *countingJournal) Lookup(row int, key uint64) (journal.Entry, bool, error) {
	e, ok, err := c.Journal.Lookup(row, key)
	if ok {
		c.found.Add(1)
	}
	return e, ok, err
}
