package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/addrclean/addrclean/journal"
)

// childEnv makes the test binary run addrclean's main, for tests that kill
// the real program.
const childEnv = "ADDRCLEAN_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// callLog wraps the service: it counts the verify calls per address and,
// when armed, kills a process at the n-th call, or fails every call from the
// n-th on with 503 (an outage).
type callLog struct {
	next http.Handler

	mu    sync.Mutex
	calls map[string]int // answered calls per address

	seen   atomic.Int64 // verify calls since the last arm
	killAt atomic.Int64
	victim atomic.Pointer[os.Process]
	downAt atomic.Int64 // 503 from this call on; 0: healthy
	flaky  atomic.Bool  // 503 to every 37th call
	// hook, when set, sees each verify request's parameters (without the
	// token) before it is served, and may hold it.
	hook atomic.Pointer[func(ctx context.Context, q url.Values)]
}

func (c *callLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/verify") {
		c.next.ServeHTTP(w, r)
		return
	}
	n := c.seen.Add(1)
	if n == c.killAt.Load() {
		if p := c.victim.Load(); p != nil {
			_ = p.Kill() // SIGKILL: no deferred function, no flush runs
		}
	}
	if d := c.downAt.Load(); (d > 0 && n >= d) || (c.flaky.Load() && n%37 == 0) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"error":{"title":"Service Unavailable","detail":"down for maintenance"}}`)
		return
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	// The request without its token is the address and its options.
	q, _ := url.ParseQuery(string(body))
	q.Del("token")
	if h := c.hook.Load(); h != nil {
		(*h)(r.Context(), q)
	}
	c.mu.Lock()
	c.calls[q.Encode()]++
	c.mu.Unlock()
	c.next.ServeHTTP(w, r)
}

// take returns the calls counted so far and starts counting afresh.
func (c *callLog) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.calls
	c.calls = map[string]int{}
	c.seen.Store(0)
	return m
}

func loggedService(t *testing.T) (srvURL string, c *callLog) {
	t.Helper()
	srv := newTestService(t, func(h http.Handler) http.Handler {
		c = &callLog{next: h, calls: map[string]int{}}
		return c
	})
	return srv.URL, c
}

// TestRunKillAndResume kills the real program with SIGKILL at random points
// of a run, resumes it each time, and checks that the outputs are byte for
// byte those of an uninterrupted run and that no address was verified twice
// apart from the calls in flight at each kill.
func TestRunKillAndResume(t *testing.T) {
	t.Parallel() // no environment or package variable set: see docs/testing.md
	if testing.Short() {
		t.Skip("runs the program in subprocesses")
	}
	const workers = 8
	in := sampleCSV(t)
	base, calls := loggedService(t)
	common := []string{"--base-url", base, "--rate", "0", "--country", "IE", "--workers", "8", "--retries", "0"}

	want := runCLI(t, t.TempDir(), append(common, in)...)
	wantExit(t, want, exitRowErrors) // the sample has one row without an address
	clean := calls.take()
	distinct := len(clean)
	if distinct < 400 {
		t.Fatalf("only %d distinct requests", distinct)
	}

	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("ADDRCLEAN_KILL_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (ADDRCLEAN_KILL_SEED=%d repeats the kill points)", seed, seed)
	rnd := rand.New(rand.NewPCG(seed, 2))
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte(testKey), 0o600); err != nil {
		t.Fatal(err)
	}
	out, review := filepath.Join(dir, "out.csv"), filepath.Join(dir, "review.csv")
	args := append([]string{"run", "--log-format", "json", "--no-progress", "--api-key-file", keyFile,
		"-o", out, "--review", review, "--resume"}, append(common, in)...)

	total := map[string]int{}
	const kills = 3
	for round := 0; round <= kills; round++ {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), childEnv+"=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		killAt := int64(0)
		if round < kills {
			// Somewhere in what is left of the run.
			left := int64(distinct) - int64(countAll(total)) + int64(round*workers)
			killAt = 1 + rnd.Int64N(max(left*3/4, 1))
		}
		calls.killAt.Store(killAt)
		// Killed runs also lose some rows to 503s: they are not journalled,
		// and a later run, or the one after, verifies them.
		calls.flaky.Store(round < kills)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		calls.victim.Store(cmd.Process)
		err := cmd.Wait()
		calls.victim.Store(nil)
		got := calls.take()
		for k, n := range got {
			total[k] += n
		}
		code := cmd.ProcessState.ExitCode()
		if round < kills {
			if code != -1 { // killed by a signal
				t.Fatalf("round %d: the program was not killed at call %d (exit %d, %v): %s", round, killAt, code, err, tail(stderr.String(), 2000))
			}
			j, err := journal.Open(context.Background(), out+".journal")
			if err != nil {
				t.Fatalf("round %d: the journal after a kill at call %d: %v", round, killAt, err)
			}
			info := j.Info()
			_ = j.Close()
			t.Logf("round %d: killed at call %d; the journal holds %d rows", round, killAt, info.Rows)
			continue
		}
		if code != exitRowErrors {
			t.Fatalf("last round: exit %d\n%s", code, tail(stderr.String(), 3000))
		}
	}
	gotOut, _ := os.ReadFile(out)
	gotReview, _ := os.ReadFile(review)
	if string(gotOut) != want.enriched || string(gotReview) != want.review {
		t.Fatal("the outputs of the killed and resumed run differ from an uninterrupted run's")
	}
	if _, err := os.Stat(out + ".journal"); !os.IsNotExist(err) {
		t.Errorf("the journal was not removed after the finished run: %v", err)
	}
	for req := range clean {
		if total[req] == 0 {
			t.Fatalf("%q was never verified", req)
		}
	}
	// A worker holds one row at a time: a kill loses at most one row per
	// worker (its call in flight, or its answer not yet journalled). Other
	// requests than the clean run's may appear: when a 503 fails a row, a
	// later case variant of its address leads in that run and is verified
	// in its own spelling (once: it is journalled).
	repeated := 0
	for _, n := range total {
		repeated += n - 1
	}
	if repeated > kills*workers {
		t.Fatalf("%d calls repeated over %d kills with %d workers", repeated, kills, workers)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	if len(matches) > 0 {
		t.Errorf("temporary outputs left behind: %v", matches)
	}
}

// messages is the text of stderr's JSON log lines, one per line.
func messages(stderr string) string {
	var b strings.Builder
	for _, line := range strings.Split(stderr, "\n") {
		var ev struct {
			Message string `json:"message"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil {
			line = ev.Message
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

func countAll(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestRunOutageStopsAndResumes: the service answers 503 to everything after
// the 150th call. The run stops with exit 1 and "service unavailable",
// without marking the rest of the file Error; the journal holds the rows
// done before; --resume after the service recovers finishes the job with the
// outputs of an uninterrupted run, paying once per address.
func TestRunOutageStopsAndResumes(t *testing.T) {
	t.Parallel() // no environment or package variable set: see docs/testing.md
	in := sampleCSV(t)
	base, calls := loggedService(t)
	common := []string{"--base-url", base, "--rate", "0", "--country", "IE", "--retries", "1"}
	want := runCLI(t, t.TempDir(), append(common, in)...)
	wantExit(t, want, exitRowErrors)
	distinct := len(calls.take())

	dir := t.TempDir()
	const down = 150
	calls.downAt.Store(down)
	got := runCLI(t, dir, append(common, in)...)
	wantExit(t, got, exitFatal)
	if !strings.Contains(got.stderr, "service unavailable: resume with --resume") {
		t.Fatalf("stderr does not say what happened and what to do:\n%s", tail(got.stderr, 2000))
	}
	// With --log-format json the final error is a JSON line too.
	for _, line := range strings.Split(strings.TrimSpace(got.stderr), "\n") {
		if !json.Valid([]byte(line)) {
			t.Fatalf("stderr line is not JSON: %q", line)
		}
	}
	if got.summary["stopped"] != "service_unavailable" || got.summary["complete"] != false {
		t.Errorf("summary: stopped %v complete %v", got.summary["stopped"], got.summary["complete"])
	}
	if errs := summaryInt(got, "rows_written") - int64(down); errs > 40 {
		t.Errorf("%d rows written after the outage began", errs)
	}
	j, err := journal.Open(context.Background(), filepath.Join(dir, "out.csv.journal"))
	if err != nil {
		t.Fatal(err)
	}
	info := j.Info()
	_ = j.Close()
	// Calls 1..149 were answered (duplicate rows share them); at most the
	// 8 workers' rows around the change are not journalled.
	if info.Rows < down-1-8 {
		t.Fatalf("the journal holds %d rows, want those answered before call %d", info.Rows, down)
	}
	first := calls.take()

	calls.downAt.Store(0) // the service is back
	got = runCLI(t, dir, append(common, "--resume", in)...)
	wantExit(t, got, exitRowErrors)
	if got.enriched != want.enriched || got.review != want.review {
		t.Fatal("the resumed outputs differ from an uninterrupted run's")
	}
	if r := summaryInt(got, "rows_resumed"); r < info.Rows {
		t.Errorf("rows_resumed %d, the journal held %d", r, info.Rows)
	}
	for k, n := range calls.take() {
		first[k] += n
	}
	if len(first) != distinct {
		t.Fatalf("%d addresses answered, want %d", len(first), distinct)
	}
	for k, n := range first {
		if n != 1 {
			t.Fatalf("%q answered %d times", k, n)
		}
	}
}

// TestRunJournalRules: what a run does with a journal it finds.
func TestRunJournalRules(t *testing.T) {
	t.Parallel() // no environment or package variable set: see docs/testing.md
	in := sampleCSV(t)
	base, calls := loggedService(t)
	common := []string{"--base-url", base, "--rate", "0", "--country", "IE"}
	// --max-errors 0 stops at row 251, the row without an address, leaving
	// a journal of the rows before it. The run is made once; each case gets
	// a copy of the directory it left (journal, key, summary), the state a
	// run of its own would leave, without paying 250 rows per case.
	once := t.TempDir()
	r := runCLI(t, once, append(common, "--max-errors", "0", in)...)
	wantExit(t, r, exitFatal)
	if !strings.Contains(r.stderr, "too many rows are Error") {
		t.Fatalf("stderr: %s", tail(r.stderr, 1500))
	}
	if _, err := os.Stat(filepath.Join(once, "out.csv.journal")); err != nil {
		t.Fatalf("the interrupted run left no journal: %v", err)
	}
	calls.take()
	interrupted := func(t *testing.T) string {
		dir := t.TempDir()
		if err := os.CopyFS(dir, os.DirFS(once)); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	tests := []struct {
		name     string
		args     []string
		edit     func(t *testing.T, dir string) // before the run
		wantCode int
		wantErr  string
		calls    bool // the run calls the service
	}{
		{name: "no --resume over an unfinished journal", args: nil, wantCode: exitUsage,
			wantErr: "run the same command with --resume"},
		{name: "another country", args: []string{"--resume", "--country", "GB"}, wantCode: exitUsage,
			wantErr: `--country was "IE", now "GB"`},
		{name: "another mapping", args: []string{"--resume", "--line-cols", "Address 1"}, wantCode: exitUsage,
			wantErr: "column mapping was"},
		{name: "another service", args: []string{"--resume", "--base-url", "http://127.0.0.1:1"}, wantCode: exitUsage,
			wantErr: "service was"},
		{name: "the same service spelled with a slash", args: []string{"--resume", "--base-url", base + "/"}, wantCode: exitRowErrors, calls: true},
		{name: "--restart discards it", args: []string{"--restart"}, wantCode: exitRowErrors,
			wantErr: "--restart: discarding the journal of an interrupted run", calls: true},
		{name: "--restart with --resume", args: []string{"--restart", "--resume"}, wantCode: exitUsage,
			wantErr: "contradict"},
		{name: "journal torn while it was created", args: []string{"--resume"}, wantCode: exitRowErrors,
			wantErr: "no intact header", calls: true,
			edit: func(t *testing.T, dir string) {
				if err := os.WriteFile(filepath.Join(dir, "out.csv.journal"), []byte(`1a2b3c4d {"t":"hea`), 0o600); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "damaged journal", args: []string{"--resume"}, wantCode: exitFatal, wantErr: "delete it to start afresh",
			edit: func(t *testing.T, dir string) {
				if err := os.WriteFile(filepath.Join(dir, "out.csv.journal"), []byte("not a journal\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "journal in use", args: []string{"--resume"}, wantCode: exitFatal, wantErr: "another run is writing the same outputs",
			edit: func(t *testing.T, dir string) {
				j, err := journal.Open(context.Background(), filepath.Join(dir, "out.csv.journal"))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = j.Close() })
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := interrupted(t)
			jpath := filepath.Join(dir, "out.csv.journal")
			if tc.edit != nil {
				tc.edit(t, dir)
			}
			before, _ := os.ReadFile(jpath)
			args := append(append(append([]string{}, common...), tc.args...), in)
			r := runCLI(t, dir, args...)
			wantExit(t, r, tc.wantCode)
			if !strings.Contains(messages(r.stderr), tc.wantErr) {
				t.Fatalf("stderr does not contain %q:\n%s", tc.wantErr, tail(r.stderr, 1500))
			}
			made := len(calls.take())
			if tc.calls != (made > 0) {
				t.Fatalf("%d calls", made)
			}
			if tc.wantCode != exitRowErrors {
				after, _ := os.ReadFile(jpath)
				if !bytes.Equal(before, after) {
					t.Error("a refused run changed the journal")
				}
			}
		})
	}

	t.Run("changed input", func(t *testing.T) {
		dir := interrupted(t)
		b, _ := os.ReadFile(in)
		changed := filepath.Join(t.TempDir(), "customers.csv")
		if err := os.WriteFile(changed, append(b, []byte("C9999,Jo Bloggs,1 Main Street,,Cork,Cork,,Ireland\n")...), 0o644); err != nil {
			t.Fatal(err)
		}
		r := runCLI(t, dir, append(common, "--resume", changed)...)
		wantExit(t, r, exitUsage)
		if !strings.Contains(r.stderr, "the input file changed") {
			t.Fatalf("stderr: %s", tail(r.stderr, 1500))
		}
	})

	t.Run("--resume without a journal starts afresh", func(t *testing.T) {
		r := runCLI(t, t.TempDir(), append(common, "--resume", in)...)
		wantExit(t, r, exitRowErrors)
		if !strings.Contains(r.stderr, "no journal of an earlier run: starting from the first row") {
			t.Fatalf("stderr: %s", tail(r.stderr, 1500))
		}
		calls.take()
	})

	t.Run("--keep-journal", func(t *testing.T) {
		dir := t.TempDir()
		first := runCLI(t, dir, append(common, "--keep-journal", in)...)
		wantExit(t, first, exitRowErrors)
		calls.take()
		// A finished journal replays every answer: no call at all.
		again := runCLI(t, dir, append(common, "--resume", in)...)
		wantExit(t, again, exitRowErrors)
		if n := len(calls.take()); n != 0 || summaryInt(again, "calls_made") != 0 {
			t.Fatalf("%d calls replaying a kept journal", n)
		}
		if again.enriched != first.enriched || again.review != first.review {
			t.Fatal("replayed outputs differ")
		}
		if _, err := os.Stat(filepath.Join(dir, "out.csv.journal")); !os.IsNotExist(err) {
			t.Fatalf("journal not removed after the run without --keep-journal: %v", err)
		}
		// Without --resume a finished journal is replaced, not refused.
		third := runCLI(t, dir, append(common, "--keep-journal", in)...)
		wantExit(t, third, exitRowErrors)
		fresh := runCLI(t, dir, append(common, in)...)
		wantExit(t, fresh, exitRowErrors)
		calls.take()
	})
}

// TestRunMaxErrorsFlag: the limit turns exit 3 into exit 1 once passed.
func TestRunMaxErrorsFlag(t *testing.T) {
	in := sampleCSV(t)
	tests := []struct {
		value    string
		wantCode int
		written  int64
	}{
		{"0", exitFatal, 251},
		{"1", exitRowErrors, 500},
		{"0.1%", exitFatal, 251},
		{"1%", exitRowErrors, 500},
		{"abc", exitUsage, 0},
		{"-1", exitUsage, 0},
		{"0%", exitUsage, 0},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			t.Setenv("ADDRCLEAN_BASE_URL", "")
			r := runCLI(t, t.TempDir(), "--country", "IE", "--max-errors", tc.value, in)
			wantExit(t, r, tc.wantCode)
			if tc.wantCode == exitUsage {
				if !strings.Contains(r.stderr, "--max-errors") {
					t.Fatalf("stderr: %s", r.stderr)
				}
				return
			}
			if got := summaryInt(r, "rows_written"); got != tc.written {
				t.Fatalf("rows written %d, want %d", got, tc.written)
			}
		})
	}
}

// TestRunJournalAuto: against the embedded service a run keeps no journal
// unless asked (--journal on, --resume) or one is there already.
func TestRunJournalAuto(t *testing.T) {
	t.Setenv("ADDRCLEAN_BASE_URL", "")
	in := sampleCSV(t)
	exists := func(dir string) bool {
		_, err := os.Stat(filepath.Join(dir, "out.csv.journal"))
		return err == nil
	}
	dir := t.TempDir()
	r := runCLI(t, dir, "--country", "IE", "--max-errors", "0", in)
	wantExit(t, r, exitFatal)
	if exists(dir) {
		t.Fatal("an embedded run kept a journal without being asked")
	}
	r = runCLI(t, dir, "--country", "IE", "--max-errors", "0", "--journal", "on", in)
	wantExit(t, r, exitFatal)
	if !exists(dir) {
		t.Fatal("--journal on kept no journal")
	}
	// The journal there is an interrupted run's: it is not ignored.
	r = runCLI(t, dir, "--country", "IE", in)
	wantExit(t, r, exitUsage)
	r = runCLI(t, dir, "--country", "IE", "--resume", in)
	wantExit(t, r, exitRowErrors)
	if summaryInt(r, "rows_resumed") == 0 || exists(dir) {
		t.Fatalf("resumed %d rows; journal left: %v", summaryInt(r, "rows_resumed"), exists(dir))
	}
	// --keep-journal asks for one.
	kept := t.TempDir()
	r = runCLI(t, kept, "--country", "IE", "--keep-journal", in)
	wantExit(t, r, exitRowErrors)
	if !exists(kept) {
		t.Fatal("--keep-journal kept no journal")
	}
	for _, args := range [][]string{{"--journal", "maybe"}, {"--journal", "off", "--resume"},
		{"--journal", "off", "--restart"}, {"--journal", "off", "--keep-journal"}} {
		r = runCLI(t, t.TempDir(), append(append([]string{"--country", "IE"}, args...), in)...)
		wantExit(t, r, exitUsage)
	}
}
