package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/internal/pgtest"
)

// addVariants adds to table customers (the sample) a copy of every tenth
// row under a new id, its street upper-cased and its town padded with white
// space: the same request after folding, which a shard must pay for once,
// with its first spelling. It returns the rows added.
func addVariants(t *testing.T, dbURL string) int {
	t.Helper()
	dbExec(t, dbURL, `INSERT INTO customers SELECT 'X' || "Customer ID", "Name", upper("Address 1"), "Address 2",
		'  ' || lower("Town") || ' ', "County", "Postcode", "Country" FROM customers WHERE "Customer ID" LIKE '%7'`)
	_, rows := dbRows(t, dbURL, `SELECT count(*) FROM customers WHERE "Customer ID" LIKE 'X%'`)
	n, _ := strconv.Atoi(rows[0][0])
	if n < 20 {
		t.Fatalf("%d variants added", n)
	}
	return n
}

// TestRunTableShards: three runners with --shard 0/3, 1/3 and 2/3 over one
// table (PostgreSQL, and SQLite with the outputs in the input's file), side
// by side, upserting into one out-table and one review table, leave both
// tables row for row as one unsharded run leaves its own, and pay between
// them the calls of the unsharded run: every distinct request once. Then,
// run one after the other over review rows that no longer need review,
// each shard deletes its own stale rows and no other shard's.
func TestRunTableShards(t *testing.T) {
	isolateJournals(t)
	for _, kind := range []string{"postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			dbURL := "sqlite:" + filepath.Join(t.TempDir(), "crm.db")
			if kind == "postgres" {
				dbURL = pgtest.RequireDB(t)
			}
			testShards(t, dbURL)
		})
	}
}

// testShards is TestRunTableShards in the database at dbURL.
func testShards(t *testing.T, dbURL string) {
	n := loadSample(t, dbURL, "customers")
	n += addVariants(t, dbURL)
	base, calls := loggedService(t)
	common := []string{"--base-url", base, "--rate", "0", "--country", "IE", "--retries", "0",
		"--table", "customers", "--id-col", "Customer ID"}
	single := runDB(t, t.TempDir(), append(common, "--out-table", "av1", "--review-table", "rv1", dbURL)...)
	wantExit(t, single, exitRowErrors)
	paid := calls.take()
	for k, c := range paid {
		if c != 1 {
			t.Fatalf("the unsharded run paid %d times for %s", c, k)
		}
	}

	shards := func(concurrent bool) (sum int64) {
		t.Helper()
		res := make(chan runResult, 3)
		for i := range 3 {
			run := func() {
				res <- runDB(t, t.TempDir(), append(common, "--shard", fmt.Sprintf("%d/3", i),
					"--out-table", "av3", "--review-table", "rv3", dbURL)...)
			}
			if concurrent {
				go run()
			} else {
				run()
			}
		}
		var read, other int64
		for range 3 {
			r := <-res
			if r.code != exitOK && r.code != exitRowErrors {
				t.Fatalf("a shard: exit %d\n%s", r.code, tail(messages(r.stderr), 2000))
			}
			read += summaryInt(r, "rows_read")
			other += summaryInt(r, "rows_other_shards")
			if sh, _ := r.summary["shard"].(string); !strings.HasSuffix(sh, "/3") {
				t.Errorf("summary's shard %q", sh)
			}
		}
		if read != int64(n) || other != int64(2*n) {
			t.Errorf("the shards read %d rows and passed %d over, want %d and %d", read, other, n, 2*n)
		}
		got := calls.take()
		for k, c := range got {
			sum += int64(c)
			if c != 1 || paid[k] != 1 {
				t.Errorf("the shards paid %d times for %s, the unsharded run %d", c, k, paid[k])
			}
		}
		if len(got) != len(paid) {
			t.Errorf("the shards paid for %d distinct requests, the unsharded run %d", len(got), len(paid))
		}
		same := func(a, b string) {
			t.Helper()
			got, want := avRows(t, dbURL, a), avRows(t, dbURL, b)
			if len(got) != len(want) {
				t.Fatalf("%s holds %d rows, %s %d", a, len(got), b, len(want))
			}
			for i := range want {
				if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
					t.Errorf("%s and %s differ:\n%q\n%q", a, b, got[i], want[i])
				}
			}
		}
		same("av3", "av1")
		same("rv3", "rv1")
		return sum
	}
	if got := shards(true); got != summaryInt(single, "calls_made") {
		t.Errorf("the shards made %d calls, the unsharded run %d", got, summaryInt(single, "calls_made"))
	}

	// Review rows of rows that are Accept now, as a fixed address leaves
	// them: the shard of each row deletes it, the others leave it be.
	_, accepted := dbRows(t, dbURL, `SELECT "Customer ID" FROM av1 WHERE av_action = 'Accept' ORDER BY 1 LIMIT 30`)
	for _, r := range accepted {
		dbExec(t, dbURL, fmt.Sprintf(`INSERT INTO rv3 ("Customer ID", av_action) VALUES ('%s', 'Suggest')`, r[0]))
	}
	if len(accepted) < 10 {
		t.Fatalf("%d Accept rows", len(accepted))
	}
	shards(false)
}

// TestRunTableShardsResume: a shard killed in the middle leaves its own
// journal, which neither other shard takes up; run again with --resume it
// goes on from there, and the set of shards leaves the tables as one
// unsharded run, having paid again for the calls in flight at the kill at
// most.
func TestRunTableShardsResume(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the program in subprocesses")
	}
	journals := isolateJournals(t)
	const workers = 4
	dbURL := pgtest.RequireDB(t)
	loadSample(t, dbURL, "customers")
	base, calls := loggedService(t)
	common := []string{"--base-url", base, "--rate", "0", "--country", "IE", "--retries", "0", "--workers", strconv.Itoa(workers),
		"--table", "customers", "--id-col", "Customer ID"}
	single := runDB(t, t.TempDir(), append(common, "--out-table", "av1", "--review-table", "rv1", dbURL)...)
	wantExit(t, single, exitRowErrors)
	distinct := len(calls.take())

	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte(testKey), 0o600); err != nil {
		t.Fatal(err)
	}
	shardArgs := func(i int) []string {
		return append([]string{"run", "--log-format", "json", "--no-progress", "--api-key-file", keyFile, "--resume",
			"--shard", fmt.Sprintf("%d/3", i), "--out-table", "av3", "--review-table", "rv3"}, append(common, dbURL)...)
	}
	total := map[string]int{}
	run := func(i int, killAt int64) (int, string) {
		cmd := exec.Command(os.Args[0], shardArgs(i)...)
		cmd.Env = append(os.Environ(), childEnv+"=1", batchEnv+"=10")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		calls.killAt.Store(killAt)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		calls.victim.Store(cmd.Process)
		_ = cmd.Wait()
		calls.victim.Store(nil)
		for k, v := range calls.take() {
			total[k] += v
		}
		return cmd.ProcessState.ExitCode(), messages(stderr.String())
	}
	// Shard 1 is killed after a third of its part.
	if code, msg := run(1, int64(distinct/9)); code != -1 {
		t.Fatalf("shard 1 was not killed: exit %d\n%s", code, tail(msg, 2000))
	}
	js, _ := filepath.Glob(filepath.Join(journals, "*.journal"))
	if len(js) != 1 {
		t.Fatalf("after the kill, journals %v, want one", js)
	}
	for _, i := range []int{0, 2} {
		code, msg := run(i, 0)
		if code != exitOK && code != exitRowErrors {
			t.Fatalf("shard %d: exit %d\n%s", i, code, tail(msg, 2000))
		}
		if strings.Contains(msg, "--resume: the journal holds") {
			t.Errorf("shard %d resumed another shard's journal:\n%s", i, tail(msg, 2000))
		}
	}
	if now, _ := filepath.Glob(filepath.Join(journals, "*.journal")); fmt.Sprint(now) != fmt.Sprint(js) {
		t.Errorf("after shards 0 and 2, journals %v, want shard 1's %v", now, js)
	}
	code, msg := run(1, 0)
	if code != exitOK && code != exitRowErrors {
		t.Fatalf("shard 1 resumed: exit %d\n%s", code, tail(msg, 2000))
	}
	if !strings.Contains(msg, "--resume: the journal holds") {
		t.Errorf("shard 1 did not resume its journal:\n%s", tail(msg, 2000))
	}
	if js, _ := filepath.Glob(filepath.Join(journals, "*.journal")); len(js) != 0 {
		t.Errorf("journals left after every shard finished: %v", js)
	}
	for _, tab := range [][2]string{{"av3", "av1"}, {"rv3", "rv1"}} {
		if got, want := avRows(t, dbURL, tab[0]), avRows(t, dbURL, tab[1]); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s (%d rows) differs from the unsharded run's %s (%d rows)", tab[0], len(got), tab[1], len(want))
		}
	}
	repeated := 0
	for _, c := range total {
		repeated += c - 1
	}
	if len(total) != distinct || repeated > workers {
		t.Errorf("the shards paid for %d distinct requests (want %d), %d of them again (at most %d in flight at the kill)",
			len(total), distinct, repeated, workers)
	}
}

// TestRunShardRefusals: a --shard that is not I/N, or with outputs N
// runners cannot share (files, a report of one part), is a usage error
// before any change or call.
func TestRunShardRefusals(t *testing.T) {
	isolateJournals(t)
	dbURL := pgtest.RequireDB(t)
	loadSample(t, dbURL, "customers")
	srv, vc := countingService(t)
	common := []string{"--base-url", srv.URL, "--country", "IE", "--table", "customers", "--id-col", "Customer ID", dbURL}
	dir := t.TempDir()
	for _, tc := range []struct {
		args, want []string
	}{
		{[]string{"--shard", "3/3", "--out-table", "av"}, []string{"--shard", `"3/3"`, "I from 0 to N-1"}},
		{[]string{"--shard", "1", "--out-table", "av"}, []string{"--shard", "I/N"}},
		{[]string{"--shard", "0/2", "-o", filepath.Join(dir, "out.csv")}, []string{"--shard writes table outputs only"}},
		{[]string{"--shard", "0/2", "--out-table", "av", "--review", filepath.Join(dir, "rv.csv")}, []string{"--shard writes table outputs only"}},
		{[]string{"--shard", "0/2", "--out-table", "av", "-o", "-"}, []string{"--shard writes table outputs only"}},
		{[]string{"--shard", "0/2", "--out-table", "av", "--report", filepath.Join(dir, "r.html")}, []string{"--report", "addrclean report"}},
	} {
		wantRefused(t, vc, dbURL, "customers", append(tc.args, common...), tc.want)
	}
	// A file INPUT writes output files.
	r := runDB(t, dir, "--shard", "0/2", "--country", "IE", "--out-db", dbURL, "--out-table", "av", sampleCSV(t))
	if r.code != exitUsage || !strings.Contains(messages(r.stderr), "--shard splits a database INPUT") {
		t.Errorf("a file INPUT with --shard: exit %d\n%s", r.code, tail(messages(r.stderr), 2000))
	}
}
