package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/cache"
	"github.com/addrclean/addrclean/internal/sqlitefile/filetest"
)

// verifyCounter wraps the service and records every verify request's
// address lines.
type verifyCounter struct {
	next  http.Handler
	calls atomic.Int64
	mu    sync.Mutex
	lines []string
}

func (c *verifyCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/verify") {
		c.calls.Add(1)
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		q, _ := url.ParseQuery(string(body))
		c.mu.Lock()
		c.lines = append(c.lines, strings.Join(q["addressLine"], "|"))
		c.mu.Unlock()
	}
	c.next.ServeHTTP(w, r)
}

func (c *verifyCounter) reset() []string {
	c.calls.Store(0)
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.lines
	c.lines = nil
	return l
}

func countingService(t *testing.T) (*httptest.Server, *verifyCounter) {
	t.Helper()
	var vc *verifyCounter
	srv := newTestService(t, func(h http.Handler) http.Handler {
		vc = &verifyCounter{next: h}
		return vc
	})
	return srv, vc
}

func summaryInt(r runResult, key string) int64 {
	v, _ := r.summary[key].(float64)
	return int64(v)
}

func wantExit(t *testing.T, r runResult, codes ...int) {
	t.Helper()
	for _, c := range codes {
		if r.code == c {
			return
		}
	}
	t.Fatalf("exit %d, want %v\n%s", r.code, codes, tail(r.stderr, 2000))
}

// TestRunCacheSecondRunMakesNoCalls: the nightly re-run over an unchanged
// table makes no verify call and writes the same bytes; the key is nowhere
// in the cache file.
func TestRunCacheSecondRunMakesNoCalls(t *testing.T) {
	t.Parallel() // no environment or package variable set: see docs/testing.md
	srv, vc := countingService(t)
	in := sampleCSV(t)
	db := filepath.Join(t.TempDir(), "answers.db")
	args := []string{"--base-url", srv.URL, "--rate", "0", "--country", "IE", "--cache", db, in}

	first := runCLI(t, t.TempDir(), args...)
	wantExit(t, first, exitOK, exitRowErrors)
	firstCalls := vc.calls.Load()
	if firstCalls == 0 || summaryInt(first, "calls_made") != firstCalls || summaryInt(first, "cache_hits") != 0 {
		t.Fatalf("first run: %d calls, summary %v", firstCalls, first.summary)
	}
	vc.reset()

	second := runCLI(t, t.TempDir(), args...)
	wantExit(t, second, first.code)
	if n := vc.calls.Load(); n != 0 {
		t.Fatalf("second run made %d verify calls, want 0", n)
	}
	if second.enriched != first.enriched || second.review != first.review {
		t.Fatal("the second run's outputs differ from the first's")
	}
	if got := summaryInt(second, "cache_hits"); got != firstCalls || summaryInt(second, "calls_made") != 0 {
		t.Errorf("second run: cache_hits %d (want %d), calls_made %d", got, firstCalls, summaryInt(second, "calls_made"))
	}

	// --mark-cached: av_cached is the last column, true on every verified row.
	marked := runCLI(t, t.TempDir(), append([]string{"--mark-cached"}, args...)...)
	wantExit(t, marked, first.code)
	recs, err := csv.NewReader(strings.NewReader(marked.enriched)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if h := recs[0]; h[len(h)-1] != "av_cached" {
		t.Fatalf("last column %q, want av_cached", h[len(h)-1])
	}
	for _, rec := range recs[1:] {
		action, cached := rec[slices.Index(recs[0], "av_action")], rec[len(rec)-1]
		if want := map[bool]string{true: "false", false: "true"}[action == "Error"]; cached != want {
			t.Fatalf("row %v: av_cached %q, want %s", rec[0], cached, want)
		}
	}

	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(testKey)) {
		t.Error("the API key is in the cache file")
	}
}

// TestRunCacheOnlyChangedRowsSent: a table with 1% of its rows changed
// sends those rows only.
func TestRunCacheOnlyChangedRowsSent(t *testing.T) {
	t.Parallel() // no environment or package variable set: see docs/testing.md
	srv, vc := countingService(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "answers.db")
	first := runCLI(t, t.TempDir(), "--base-url", srv.URL, "--rate", "0", "--country", "IE", "--cache", db, sampleCSV(t))
	wantExit(t, first, exitOK, exitRowErrors)
	vc.reset()

	f, err := os.Open(sampleCSV(t))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	col := -1
	for i, h := range recs[0] {
		if h == "Address 1" {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("no Address 1 column in %v", recs[0])
	}
	changed := map[string]bool{}
	for i := 1; i < len(recs); i += 100 { // rows 1, 101, ...: 1%
		recs[i][col] = "Flat 9, " + recs[i][col]
		changed[recs[i][col]] = true
	}
	in := filepath.Join(dir, "changed.csv")
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.WriteAll(recs)
	if err := os.WriteFile(in, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	second := runCLI(t, t.TempDir(), "--base-url", srv.URL, "--rate", "0", "--country", "IE", "--cache", db, in)
	wantExit(t, second, exitOK, exitRowErrors)
	sent := vc.reset()
	if len(sent) != len(changed) {
		t.Fatalf("%d verify calls, want %d (the changed rows): %q", len(sent), len(changed), sent)
	}
	for _, lines := range sent {
		if !changed[strings.SplitN(lines, "|", 2)[0]] {
			t.Errorf("an unchanged address was sent: %q", lines)
		}
	}
	if got := summaryInt(second, "cache_hits"); got != summaryInt(first, "calls_made")-int64(len(changed)) {
		t.Errorf("cache_hits %d, want %d", got, summaryInt(first, "calls_made")-int64(len(changed)))
	}
}

// TestRunCacheExpiry: entries older than --cache-ttl are verified again and
// overwritten. The runs are in a synctest bubble, whose clock time.Sleep
// moves at once; the service is outside it.
func TestRunCacheExpiry(t *testing.T) {
	srv, vc := countingService(t)
	db := filepath.Join(t.TempDir(), "answers.db")
	synctest.Test(t, func(t *testing.T) {
		// The runs' connections to the service end with the bubble.
		t.Cleanup(srv.CloseClientConnections)
		testRunCacheExpiry(t, srv, vc, db)
	})
}

func testRunCacheExpiry(t *testing.T, srv *httptest.Server, vc *verifyCounter, db string) {
	run := func(extra ...string) (runResult, int64) {
		t.Helper()
		vc.reset()
		args := append([]string{"--base-url", srv.URL, "--rate", "0", "--country", "IE", "--limit", "100", "--cache", db}, extra...)
		r := runCLI(t, t.TempDir(), append(args, sampleCSV(t))...)
		wantExit(t, r, exitOK, exitRowErrors)
		return r, vc.calls.Load()
	}
	_, all := run()
	steps := []struct {
		name    string
		advance time.Duration
		extra   []string
		want    int64
	}{
		{"a day later", 24 * time.Hour, nil, 0},
		{"exactly 30 days after", 29 * 24 * time.Hour, nil, 0},
		{"past the default TTL", time.Second, nil, all},
		{"just re-verified", time.Hour, nil, 0},
		{"an hour later, --cache-ttl 30m", 0, []string{"--cache-ttl", "30m"}, all},
		{"then --cache-ttl 30m again", 10 * time.Minute, []string{"--cache-ttl", "30m"}, 0},
	}
	for _, s := range steps {
		// A connection kept open is blocked in the network, which a
		// bubble's clock does not move past: close them first.
		srv.CloseClientConnections()
		time.Sleep(s.advance)
		if _, got := run(s.extra...); got != s.want {
			t.Fatalf("%s: %d verify calls, want %d", s.name, got, s.want)
		}
	}
}

// TestRunCacheEmbeddedRerunHits: the embedded service's namespace follows
// the reference, not its key of the moment, so a re-run hits.
func TestRunCacheEmbeddedRerunHits(t *testing.T) {
	t.Setenv("ADDRCLEAN_BASE_URL", "")
	db := filepath.Join(t.TempDir(), "answers.db")
	args := []string{"--country", "IE", "--limit", "50", "--cache", db, sampleCSV(t)}
	first := runCLI(t, t.TempDir(), args...)
	wantExit(t, first, exitOK, exitRowErrors)
	second := runCLI(t, t.TempDir(), args...)
	wantExit(t, second, first.code)
	if summaryInt(second, "calls_made") != 0 || summaryInt(second, "cache_hits") != summaryInt(first, "calls_made") || second.enriched != first.enriched {
		t.Fatalf("embedded re-run: %v", second.summary)
	}
}

// unusableCaches are cache paths a run cannot open, with what its error
// says: a file locked by another process (for the test's duration), a file
// that is not a cache, a directory. Set cacheLockTimeout short.
func unusableCaches(t *testing.T) []struct{ name, path, want string } {
	dir := t.TempDir()
	locked := filepath.Join(dir, "locked.db")
	holder, err := cache.Open(locked, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Close() })
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, bytes.Repeat([]byte("Address 1,Town\n"), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	return []struct{ name, path, want string }{
		{"locked", locked, "is locked by another addrclean process"},
		{"corrupt", garbage, "not a readable addrclean cache"},
		{"directory", dir, "is a directory"},
	}
}

// TestRunCacheUnusable: a locked or damaged cache stops the run with exit 1
// and the path, before any verify call, and leaves no output.
func TestRunCacheUnusable(t *testing.T) {
	old := cacheLockTimeout
	cacheLockTimeout = 50 * time.Millisecond
	t.Cleanup(func() { cacheLockTimeout = old })
	srv, vc := countingService(t)
	for _, tt := range unusableCaches(t) {
		t.Run(tt.name, func(t *testing.T) {
			vc.reset()
			out := t.TempDir()
			r := runCLI(t, out, "--base-url", srv.URL, "--rate", "0", "--country", "IE", "--cache", tt.path, sampleCSV(t))
			if r.code != exitFatal {
				t.Fatalf("exit %d, want %d\n%s", r.code, exitFatal, tail(r.stderr, 1000))
			}
			if !strings.Contains(r.stderr, "cache "+tt.path) || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("stderr does not name the path and %q: %s", tt.want, tail(r.stderr, 1000))
			}
			if n := vc.calls.Load(); n != 0 {
				t.Errorf("%d verify calls with an unusable cache", n)
			}
			if r.enriched != "" || r.review != "" {
				t.Error("outputs left behind")
			}
		})
	}
}

// TestRunCacheDamagedEntryReverified: one flipped digit in the latitude of
// a stored answer changed the output silently; now each entry is checked,
// and a damaged one is verified again (one call each), so the outputs are
// those of an intact cache, with a warning that counts them.
func TestRunCacheDamagedEntryReverified(t *testing.T) {
	srv, vc := countingService(t)
	db := filepath.Join(t.TempDir(), "answers.db")
	args := []string{"--base-url", srv.URL, "--rate", "0", "--country", "IE", "--limit", "40", "--cache", db, sampleCSV(t)}
	first := runCLI(t, t.TempDir(), args...)
	wantExit(t, first, exitOK, exitRowErrors)
	vc.reset()

	damaged := flipLatitudes(t, db, 3)
	if damaged == 0 {
		t.Fatal("no stored answer has a latitude")
	}
	r := runCLI(t, t.TempDir(), args...)
	wantExit(t, r, first.code)
	if r.enriched != first.enriched || r.review != first.review {
		t.Fatal("a damaged cache entry changed the outputs")
	}
	if n := vc.calls.Load(); n != int64(damaged) {
		t.Errorf("%d verify calls, want %d (the damaged entries)", n, damaged)
	}
	if want := fmt.Sprintf("cache: %d entries failed their checksum and were verified again", damaged); !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, tail(r.stderr, 1500))
	}
	// They were replaced: a third run makes no call.
	vc.reset()
	wantExit(t, runCLI(t, t.TempDir(), args...), first.code)
	if n := vc.calls.Load(); n != 0 {
		t.Errorf("third run: %d verify calls, want 0", n)
	}
}

// flipLatitudes changes the first digit after "latitude": in every step-th
// stored answer of the file's live namespaces, keeping the JSON valid, and
// returns how many it changed.
func flipLatitudes(t *testing.T, path string, step int) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT namespace, key, answer FROM cache_answers WHERE namespace LIKE 'live-%' ORDER BY namespace, key")
	if err != nil {
		t.Fatal(err)
	}
	type change struct{ ns, key, answer string }
	var changes []change
	for i := 0; rows.Next(); {
		var c change
		if err := rows.Scan(&c.ns, &c.key, &c.answer); err != nil {
			t.Fatal(err)
		}
		at := strings.Index(c.answer, `"latitude":`)
		if i++; i%step != 0 || at < 0 {
			continue
		}
		d := at + len(`"latitude":`)
		if c.answer[d] < '0' || c.answer[d] > '8' {
			continue
		}
		c.answer = c.answer[:d] + string(c.answer[d]+1) + c.answer[d+1:]
		changes = append(changes, c)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		t.Fatal(err)
	}
	for _, c := range changes {
		if _, err := db.Exec("UPDATE cache_answers SET answer = ? WHERE namespace = ? AND key = ?", c.answer, c.ns, c.key); err != nil {
			t.Fatal(err)
		}
	}
	return len(changes)
}

// childResult is the outcome of the real program run as a child process.
type childResult struct {
	code           int
	signal         string // the signal that killed it, if one did
	stdout, stderr string
}

// runChild runs addrclean's main in a child process (TestMain), so that a
// fault that kills the process is seen as such.
func runChild(t *testing.T, args ...string) childResult {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"=1", "ADDRCLEAN_BASE_URL=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := childResult{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.signal = ws.Signal().String()
	} else if err != nil && r.code < 0 {
		t.Fatal(err)
	}
	return r
}

// TestCacheDamagedFile: a damaged --cache file (cut short, a page zeroed,
// its header changed) crashed 'addrclean run --cache' (SIGBUS in bbolt) and
// 'addrclean cache stats' and 'prune' (SIGSEGV, or a panic). Now the
// housekeeping commands exit 1 naming the file and 'addrclean cache clear';
// a run moves the file aside, says where, starts a new cache and finishes
// with the answers of an intact one; 'cache clear' replaces a damaged file
// with an empty cache that the next run fills.
func TestCacheDamagedFile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	t.Setenv("ADDRCLEAN_BASE_URL", "")
	good := filepath.Join(t.TempDir(), "good.db")
	first := runCLI(t, t.TempDir(), "--country", "IE", "--limit", "150", "--cache", good, sampleCSV(t))
	wantExit(t, first, exitOK, exitRowErrors)
	orig, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	damages := []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"cut to half its pages", func(b []byte) []byte { return b[:len(b)/page/2*page] }},
		{"cut to three pages", func(b []byte) []byte { return b[:3*page] }},
		{"the answers' root page zeroed", func(b []byte) []byte { return filetest.ZeroPages(b, 4) }},
		{"the page size changed", func(b []byte) []byte { b[16] ^= 0x40; return b }},
	}
	for _, dm := range damages {
		t.Run(dm.name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "answers.db")
			damaged := dm.damage(bytes.Clone(orig))
			if err := os.WriteFile(db, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"cache", "stats", "--cache", db}, {"cache", "prune", "--cache", db}} {
				r := runChild(t, args...)
				if r.signal != "" || r.code != exitFatal {
					t.Fatalf("%s: exit %d, signal %q, want exit %d\n%s", args[:2], r.code, r.signal, exitFatal, excerpt(r.stderr))
				}
				for _, want := range []string{"cache " + db, "addrclean cache clear --cache " + db} {
					if !strings.Contains(r.stderr, want) {
						t.Errorf("%s: stderr lacks %q:\n%s", args[:2], want, excerpt(r.stderr))
					}
				}
			}
			out, review := filepath.Join(dir, "out.csv"), filepath.Join(dir, "review.csv")
			r := runChild(t, "run", "--country", "IE", "--limit", "150", "--no-progress", "--cache", db, "-o", out, "--review", review, sampleCSV(t))
			if r.signal != "" || (r.code != exitOK && r.code != exitRowErrors) {
				t.Fatalf("run: exit %d, signal %q\n%s", r.code, r.signal, excerpt(r.stderr))
			}
			moved, _ := filepath.Glob(db + ".damaged-*")
			if len(moved) != 1 || !strings.Contains(r.stderr, "cache "+db+" is damaged: moved it to "+moved[0]) {
				t.Fatalf("moved aside to %q; stderr:\n%s", moved, excerpt(r.stderr))
			}
			if b, _ := os.ReadFile(moved[0]); !bytes.Equal(b, damaged) {
				t.Error("the damaged file was changed when it was moved aside")
			}
			if b, _ := os.ReadFile(out); string(b) != first.enriched {
				t.Error("the run over a damaged cache wrote other answers")
			}

			// cache clear replaces a damaged file.
			if err := os.WriteFile(db, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runCache("clear", "--cache", db)
			if code != exitOK || !strings.Contains(stdout, "cache "+db+" was damaged or of an older format: replaced it with a new, empty cache") {
				t.Fatalf("cache clear: exit %d\n%s%s", code, stdout, stderr)
			}
			if code, stdout, stderr := runCache("stats", "--cache", db); code != exitOK || !strings.Contains(stdout, "0 entries") {
				t.Fatalf("cache stats after clear: exit %d\n%s%s", code, stdout, stderr)
			}
		})
	}

	// A file that is not a cache is left alone.
	csv := filepath.Join(t.TempDir(), "customers.csv")
	if err := os.WriteFile(csv, []byte("Address 1,Town\n1 Main St,Cork\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runChild(t, "cache", "clear", "--cache", csv)
	if b, _ := os.ReadFile(csv); r.code != exitFatal || string(b) != "Address 1,Town\n1 Main St,Cork\n" || !strings.Contains(r.stderr, "is it the right path?") {
		t.Fatalf("cache clear of a CSV file: exit %d, file %q\n%s", r.code, b, r.stderr)
	}
}

// TestRunCacheOldBbolt: a bbolt cache of an older addrclean is moved aside
// by a run (which says where, and what to do with it) and a new SQLite
// cache takes its place.
func TestRunCacheOldBbolt(t *testing.T) {
	t.Setenv("ADDRCLEAN_BASE_URL", "")
	dir := t.TempDir()
	db := filepath.Join(dir, "answers.db")
	if err := os.WriteFile(db, filetest.Bbolt(), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, t.TempDir(), "--country", "IE", "--limit", "20", "--cache", db, sampleCSV(t))
	wantExit(t, r, exitOK, exitRowErrors)
	moved, _ := filepath.Glob(db + ".bbolt-*")
	if len(moved) != 1 || !strings.Contains(r.stderr, "written by an older addrclean (bbolt): moved it to "+moved[0]) {
		t.Fatalf("moved %q; stderr:\n%s", moved, tail(r.stderr, 1500))
	}
	if code, stdout, _ := runCache("stats", "--cache", db); code != exitOK || !strings.Contains(stdout, "entries") || strings.Contains(stdout, " 0 entries") {
		t.Fatalf("cache stats of the new cache: exit %d\n%s", code, stdout)
	}
}

// excerpt is the part of a child's stderr that explains it: around a crash
// if there is one, else the end.
func excerpt(s string) string {
	for _, mark := range []string{"fatal error: ", "panic: ", "unexpected fault address"} {
		if i := strings.Index(s, mark); i >= 0 {
			return s[max(0, i-500):min(len(s), i+1500)]
		}
	}
	return tail(s, 1500)
}

// runCache runs 'addrclean cache' in-process.
func runCache(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = runMain(context.Background(), append([]string{"cache"}, args...), streams{in: strings.NewReader(""), out: &o, err: &e})
	return code, o.String(), e.String()
}

// TestCacheCommand runs in a synctest bubble: the entries are stored a day
// apart by the bubble's clock, which time.Sleep moves at once.
func TestCacheCommand(t *testing.T) {
	old := cacheLockTimeout
	cacheLockTimeout = 50 * time.Millisecond
	t.Cleanup(func() { cacheLockTimeout = old })
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) { testCacheCommand(t, dir) })
}

// testCacheCommand is TestCacheCommand in its bubble (no t.Run there: the
// cases run in turn).
func testCacheCommand(t *testing.T, dir string) {
	time.Sleep(time.Until(time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)))
	path := filepath.Join(dir, "c.db")
	d, err := cache.Open(path, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	live, err := d.Store(cache.LiveNamespace("https://api.example.com", testKey), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	emb, err := d.Store(cache.Namespace{ID: "embedded-test", Label: "embedded test"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range []string{"a", "b", "c", "d"} {
		_ = live.Put(context.Background(), k, &api.VerifyResponse{Action: api.ActionAccept})
		if i < 2 {
			_ = emb.Put(context.Background(), k, &api.VerifyResponse{Action: api.ActionAccept})
		}
		time.Sleep(24 * time.Hour)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	// now is 4 days after the first entry: entries are 4, 3, 2, 1 days old.
	missing := filepath.Join(dir, "none.db")

	tests := []struct {
		name     string
		args     []string
		code     int
		out, err []string // substrings of stdout and stderr
	}{
		{"help", []string{"--help"}, exitOK, nil, []string{"stats", "prune", "clear", "--cache"}},
		{"no action", []string{"--cache", path}, exitUsage, nil, []string{"one action"}},
		{"unknown action", []string{"vacuum", "--cache", path}, exitUsage, nil, []string{`unknown action "vacuum"`}},
		{"two actions", []string{"stats", "prune", "--cache", path}, exitUsage, nil, []string{"one action"}},
		{"no path", []string{"stats"}, exitUsage, nil, []string{"needs --cache PATH"}},
		{"bad ttl", []string{"prune", "--cache", path, "--cache-ttl", "0s"}, exitUsage, nil, []string{"--cache-ttl"}},
		{"bad flag", []string{"stats", "--cache", path, "--nope"}, exitUsage, nil, []string{"nope"}},
		{"json with prune", []string{"prune", "--json", "--cache", path}, exitUsage, nil, []string{"--json"}},
		{"missing file", []string{"stats", "--cache", missing}, exitFatal, nil, []string{missing, "does not exist"}},
		{"stats", []string{"stats", "--cache", path, "--cache-ttl", "60h"}, exitOK,
			[]string{path, "6 entries", "live https://api.example.com (key sha256", "embedded test", "OLDER THAN 60h0m0s",
				"2026-03-01T02:00:00Z", "2026-03-04T02:00:00Z"}, nil},
		{"prune", []string{"prune", "--cache", path, "--cache-ttl", "60h"}, exitOK, []string{"pruned 4 entries older than 60h0m0s from " + path}, nil},
		{"stats after prune", []string{"stats", "--cache", path}, exitOK, []string{"2 entries"}, nil},
		{"clear", []string{"clear", "--cache", path}, exitOK, []string{"cleared 2 entries from " + path}, nil},
		{"stats after clear", []string{"stats", "--cache", path}, exitOK, []string{"0 entries", "no namespaces"}, nil},
	}
	for _, tt := range tests {
		code, out, errOut := runCache(tt.args...)
		if code != tt.code {
			t.Fatalf("%s: exit %d, want %d\nstdout %s\nstderr %s", tt.name, code, tt.code, out, errOut)
		}
		for _, s := range tt.out {
			if !strings.Contains(out, s) {
				t.Errorf("%s: stdout lacks %q:\n%s", tt.name, s, out)
			}
		}
		for _, s := range tt.err {
			if !strings.Contains(errOut, s) {
				t.Errorf("%s: stderr lacks %q:\n%s", tt.name, s, errOut)
			}
		}
		if strings.Contains(out+errOut, testKey) {
			t.Errorf("%s: the key is printed", tt.name)
		}
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("cache stats created a missing file")
	}

	// --json, and a locked file.
	code, out, errOut := runCache("stats", "--json", "--cache", path)
	var st cache.Stats
	if code != exitOK || json.Unmarshal([]byte(out), &st) != nil || st.Path != path {
		t.Errorf("stats --json: exit %d, %s %s", code, out, errOut)
	}
	holder, err := cache.Open(path, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	for _, action := range []string{"stats", "prune", "clear"} {
		code, _, errOut := runCache(action, "--cache", path)
		if code != exitFatal || !strings.Contains(errOut, "cache "+path+" is locked by another addrclean process") {
			t.Errorf("%s on a locked cache: exit %d, %s", action, code, errOut)
		}
	}
}

// TestCacheCommandInterrupted: 'addrclean cache' stopped by Ctrl-C (a
// cancelled ctx) exits 130 and changes nothing.
func TestCacheCommandInterrupted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	d, err := cache.Open(path, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := d.Store(cache.LiveNamespace("https://api.example.com", testKey), time.Nanosecond)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b"} {
		_ = st.Put(context.Background(), k, &api.VerifyResponse{Action: api.ActionAccept})
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, action := range []string{"stats", "prune", "clear"} {
		var o, e bytes.Buffer
		code := runMain(ctx, []string{"cache", action, "--cache", path, "--cache-ttl", "1ns"}, streams{in: strings.NewReader(""), out: &o, err: &e})
		if code != exitInterrupted || !strings.Contains(e.String(), "context canceled") {
			t.Errorf("%s, cancelled: exit %d, want %d\nstdout %s\nstderr %s", action, code, exitInterrupted, o.String(), e.String())
		}
	}
	if code, out, errOut := runCache("stats", "--cache", path); code != exitOK || !strings.Contains(out, "2 entries") {
		t.Fatalf("after the cancelled commands: exit %d, want the 2 entries kept\n%s%s", code, out, errOut)
	}
}

func TestRunCacheUsageErrors(t *testing.T) {
	in := sampleCSV(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--cache-ttl", "1h", in}, "--cache-ttl needs --cache"},
		{[]string{"--mark-cached", in}, "--mark-cached needs --cache"},
		{[]string{"--cache", filepath.Join(t.TempDir(), "c.db"), "--cache-ttl", "-1h", in}, "--cache-ttl -1h0m0s"},
	} {
		var stdout, stderr bytes.Buffer
		code := runMain(context.Background(), append([]string{"run"}, tt.args...), streams{in: strings.NewReader(""), out: &stdout, err: &stderr})
		if code != exitUsage || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, stderr.String(), exitUsage, tt.want)
		}
	}
}

// BenchmarkRunCacheHits is the nightly re-run: 'addrclean run --cache' over
// the sample when every answer is in the cache (no verify call).
func BenchmarkRunCacheHits(b *testing.B) {
	dir := b.TempDir()
	in, err := filepath.Abs("../../sample_data/customers.csv")
	if err != nil {
		b.Fatal(err)
	}
	db := filepath.Join(dir, "answers.db")
	run := func() {
		var stderr bytes.Buffer
		code := runMain(context.Background(), []string{"run", "--log-format", "json", "--log-level", "error", "--no-progress",
			"--country", "IE", "--cache", db, "-o", filepath.Join(dir, "out.csv"), "--review", filepath.Join(dir, "review.csv"), in},
			streams{in: strings.NewReader(""), out: &bytes.Buffer{}, err: &stderr})
		if code != exitOK && code != exitRowErrors {
			b.Fatalf("exit %d: %s", code, stderr.String())
		}
	}
	run() // fills the cache
	b.ResetTimer()
	for range b.N {
		run()
	}
	b.ReportMetric(float64(500*b.N)/b.Elapsed().Seconds(), "rows/s")
}
