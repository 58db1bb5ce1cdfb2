package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// cutService is the real service with a trigger: at the trial's chosen
// verify call, it runs the trial's damage (in the handler, so the run is
// mid-flight by construction) and reports when it did.
type cutService struct {
	next  http.Handler
	calls atomic.Int64
	mu    sync.Mutex
	at    int64
	cut   func()
	done  chan time.Time
}

func (c *cutService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/verify") {
		n := c.calls.Add(1)
		c.mu.Lock()
		if n == c.at && c.cut != nil {
			c.cut()
			c.done <- time.Now()
		}
		c.mu.Unlock()
	}
	c.next.ServeHTTP(w, r)
}

// arm makes the at-th verify call from now on run cut.
func (c *cutService) arm(at int64, cut func()) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls.Store(0)
	c.at, c.cut, c.done = at, cut, make(chan time.Time, 1)
	return c.done
}

// runAlive runs 'addrclean run' in-process like runCLI and fails the test
// if the run is still alive hangAfter after the damage was done (or, if
// the damage never came, hangAfter after the run started), with every
// goroutine's stack: the hang of issue 25, where a run cut under bbolt
// waited forever on a lock a recovered fault left held.
func runAlive(t *testing.T, name, dir string, cut <-chan time.Time, args ...string) runResult {
	t.Helper()
	const hangAfter = 10 * time.Second
	done := make(chan runResult, 1)
	go func() { done <- runCLIQuiet(dir, args...) }()
	deadline := time.NewTimer(hangAfter) // restarted when the damage is done
	defer deadline.Stop()
	for {
		select {
		case r := <-done:
			return r
		case <-cut:
			cut = nil
			deadline.Reset(hangAfter)
		case <-deadline.C:
			var stacks bytes.Buffer
			_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
			t.Fatalf("%s: the run is still alive %s after its state file was cut:\n%s", name, hangAfter, tail(stacks.String(), 20000))
		}
	}
}

// runCLIQuiet is runCLI without a testing.T, for a goroutine: the key file
// (dir/key) is written by the caller.
func runCLIQuiet(dir string, args ...string) runResult {
	out, review := filepath.Join(dir, "out.csv"), filepath.Join(dir, "review.csv")
	full := append([]string{"run", "--log-format", "json", "--no-progress", "--api-key-file", filepath.Join(dir, "key"),
		"-o", out, "--review", review}, args...)
	var stdout, stderr bytes.Buffer
	code := runMain(context.Background(), full, streams{in: strings.NewReader(""), out: &stdout, err: &stderr})
	res := runResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
	if b, err := os.ReadFile(out); err == nil {
		res.enriched = string(b)
	}
	if b, err := os.ReadFile(review); err == nil {
		res.review = string(b)
	}
	return res
}

// TestRunStateCutDuringRun cuts the cache (--cache) or the journal short
// during a real run, 24 times each, to a size of zero a third of the time:
// every run ends within seconds of the cut, with the answers of a clean run
// or (the journal) exit 1 naming the file; no temporary output is left; and
// the next run, --resume for the journal, finishes with the clean run's
// outputs. On 0825782 (bbolt) 7 of 15 such cuts of a cache hung past 40 s.
//
// The trials are stratified, not drawn independently: the cut calls are
// spread evenly over the first half of the run (every call is cut at least
// once when there are no more of them than trials) and the other sizes
// take one slice each of (0, 1), matched to the calls in a random order,
// each at a random point of its slice. 50 independent draws each left about
// one call in thirteen never cut (20 calls); 24 stratified trials leave none.
func TestRunStateCutDuringRun(t *testing.T) {
	t.Parallel() // no environment or package variable set: see docs/testing.md
	if testing.Short() {
		t.Skip("96 runs")
	}
	const trials, limit = 24, "40"
	var svc *cutService
	srv := newTestService(t, func(h http.Handler) http.Handler {
		svc = &cutService{next: h}
		return svc
	})
	in := sampleCSV(t)
	common := []string{"--base-url", srv.URL, "--rate", "0", "--country", "IE", "--limit", limit, in}
	want := runCLI(t, t.TempDir(), append([]string{"--journal", "off"}, common...)...)
	wantExit(t, want, exitOK, exitRowErrors)
	calls := svc.calls.Load()
	// A cache warm with the first half of the rows: the run reads it, and
	// writes the other half's answers, while it is cut.
	warmDir := t.TempDir()
	warm := filepath.Join(warmDir, "c.db")
	half := strconv.FormatInt(calls/2, 10)
	wantExit(t, runCLI(t, warmDir, "--journal", "off", "--cache", warm, "--base-url", srv.URL, "--rate", "0", "--country", "IE", "--limit", half, in), exitOK, exitRowErrors)
	warmBytes, err := os.ReadFile(warm)
	if err != nil {
		t.Fatal(err)
	}

	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("ADDRCLEAN_CUT_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (ADDRCLEAN_CUT_SEED=%d repeats the cuts)", seed, seed)
	rnd := rand.New(rand.NewPCG(seed, 25))
	// cutAt is trial's call, in its slice of [1, calls/2].
	span := max(calls/2, 1)
	t.Logf("cuts at calls 1 to %d of %d", span, calls)
	cutAt := func(trial int) int64 {
		lo, hi := int64(trial)*span/trials, int64(trial+1)*span/trials
		return 1 + lo + rnd.Int64N(max(hi-lo, 1))
	}
	// cutTo cuts path to a fraction of its size: zero for every third
	// trial, else a random point of the slice of (0, 1) that sizes[trial]
	// gives it. Drawn here, since the cut runs on the service's goroutine.
	sizes := rnd.Perm(trials)
	cutTo := func(path string, trial int) func() {
		frac := 0.0
		if trial%3 != 0 {
			frac = (float64(sizes[trial]) + rnd.Float64()) / trials
		}
		return func() {
			size := int64(0)
			if fi, err := os.Stat(path); err == nil {
				size = int64(frac * float64(fi.Size()))
			}
			if err := os.Truncate(path, size); err != nil {
				t.Errorf("truncating %s: %v", path, err)
			}
		}
	}
	outcomes := map[string]int{}
	for _, file := range []string{"cache", "journal"} {
		for trial := range trials {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "key"), []byte(testKey+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			var args []string
			var path string
			switch file {
			case "cache":
				path = filepath.Join(dir, "c.db")
				if err := os.WriteFile(path, warmBytes, 0o600); err != nil {
					t.Fatal(err)
				}
				args = append([]string{"--journal", "off", "--cache", path}, common...)
			case "journal":
				path = filepath.Join(dir, "out.csv.journal")
				args = append([]string{"--journal", "on"}, common...)
			}
			at := cutAt(trial)
			name := fmt.Sprintf("%s trial %d (cut at call %d)", file, trial, at)
			r := runAlive(t, name, dir, svc.arm(at, cutTo(path, trial)), args...)
			switch {
			case r.code == exitFatal && file == "journal":
				if !strings.Contains(r.stderr, path) {
					t.Fatalf("%s: exit 1 without naming %s:\n%s", name, path, tail(r.stderr, 2000))
				}
			case r.code == exitOK || r.code == exitRowErrors:
				if r.enriched != want.enriched || r.review != want.review {
					t.Fatalf("%s: exit %d with other outputs than a clean run's\n%s", name, r.code, tail(r.stderr, 2000))
				}
			default:
				t.Fatalf("%s: exit %d\n%s", name, r.code, tail(r.stderr, 2000))
			}
			outcomes[fmt.Sprintf("%s exit %d", file, r.code)]++
			if tmps, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(tmps) > 0 {
				t.Fatalf("%s: temporary outputs left: %v", name, tmps)
			}
			// The next run: --resume (the journal), or the same cache.
			next := args
			if file == "journal" {
				next = append([]string{"--resume"}, args...)
			}
			again := runAlive(t, name+", the run after", dir, nil, next...)
			if again.code != want.code || again.enriched != want.enriched || again.review != want.review {
				t.Fatalf("%s: the run after it: exit %d (want %d), outputs equal: %v\n%s", name, again.code, want.code,
					again.enriched == want.enriched && again.review == want.review, tail(again.stderr, 2000))
			}
		}
	}
	t.Logf("outcomes: %v", outcomes)
}
