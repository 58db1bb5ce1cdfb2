package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/addrclean/addrclean/internal/pgtest"
	"github.com/addrclean/addrclean/table"
	"github.com/addrclean/addrclean/table/tabletest"
	"github.com/addrclean/addrclean/writers"
)

// batchEnv sets tableBatchRows in the program the kill tests run.
const batchEnv = "ADDRCLEAN_TEST_TABLE_BATCH"

func init() {
	if n, err := strconv.Atoi(os.Getenv(batchEnv)); err == nil {
		tableBatchRows = n
	}
}

// The cmd tests share one PostgreSQL server (pgtest.Shared), started by the
// first test that needs it; it stops when the test process ends.

// sampleRows reads the sample export.
func sampleRows(t *testing.T) (header []string, rows [][]string) {
	t.Helper()
	f, err := os.Open(sampleCSV(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	all, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return all[0], all[1:]
}

// loadSample creates table name in the database at dbURL holding the
// sample export, every column text.
func loadSample(t *testing.T, dbURL, name string) int {
	t.Helper()
	header, rows := sampleRows(t)
	ctx := context.Background()
	var cols []string
	for _, h := range header {
		cols = append(cols, quoteIdent(h)+" text")
	}
	create := fmt.Sprintf("CREATE TABLE %s (%s)", quoteIdent(name), strings.Join(cols, ", "))
	if strings.HasPrefix(dbURL, "sqlite:") {
		var stmts []string
		stmts = append(stmts, create, "BEGIN")
		for _, r := range rows {
			vals := make([]string, len(r))
			for i, c := range r {
				vals[i] = "'" + strings.ReplaceAll(c, "'", "''") + "'"
			}
			stmts = append(stmts, fmt.Sprintf("INSERT INTO %s VALUES (%s)", quoteIdent(name), strings.Join(vals, ", ")))
		}
		dbExec(t, dbURL, append(stmts, "COMMIT")...)
		return len(rows)
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, create); err != nil {
		t.Fatal(err)
	}
	src := make([][]any, len(rows))
	for i, r := range rows {
		for _, c := range r {
			src[i] = append(src[i], c)
		}
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{name}, header, pgx.CopyFromRows(src)); err != nil {
		t.Fatal(err)
	}
	return len(rows)
}

func csvRecords(t *testing.T, s string) int {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(s)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return len(recs)
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// dbExec runs setup statements through the database's writing side.
func dbExec(t *testing.T, dbURL string, stmts ...string) {
	t.Helper()
	tabletest.Exec(t, dbURL, stmts...)
}

// dbRows returns the rows of query as text cells.
func dbRows(t *testing.T, dbURL, query string) (header []string, rows [][]string) {
	t.Helper()
	return tabletest.ReadAll(t, tabletest.Open(t, dbURL, true), query)
}

// runDB runs 'addrclean run' in-process like runCLI, without file outputs
// unless args name them.
func runDB(t *testing.T, dir string, args ...string) runResult {
	t.Helper()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := filepath.Join(dir, "summary.json")
	full := append([]string{"run", "--log-format", "json", "--no-progress", "--api-key-file", keyFile, "--summary", sum}, args...)
	var stdout, stderr bytes.Buffer
	code := runMain(context.Background(), full, streams{in: strings.NewReader(""), out: &stdout, err: &stderr})
	res := runResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
	if b, err := os.ReadFile(sum); err == nil {
		_ = json.Unmarshal(b, &res.summary)
		res.enriched = string(b) // the summary's text, for secret checks
	}
	return res
}

// isolateJournals points the user cache directory, where runs with table
// outputs only keep their journal, at a directory of the test's.
func isolateJournals(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", dir)
	return filepath.Join(dir, "addrclean", "journals")
}

// avRows is an out-table without verified_at, in id order.
func avRows(t *testing.T, dbURL, name string) [][]string {
	t.Helper()
	_, rows := dbRows(t, dbURL, fmt.Sprintf(`SELECT * FROM %s ORDER BY 1`, quoteIdent(name)))
	for i := range rows {
		rows[i] = rows[i][:len(rows[i])-1]
	}
	return rows
}

// TestRunTableMatchesCSV: the same rows give the same av_ values whether they
// come from a CSV file or a table, in PostgreSQL and in SQLite (there with
// the outputs in the input's own file), and the review table holds the
// review file's rows.
func TestRunTableMatchesCSV(t *testing.T) {
	isolateJournals(t)
	csvRun := runCLI(t, t.TempDir(), "--country", "IE", "--raw-cells", sampleCSV(t))
	wantExit(t, csvRun, exitRowErrors)
	file, err := csv.NewReader(strings.NewReader(csvRun.enriched)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// The input columns; the file then has the av_ columns of a table, its
	// own duplicate columns and av_changes.
	width := slices.Index(file[0], "av_action")
	changes := slices.Index(file[0], writers.ChangesColumn)
	want, wantChanges := map[string][]string{}, map[string]string{}
	for _, r := range file[1:] {
		want[r[0]] = r[width : width+len(writers.EnrichedColumns)]
		wantChanges[r[0]] = r[changes]
	}
	review, err := csv.NewReader(strings.NewReader(csvRun.review)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var wantReview []string
	id, action := slices.Index(review[0], "Customer ID"), slices.Index(review[0], "av_action")
	for _, r := range review[1:] {
		wantReview = append(wantReview, r[id]+" "+r[action])
	}
	slices.Sort(wantReview)

	for _, kind := range []string{"postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			var dbURL string
			if kind == "postgres" {
				dbURL = pgtest.RequireDB(t)
			} else {
				dbURL = "sqlite:" + filepath.Join(t.TempDir(), "crm.db")
			}
			n := loadSample(t, dbURL, "customers")
			r := runDB(t, t.TempDir(), "--country", "IE", "--table", "customers", "--id-col", "Customer ID",
				"--out-table", "customers_av", "--review-table", "customers_review", dbURL)
			wantExit(t, r, exitRowErrors)
			if strings.Contains(r.stderr, pgtest.Password) || strings.Contains(r.enriched, pgtest.Password) {
				t.Fatal("the password shows in the logs or the summary")
			}
			header, rows := dbRows(t, dbURL, `SELECT * FROM customers_av ORDER BY "Customer ID"`)
			if len(rows) != n {
				t.Fatalf("%d rows in the out-table, want %d", len(rows), n)
			}
			if !slices.Equal(header[1:25], file[0][width:width+len(writers.EnrichedColumns)]) || header[0] != "Customer ID" || header[25] != writers.ChangesColumn || header[26] != "input_label" || header[27] != "verified_at" {
				t.Fatalf("out-table columns %q", header)
			}
			for _, row := range rows {
				if w := want[row[0]]; !slices.Equal(row[1:25], w) {
					t.Fatalf("id %s:\n table %q\n file  %q", row[0], row[1:25], w)
				}
				if w := wantChanges[row[0]]; row[25] != w {
					t.Fatalf("id %s: av_changes %q in the table, %q in the file", row[0], row[25], w)
				}
			}
			_, rv := dbRows(t, dbURL, `SELECT "Customer ID", av_action FROM customers_review`)
			var got []string
			for _, r := range rv {
				got = append(got, r[0]+" "+r[1])
			}
			slices.Sort(got)
			if !slices.Equal(got, wantReview) {
				t.Fatalf("review table %q\nreview file %q", got, wantReview)
			}
			// The input table is as it was.
			h, in := dbRows(t, dbURL, `SELECT * FROM customers`)
			if len(in) != n || len(h) != width {
				t.Fatalf("the input table changed: %d rows, %d columns", len(in), len(h))
			}
		})
	}
}

// TestRunTableNightly is the nightly pattern: a re-run with --cache pays only
// for the row whose address changed, updates rows in place (no duplicate),
// and --where takes only some rows; file outputs still work. The password is
// in no log, summary or journal.
func TestRunTableNightly(t *testing.T) {
	journals := isolateJournals(t)
	dbURL := pgtest.RequireDB(t)
	n := loadSample(t, dbURL, "customers")
	srv, vc := countingService(t)
	cacheFile := filepath.Join(t.TempDir(), "cache.db")
	common := []string{"--base-url", srv.URL, "--rate", "0", "--country", "IE", "--cache", cacheFile,
		"--table", "customers", "--id-col", "customer id", "--out-table", "av", "--review-table", "crm.review"}
	dbExec(t, dbURL, "CREATE SCHEMA crm")

	run := func(extra ...string) runResult {
		t.Helper()
		vc.reset()
		r := runDB(t, t.TempDir(), append(append(common, extra...), dbURL)...)
		wantExit(t, r, exitOK, exitRowErrors)
		for _, s := range []string{r.stderr, r.enriched} {
			if strings.Contains(s, pgtest.Password) {
				t.Fatalf("the password shows: %s", tail(s, 2000))
			}
		}
		return r
	}
	first := run("--journal", "on", "--keep-journal")
	paid := vc.calls.Load()
	if paid < 400 {
		t.Fatalf("first run: %d calls", paid)
	}
	kept, _ := filepath.Glob(filepath.Join(journals, "*.journal"))
	if len(kept) != 1 {
		t.Fatalf("journals kept: %v", kept)
	}
	b, _ := os.ReadFile(kept[0])
	if bytes.Contains(b, []byte(pgtest.Password)) || !bytes.Contains(b, []byte("table customers")) {
		t.Fatalf("the journal shows the password, or not its source: %.300s", b)
	}
	before := avRows(t, dbURL, "av")
	_, reviewBefore := dbRows(t, dbURL, `SELECT * FROM crm.review`)
	_ = first

	// One customer moved.
	dbExec(t, dbURL, `UPDATE customers SET "Address 1" = '1 College Green', "Town" = 'Dublin' WHERE "Customer ID" = 'C01002'`)
	out := filepath.Join(t.TempDir(), "out.csv")
	run("-o", out, "--restart")
	if got := vc.calls.Load(); got != 1 {
		t.Fatalf("second run made %d calls, want 1 (only the changed row)", got)
	}
	after := avRows(t, dbURL, "av")
	if len(after) != n || len(after) != len(before) {
		t.Fatalf("%d rows after the re-run, %d before, want %d: upserts must not duplicate", len(after), len(before), n)
	}
	changed := 0
	for i := range after {
		if !slices.Equal(after[i], before[i]) {
			changed++
			if after[i][0] != "C01002" {
				t.Errorf("row %s changed", after[i][0])
			}
		}
	}
	if changed != 1 {
		t.Errorf("%d rows changed, want 1", changed)
	}
	if b, err := os.ReadFile(out); err != nil || csvRecords(t, string(b)) != n+1 {
		t.Errorf("-o with a table input: %v, %d records", err, csvRecords(t, string(b)))
	}
	_, reviewAfter := dbRows(t, dbURL, `SELECT * FROM crm.review`)
	if len(reviewAfter) > len(reviewBefore) {
		t.Errorf("review rows %d, before %d", len(reviewAfter), len(reviewBefore))
	}

	// Only the rows changed since a date: here, one id.
	_, full := dbRows(t, dbURL, `SELECT * FROM av ORDER BY 1`)
	r := run("--where", `"Customer ID" IN ('C01003', 'C01004')`)
	if got := summaryInt(r, "rows_read"); got != 2 {
		t.Fatalf("--where read %d rows, want 2", got)
	}
	if got := vc.calls.Load(); got != 0 {
		t.Fatalf("--where run made %d calls, want 0 (cached)", got)
	}
	// Their verdicts are the same: the rows are left alone, verified_at
	// included (it is when the verdict they hold was obtained).
	if _, now := dbRows(t, dbURL, `SELECT * FROM av ORDER BY 1`); fmt.Sprint(now) != fmt.Sprint(full) {
		t.Error("the --where run over unchanged verdicts changed the out-table")
	}
	if got := fmt.Sprint(r.summary["tables"]); !strings.Contains(got, "map[deleted:0 inserted:0 table:table av unchanged:2 updated:0]") {
		t.Errorf("summary tables %s, want table av with 2 unchanged and nothing else", got)
	}
}

// TestRunTableKillAndResume kills the real program with SIGKILL while it
// writes to a table, resumes it, and checks the out-table equals an
// uninterrupted run's, without duplicates, and that no more calls were
// repeated than the rows in flight at each kill.
func TestRunTableKillAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the program in subprocesses")
	}
	journals := isolateJournals(t)
	const workers = 8
	dbURL := pgtest.RequireDB(t)
	n := loadSample(t, dbURL, "customers")
	base, calls := loggedService(t)
	common := []string{"--base-url", base, "--rate", "0", "--country", "IE", "--workers", strconv.Itoa(workers), "--retries", "0",
		"--table", "customers", "--id-col", "Customer ID"}

	clean := runDB(t, t.TempDir(), append(common, "--out-table", "av_clean", "--review-table", "rv_clean", dbURL)...)
	wantExit(t, clean, exitRowErrors)
	distinct := len(calls.take())

	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("ADDRCLEAN_KILL_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (ADDRCLEAN_KILL_SEED=%d repeats the kill points)", seed, seed)
	rnd := rand.New(rand.NewPCG(seed, 3))
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte(testKey), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"run", "--log-format", "json", "--no-progress", "--api-key-file", keyFile, "--resume",
		"--out-table", "av", "--review-table", "rv"}, append(common, dbURL)...)
	total := map[string]int{}
	partial := false
	const kills = 2
	for round := 0; round <= kills; round++ {
		cmd := exec.Command(os.Args[0], args...)
		// Batches of 20 rows: a kill finds some committed, some not.
		cmd.Env = append(os.Environ(), childEnv+"=1", batchEnv+"=20")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		killAt := int64(0)
		if round < kills {
			left := int64(distinct) - int64(countAll(total)) + int64(round*workers)
			killAt = left/4 + rnd.Int64N(max(left/2, 1))
		}
		calls.killAt.Store(killAt)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		calls.victim.Store(cmd.Process)
		err := cmd.Wait()
		calls.victim.Store(nil)
		for k, v := range calls.take() {
			total[k] += v
		}
		code := cmd.ProcessState.ExitCode()
		if strings.Contains(stderr.String(), pgtest.Password) {
			t.Fatal("the password shows in the log")
		}
		if round < kills {
			if code != -1 {
				t.Fatalf("round %d: not killed at call %d (exit %d, %v): %s", round, killAt, code, err, tail(stderr.String(), 2000))
			}
			js, _ := filepath.Glob(filepath.Join(journals, "*.journal"))
			_, part := dbRows(t, dbURL, "SELECT count(*) FROM av")
			partial = partial || (part[0][0] != "0" && part[0][0] != strconv.Itoa(n))
			t.Logf("round %d: killed at call %d; journals %v; %s rows in the out-table", round, killAt, js, part[0][0])
			if len(js) != 1 {
				t.Fatalf("round %d: want one journal, got %v", round, js)
			}
			continue
		}
		if code != exitRowErrors {
			t.Fatalf("last round: exit %d\n%s", code, tail(stderr.String(), 3000))
		}
		if !strings.Contains(messages(stderr.String()), "--resume: the journal holds") {
			t.Errorf("the last run did not resume from the journal:\n%s", tail(messages(stderr.String()), 2000))
		}
	}
	if !partial {
		t.Error("no kill left a partly written out-table")
	}
	got, want := avRows(t, dbURL, "av"), avRows(t, dbURL, "av_clean")
	if len(got) != n || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the out-table of the killed and resumed run (%d rows) differs from an uninterrupted run's (%d rows)", len(got), len(want))
	}
	if fmt.Sprint(avRows(t, dbURL, "rv")) != fmt.Sprint(avRows(t, dbURL, "rv_clean")) {
		t.Fatal("the review table of the killed and resumed run differs from an uninterrupted run's")
	}
	if js, _ := filepath.Glob(filepath.Join(journals, "*.journal")); len(js) != 0 {
		t.Errorf("journal left after the finished run: %v", js)
	}
	repeated := 0
	for _, c := range total {
		repeated += c - 1
	}
	if repeated > kills*workers {
		t.Fatalf("%d calls repeated over %d kills with %d workers", repeated, kills, workers)
	}
}

// TestRunTableErrors: connection problems are exit 1 without the password;
// what the user must fix in the flags (a missing table or column, a bad
// query, contradicting flags) is exit 2 naming it.
func TestRunTableErrors(t *testing.T) {
	isolateJournals(t)
	dbURL := pgtest.RequireDB(t)
	loadSample(t, dbURL, "customers")
	wrong := strings.Replace(dbURL, pgtest.Password, "Wr0ngPassw0rd", 1)
	noServer := strings.Replace(dbURL, "host=/", "host=/nonexistent/", 1)
	base := []string{"--country", "IE", "--out-table", "av"}
	for _, c := range []struct {
		name   string
		args   []string
		env    map[string]string
		code   int
		want   string
		secret string
	}{
		{name: "wrong password", args: []string{"--table", "customers", "--id-col", "Customer ID", wrong},
			code: exitFatal, want: "password authentication failed", secret: "Wr0ngPassw0rd"},
		{name: "wrong PGPASSWORD", args: []string{"--table", "customers", "--id-col", "Customer ID",
			strings.Replace(dbURL, ":"+pgtest.Password, "", 1)},
			env: map[string]string{"PGPASSWORD": "EnvPassw0rd"}, code: exitFatal, want: "password authentication failed", secret: "EnvPassw0rd"},
		{name: "no server", args: []string{"--table", "customers", "--id-col", "Customer ID", noServer},
			code: exitFatal, want: "connecting to postgres://app@/", secret: pgtest.Password},
		{name: "malformed URL", args: []string{"--table", "customers", "--id-col", "Customer ID", "postgres://app:S3cretPw@db:port/crm"},
			code: exitFatal, want: "bad database URL", secret: "S3cretPw"},
		{name: "missing sqlite file", args: []string{"--table", "customers", "--id-col", "Customer ID", "sqlite:" + filepath.Join(t.TempDir(), "none.db")},
			code: exitFatal, want: "no such database file"},
		{name: "missing table", args: []string{"--table", "clients", "--id-col", "Customer ID", dbURL},
			code: exitUsage, want: "no such table: clients", secret: pgtest.Password},
		{name: "table in another case", args: []string{"--table", "Customers", "--id-col", "Customer ID", dbURL},
			code: exitUsage, want: "did you mean public.customers", secret: pgtest.Password},
		{name: "missing id column", args: []string{"--table", "customers", "--id-col", "cust_no", dbURL},
			code: exitUsage, want: "cust_no"},
		{name: "query with a missing column", args: []string{"--query", `SELECT "Customer ID", nope FROM customers`, "--id-col", "Customer ID", dbURL},
			code: exitUsage, want: "nope"},
		{name: "query without the id", args: []string{"--query", `SELECT "Address 1" FROM customers`, "--id-col", "Customer ID", dbURL},
			code: exitUsage, want: "Customer ID"},
		{name: "bad where", args: []string{"--table", "customers", "--where", "Town = ", "--id-col", "Customer ID", dbURL},
			code: exitUsage, want: "syntax error"},
		{name: "no table or query", args: []string{"--id-col", "Customer ID", dbURL}, code: exitUsage, want: "--table NAME or --query"},
		{name: "table and query", args: []string{"--table", "customers", "--query", "SELECT 1", "--id-col", "Customer ID", dbURL},
			code: exitUsage, want: "one of them"},
		{name: "no id column", args: []string{"--table", "customers", dbURL}, code: exitUsage, want: "--id-col"},
		{name: "where with query", args: []string{"--query", "SELECT 1", "--where", "true", "--id-col", "x", dbURL},
			code: exitUsage, want: "--where goes with --table"},
		{name: "output is the input", args: []string{"--table", "customers", "--id-col", "Customer ID", "--review-table", "customers", dbURL},
			code: exitUsage, want: "input tables are never written"},
		{name: "table flag with a file", args: []string{"--table", "customers", sampleCSV(t)}, code: exitUsage, want: "INPUT must then be a DBURL"},
		{name: "out-table with a file and no out-db", args: []string{sampleCSV(t)}, code: exitUsage, want: "need --out-db"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			r := runDB(t, t.TempDir(), append(slices.Clone(base), c.args...)...)
			if r.code != c.code || !strings.Contains(messages(r.stderr), c.want) {
				t.Fatalf("exit %d, want %d with %q:\n%s", r.code, c.code, c.want, tail(messages(r.stderr), 2000))
			}
			if c.secret != "" && strings.Contains(r.stderr+r.stdout, c.secret) {
				t.Fatalf("the password shows:\n%s", r.stderr)
			}
		})
	}
}

// TestRunTableDryRun maps and counts a table's rows without a call, and a
// file can be written into a table of --out-db.
func TestRunTableDryRun(t *testing.T) {
	isolateJournals(t)
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "crm.db")
	n := loadSample(t, dbURL, "customers")
	r := runDB(t, t.TempDir(), "--dry-run", "--country", "IE", "--table", "customers", "--id-col", "Customer ID",
		"--out-table", "av", dbURL)
	wantExit(t, r, exitOK)
	for _, want := range []string{fmt.Sprintf("data rows:   %d", n), `id:            "Customer ID"`, "input:       sqlite:"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("dry run: no %q in\n%s", want, r.stdout)
		}
	}
	if _, err := tabletest.Open(t, dbURL, true).Columns(context.Background(), table.Name{Table: "av"}); !errors.Is(err, table.ErrNoTable) {
		t.Fatalf("the dry run created the out-table: %v", err)
	}

	// A table to stdout, journalled: the journal goes with the source.
	r = runDB(t, t.TempDir(), "--country", "IE", "--table", "customers", "--id-col", "Customer ID", "-o", "-",
		"--journal", "on", dbURL)
	wantExit(t, r, exitRowErrors)
	if got := csvRecords(t, r.stdout); got != n+1 {
		t.Fatalf("-o - has %d records", got)
	}

	// A CSV file into a table of another database.
	outDB := "sqlite:" + filepath.Join(t.TempDir(), "results.db")
	dir := t.TempDir()
	r = runCLI(t, dir, "--country", "IE", "--id-col", "Customer ID", "--out-db", outDB, "--out-table", "av", sampleCSV(t))
	wantExit(t, r, exitRowErrors)
	if _, rows := dbRows(t, outDB, "SELECT count(*) FROM av"); rows[0][0] != strconv.Itoa(n) {
		t.Fatalf("%s rows in the out-table, want %d", rows[0][0], n)
	}
	if got := csvRecords(t, r.enriched); got != n+1 {
		t.Fatalf("the file output has %d records", got)
	}
}
