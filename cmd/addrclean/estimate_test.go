package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/addrclean/addrclean/internal/pgtest"
	"github.com/addrclean/addrclean/internal/sqlitefile/filetest"
)

// billed is the real service counting the verify calls it is paid for;
// stop, when set, is called at call stopAt (an interrupt mid-run).
type billed struct {
	next   http.Handler
	calls  atomic.Int64
	stopAt atomic.Int64
	stop   atomic.Pointer[context.CancelFunc]
}

func (b *billed) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/verify") {
		if n := b.calls.Add(1); n == b.stopAt.Load() {
			if f := b.stop.Load(); f != nil {
				(*f)()
			}
		}
	}
	b.next.ServeHTTP(w, r)
}

// runSummary runs 'addrclean run' in-process with ctx, and returns its exit
// code, its stderr and its --summary.
func runSummary(t *testing.T, ctx context.Context, dir string, args ...string) (int, string, map[string]any) {
	t.Helper()
	keyFile, sum := filepath.Join(dir, "key"), filepath.Join(dir, "summary.json")
	if err := os.WriteFile(keyFile, []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(sum)
	full := append([]string{"run", "--log-format", "json", "--no-progress", "--api-key-file", keyFile, "--summary", sum}, args...)
	var stdout, stderr bytes.Buffer
	code := runMain(ctx, full, streams{in: strings.NewReader(""), out: &stdout, err: &stderr})
	var m map[string]any
	if b, err := os.ReadFile(sum); err == nil {
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
	}
	return code, stderr.String(), m
}

// TestRunEstimateIsTheRun: for every kind of source (CSV, XLSX, a
// PostgreSQL table, schema-qualified, and a query, an SQLite table), the
// dry run's calls to pay are the calls the same command then makes, and
// its cache and journal answers are the run's cache hits and resumed
// rows: with nothing yet, after an interrupted run (--resume, with the
// cache it filled) and once everything is cached.
func TestRunEstimateIsTheRun(t *testing.T) {
	isolateJournals(t)
	pgURL := pgtest.RequireDB(t)
	loadSample(t, pgURL, "customers")
	dbExec(t, pgURL, "CREATE SCHEMA crm", "ALTER TABLE customers SET SCHEMA crm")
	sqliteURL := "sqlite:" + filepath.Join(t.TempDir(), "crm.db")
	loadSample(t, sqliteURL, "customers")
	xlsx, err := filepath.Abs("../../sample_data/customers.xlsx")
	if err != nil {
		t.Fatal(err)
	}
	svc := &billed{}
	base := newTestService(t, func(h http.Handler) http.Handler { svc.next = h; return svc }).URL

	tableOut := []string{"--id-col", "Customer ID", "--out-table", "av", "--review-table", "av_review"}
	for _, src := range []struct {
		name string
		args func(dir string) []string
		// shared keeps the cache in PostgreSQL (--cache postgres://): the
		// dry run only looks at it, claiming nothing.
		shared bool
	}{
		{"csv", func(dir string) []string {
			return []string{"-o", filepath.Join(dir, "out.csv"), "--review", filepath.Join(dir, "review.csv"), sampleCSV(t)}
		}, false},
		{"csv, shared cache", func(dir string) []string {
			return []string{"-o", filepath.Join(dir, "out.csv"), "--review", filepath.Join(dir, "review.csv"), sampleCSV(t)}
		}, true},
		{"xlsx", func(dir string) []string {
			return []string{"-o", filepath.Join(dir, "out.xlsx"), "--review", filepath.Join(dir, "review.xlsx"), xlsx}
		}, false},
		{"postgres table", func(string) []string {
			return append(append([]string{}, tableOut...), "--table", `crm."customers"`, pgURL)
		}, false},
		{"postgres query", func(string) []string {
			return append(append([]string{}, tableOut...), "--out-db", pgURL, "--query", `SELECT * FROM crm.customers WHERE "Country" <> 'France'`, pgURL)
		}, false},
		{"sqlite table", func(string) []string {
			return append(append([]string{}, tableOut...), "--table", "customers", sqliteURL)
		}, false},
	} {
		t.Run(src.name, func(t *testing.T) {
			dir := t.TempDir()
			cacheFile := filepath.Join(dir, "answers.cache")
			cacheSpec := cacheFile
			if src.shared {
				dbExec(t, pgURL, "CREATE SCHEMA shared_cache")
				cacheSpec = pgURL + "&search_path=shared_cache"
			}
			common := append([]string{"--base-url", base, "--rate", "0", "--country", "IE", "--retries", "0"}, src.args(dir)...)
			withCache := append([]string{"--cache", cacheSpec}, common...)
			if strings.HasPrefix(src.name, "postgres") || strings.HasPrefix(src.name, "sqlite") {
				dbExec(t, common[len(common)-1], `DROP TABLE IF EXISTS av`, `DROP TABLE IF EXISTS av_review`, `DROP TABLE IF EXISTS av_runs`)
			}
			step := func(name string, args []string, interruptAt int64) {
				t.Helper()
				_, cacheErr := os.Stat(cacheFile)
				code, stderr, est := runSummary(t, context.Background(), dir, append([]string{"--dry-run", "--price-per-call", "EUR 0.01"}, args...)...)
				if code != 0 || est == nil {
					t.Fatalf("%s: dry run exit %d:\n%s", name, code, tail(messages(stderr), 2000))
				}
				if _, err := os.Stat(cacheFile); (err == nil) != (cacheErr == nil) {
					t.Fatalf("%s: the dry run created the cache", name)
				}
				e, _ := est["estimate"].(map[string]any)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				svc.calls.Store(0)
				svc.stopAt.Store(interruptAt)
				svc.stop.Store(&cancel)
				code, stderr, run := runSummary(t, ctx, dir, append([]string{"--price-per-call", "EUR 0.01"}, args...)...)
				if interruptAt > 0 {
					if code != exitInterrupted {
						t.Fatalf("%s: exit %d, want an interrupt:\n%s", name, code, tail(messages(stderr), 2000))
					}
					return
				}
				if code != 0 && code != exitRowErrors || run == nil {
					t.Fatalf("%s: exit %d:\n%s", name, code, tail(messages(stderr), 2000))
				}
				for _, f := range []struct{ est, run string }{
					{"rows", "rows_read"}, {"calls_to_pay", "calls_made"}, {"cache_answers", "cache_hits"}, {"journal_answers", "rows_resumed"},
				} {
					if e[f.est] != run[f.run] {
						t.Errorf("%s: estimate %s = %v, the run's %s = %v", name, f.est, e[f.est], f.run, run[f.run])
					}
				}
				calls := e["calls_to_pay"].(float64)
				if float64(svc.calls.Load()) != calls {
					t.Errorf("%s: the service was paid for %d calls, the estimate said %v", name, svc.calls.Load(), calls)
				}
				if want := calls / 100; e["cost"] != want {
					t.Errorf("%s: cost %v, want %v", name, e["cost"], want)
				}
				// The run's summary says what its calls cost: the estimate.
				if spent, _ := run["spent"].(map[string]any); spent == nil || spent["cost"] != e["cost"] || spent["cost_text"] != e["cost_text"] {
					t.Errorf("%s: the run spent %v, the estimate said %v (%v)", name, run["spent"], e["cost"], e["cost_text"])
				}
				t.Logf("%s: %v", name, e)
			}
			step("no cache, no journal", common, 0)
			step("interrupted", withCache, 120)
			// As the run, the dry run refuses to start afresh over the
			// unfinished journal without --resume.
			if code, stderr, _ := runSummary(t, context.Background(), dir, append([]string{"--dry-run"}, withCache...)...); code != exitUsage ||
				!strings.Contains(stderr, "finished rows of an interrupted run") {
				t.Errorf("dry run over an unfinished journal without --resume: exit %d:\n%s", code, tail(messages(stderr), 1000))
			}
			step("resumed with the cache it filled", append([]string{"--resume"}, withCache...), 0)
			step("all cached", withCache, 0)
		})
	}
}

// TestRunPricePerCall: the price comes from the flag, else from
// ADDRCLEAN_PRICE_PER_CALL, in the currency as written, in --summary and on
// the Estimate card of --report; a price that is not one is a usage error,
// of the dry run and of the run alike.
func TestRunPricePerCall(t *testing.T) {
	in := sampleCSV(t)
	t.Setenv("ADDRCLEAN_PRICE_PER_CALL", "0,5 £")
	for _, tc := range []struct {
		args []string
		code int
		text string
	}{
		{[]string{"--dry-run"}, exitOK, "0,50 £"},
		{[]string{"--dry-run", "--price-per-call", "$0.002"}, exitOK, "$0.002"},
		{[]string{"--dry-run", "--price-per-call", "-0.002"}, exitUsage, ""},
		{[]string{"--price-per-call", "1,000.50 EUR"}, exitUsage, ""},
	} {
		dir := t.TempDir()
		code, stderr, sum := runSummary(t, context.Background(), dir, append(tc.args, "--country", "IE", "--limit", "1", in)...)
		if code != tc.code {
			t.Errorf("%q: exit %d, want %d:\n%s", tc.args, code, tc.code, tail(messages(stderr), 1000))
			continue
		}
		if tc.text == "" {
			if !strings.Contains(stderr, "want an amount per call") {
				t.Errorf("%q: %s", tc.args, tail(messages(stderr), 1000))
			}
			continue
		}
		if e, _ := sum["estimate"].(map[string]any); e == nil || e["cost_text"] != tc.text {
			t.Errorf("%q: estimate %v, want cost %q", tc.args, sum["estimate"], tc.text)
		}
		// With --report, the same figures on the Estimate card.
		page := filepath.Join(dir, "estimate.html")
		if code, stderr, _ := runSummary(t, context.Background(), dir, append(tc.args, "--report", page, "--country", "IE", "--limit", "1", in)...); code != exitOK {
			t.Fatalf("%q --report: exit %d:\n%s", tc.args, code, tail(messages(stderr), 1000))
		}
		if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "<h2>Estimate</h2>") || !strings.Contains(string(b), "<b>"+tc.text+"</b>") {
			t.Errorf("%q: no Estimate card with %s: %v\n%s", tc.args, tc.text, err, b)
		}
	}
}

// TestRunDryRunStdin: a dry run over stdin needs no outputs named, as
// before the estimate, and estimates it (there is no journal to read).
func TestRunDryRunStdin(t *testing.T) {
	in, err := os.ReadFile(sampleCSV(t))
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := runMain(t.Context(), []string{"run", "--dry-run", "--log-format", "json", "--resume", "-"},
		streams{in: bytes.NewReader(in), out: &stdout, err: &stderr})
	if code != exitOK || !strings.Contains(stdout.String(), "calls to pay       478") {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout.String(), tail(messages(stderr.String()), 1000))
	}
}

// TestRunDryRunDamagedCache: a damaged cache, which the run moves aside to
// start an empty one, answers nothing in the estimate either (with a
// warning), and the run then makes the calls the estimate said.
func TestRunDryRunDamagedCache(t *testing.T) {
	dir := t.TempDir()
	cacheFile := filepath.Join(dir, "answers.cache")
	args := []string{"--cache", cacheFile, "-o", filepath.Join(dir, "out.csv"), "--review", filepath.Join(dir, "review.csv"), sampleCSV(t)}
	if code, stderr, _ := runSummary(t, t.Context(), dir, args...); code != exitRowErrors {
		t.Fatalf("filling the cache: exit %d:\n%s", code, tail(messages(stderr), 1000))
	}
	f, err := os.OpenFile(cacheFile, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte("X"), 64), 4096); err != nil { // the second page
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	code, stderr, est := runSummary(t, t.Context(), dir, append([]string{"--dry-run"}, args...)...)
	e, _ := est["estimate"].(map[string]any)
	if code != exitOK || e == nil || e["cache_answers"] != 0.0 || !strings.Contains(stderr, "the cache is damaged") {
		t.Fatalf("dry run: exit %d, %v:\n%s", code, e, tail(messages(stderr), 1000))
	}
	code, stderr, run := runSummary(t, t.Context(), dir, args...)
	if code != exitRowErrors || run["calls_made"] != e["calls_to_pay"] || run["cache_hits"] != 0.0 {
		t.Fatalf("run: exit %d, calls %v, cache hits %v; estimate %v:\n%s", code, run["calls_made"], run["cache_hits"], e, tail(messages(stderr), 1000))
	}
}

// TestRunDryRunDamagedEntries: an answer that fails its checksum and one
// past --cache-ttl in a cache file are calls to pay in the dry run, as the
// run then pays them; the others are the cache's answers in both.
func TestRunDryRunDamagedEntries(t *testing.T) {
	dir := t.TempDir()
	cacheFile := filepath.Join(dir, "answers.cache")
	args := []string{"--cache", cacheFile, "--cache-ttl", "720h", "-o", filepath.Join(dir, "out.csv"), "--review", filepath.Join(dir, "review.csv"), sampleCSV(t)}
	code, stderr, first := runSummary(t, t.Context(), dir, args...)
	if code != exitRowErrors || first["calls_made"].(float64) < 10 {
		t.Fatalf("filling the cache: exit %d, %v calls:\n%s", code, first["calls_made"], tail(messages(stderr), 1000))
	}
	filetest.Exec(t, cacheFile,
		"UPDATE cache_answers SET crc = crc + 1 WHERE rowid = 3",
		"UPDATE cache_answers SET obtained_ms = obtained_ms - 31 * 86400000 WHERE rowid = 5", // expired, its checksum redone below
	)
	fixExpiredChecksum(t, cacheFile, 5)
	code, stderr, est := runSummary(t, t.Context(), dir, append([]string{"--dry-run"}, args...)...)
	e, _ := est["estimate"].(map[string]any)
	if code != exitOK || e == nil {
		t.Fatalf("dry run: exit %d, %v:\n%s", code, e, tail(messages(stderr), 1000))
	}
	code, stderr, run := runSummary(t, t.Context(), dir, args...)
	if code != exitRowErrors || run["calls_made"] != e["calls_to_pay"] || run["cache_hits"] != e["cache_answers"] || e["calls_to_pay"] != 2.0 {
		t.Fatalf("run: exit %d, calls %v, cache hits %v; estimate %v (want 2 calls):\n%s", code, run["calls_made"], run["cache_hits"], e, tail(messages(stderr), 1000))
	}
}

// fixExpiredChecksum sets the checksum of the cache file's row rowid to the
// one of its columns (CRC-32C of namespace, NUL, key, NUL, obtained_ms as 8
// big-endian bytes, answer: docs/storage.md), so that a row aged through
// SQL is expired, not damaged.
func fixExpiredChecksum(t *testing.T, cacheFile string, rowid int) {
	t.Helper()
	db, err := sql.Open("sqlite", cacheFile)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var (
		ns, key, answer string
		at              int64
	)
	if err := db.QueryRow("SELECT namespace, key, obtained_ms, answer FROM cache_answers WHERE rowid = ?", rowid).Scan(&ns, &key, &at, &answer); err != nil {
		t.Fatal(err)
	}
	b := append([]byte(ns+"\x00"+key+"\x00"), binary.BigEndian.AppendUint64(nil, uint64(at))...)
	crc := crc32.Checksum(append(b, answer...), crc32.MakeTable(crc32.Castagnoli))
	if _, err := db.Exec("UPDATE cache_answers SET crc = ? WHERE rowid = ?", int64(crc), rowid); err != nil {
		t.Fatal(err)
	}
}

// endlessCSV is an input that never ends: rows of distinct addresses.
type endlessCSV struct {
	n   int
	buf []byte
}

func (e *endlessCSV) Read(p []byte) (int, error) {
	for len(e.buf) < len(p) {
		if e.n == 0 {
			e.buf = append(e.buf, "Address 1,Town,Country\n"...)
		}
		e.n++
		e.buf = fmt.Appendf(e.buf, "%d Main Street,Cork,Ireland\n", e.n)
	}
	n := copy(p, e.buf)
	e.buf = e.buf[n:]
	return n, nil
}

// TestRunDryRunCacheUnusable: a cache file that a run could not open (locked
// by another process, not a cache, a directory) stops the dry run with
// exit 1 and the path, as it stops the run: the file is opened while the
// input is read, and its failure stops the reading (here, of an input
// that never ends).
func TestRunDryRunCacheUnusable(t *testing.T) {
	old := cacheLockTimeout
	cacheLockTimeout = 50 * time.Millisecond
	t.Cleanup(func() { cacheLockTimeout = old })
	for _, tc := range unusableCaches(t) {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runMain(t.Context(), []string{"run", "--dry-run", "--log-format", "json", "--cache", tc.path, "-"},
				streams{in: &endlessCSV{}, out: &stdout, err: &stderr})
			if code != exitFatal || !strings.Contains(stderr.String(), "cache "+tc.path) || !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("exit %d, want %d with the path and %q:\n%s", code, exitFatal, tc.want, tail(messages(stderr.String()), 1000))
			}
		})
	}
}
