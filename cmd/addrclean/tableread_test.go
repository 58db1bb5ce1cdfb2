package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/addrclean/addrclean/internal/pgtest"
	"github.com/addrclean/addrclean/service/servicetest"
	"github.com/addrclean/addrclean/table"
	"github.com/addrclean/addrclean/table/postgres"
	"github.com/addrclean/addrclean/table/tabletest"
)

// smallPages makes the run read tables in pages of n rows, and retry a
// lost connection quickly, for the test.
func smallPages(t *testing.T, n int, retry table.Retry) {
	t.Helper()
	tablePageRows, tableRetry = n, retry
	t.Cleanup(func() { tablePageRows, tableRetry = 0, table.Retry{} })
}

// TestRunTableReadOnlyInput: every text of item 6 of issue 20, as --where
// and as --query, with and without --dry-run, in PostgreSQL and SQLite,
// fails without changing anything: the canary table stays, no file is
// attached or vacuumed into.
func TestRunTableReadOnlyInput(t *testing.T) {
	isolateJournals(t)
	for _, kind := range []string{"postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			dbURL := "sqlite:" + filepath.Join(t.TempDir(), "crm.db")
			if kind == "postgres" {
				dbURL = pgtest.RequireDB(t)
			}
			loadSample(t, dbURL, "customers")
			dbExec(t, dbURL, "CREATE TABLE canary (id integer)", "INSERT INTO canary VALUES (1)")
			dir := t.TempDir()
			wheres, queries := tabletest.Attacks(dir)
			var runs [][]string
			for _, w := range wheres {
				runs = append(runs, []string{"--table", "customers", "--where", w})
			}
			for _, q := range queries {
				runs = append(runs, []string{"--query", q})
			}
			for _, args := range runs {
				for _, dry := range []bool{false, true} {
					all := append([]string{"--country", "IE", "--id-col", "Customer ID", "--out-table", "av"}, args...)
					if dry {
						all = append(all, "--dry-run")
					}
					r := runDB(t, t.TempDir(), append(all, dbURL)...)
					what := fmt.Sprintf("%q (dry run %v)", args, dry)
					if r.code == exitOK || r.code == exitRowErrors {
						t.Errorf("%s: exit %d", what, r.code)
					}
					if _, rows := dbRows(t, dbURL, "SELECT count(*) FROM canary"); rows[0][0] != "1" {
						t.Fatalf("%s: the canary table lost its row", what)
					}
					for _, f := range []string{"evil.db", "copy.db"} {
						if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
							t.Fatalf("%s: %s was written", what, f)
						}
					}
				}
			}
		})
	}
}

// hookedService is the real service handler; at[n], when set, is called
// before the n-th verify request is served: the hook sees the database
// while the run is under way.
func hookedService(t *testing.T, at map[int64]func()) string {
	t.Helper()
	srv := newTestService(t, func(next http.Handler) http.Handler {
		f := servicetest.Wrap(next)
		f.Plan = func(c servicetest.Call) servicetest.Fault {
			if hook := at[c.N]; hook != nil {
				hook()
			}
			return servicetest.Fault{}
		}
		return f
	})
	return srv.URL
}

// pgConn is a connection of the test's own to dbURL.
func pgConn(t *testing.T, dbURL string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// TestRunTableShortTransactions: while a run over a table or a query is
// verifying rows, no session of the reader is idle in a transaction, so a
// server with idle_in_transaction_session_timeout = 1s kills none and the
// run finishes; an ALTER TABLE on the customer table does not wait for the
// run: the service blocks the call until the ALTER is done (on main it
// waited until the timeout killed the reader, and the run then failed).
func TestRunTableShortTransactions(t *testing.T) {
	isolateJournals(t)
	dbURL := pgtest.RequireDB(t)
	n := loadSample(t, dbURL, "customers")
	// 2,500 rows: main's reader went back to the server for rows after the
	// first 2,000, where the timeout had ended its transaction.
	cols, _ := dbRows(t, dbURL, "SELECT * FROM customers LIMIT 0")
	var others []string
	for _, c := range cols[1:] {
		others = append(others, quoteIdent(c))
	}
	for copyN := 2; copyN <= 5; copyN++ {
		dbExec(t, dbURL, fmt.Sprintf(`INSERT INTO customers SELECT "Customer ID" || '-%d', %s FROM customers WHERE "Customer ID" NOT LIKE '%%-%%'`,
			copyN, strings.Join(others, ", ")))
	}
	n *= 5
	smallPages(t, 50, table.Retry{})
	admin := pgConn(t, dbURL)
	ctx := context.Background()
	if _, err := admin.Exec(ctx, "SELECT set_config('lock_timeout', '5s', false)"); err != nil {
		t.Fatal(err)
	}
	var db string
	if err := admin.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s SET idle_in_transaction_session_timeout = '1s'", quoteIdent(db))); err != nil {
		t.Fatal(err)
	}
	for i, input := range [][]string{
		{"--table", "customers"},
		{"--query", `SELECT * FROM customers WHERE "Customer ID" <> ''`},
	} {
		var mu sync.Mutex
		var problems []string
		check := func(when string) {
			mu.Lock()
			defer mu.Unlock()
			var idle int
			if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
				AND application_name LIKE 'addrclean%' AND state LIKE 'idle in transaction%'`).Scan(&idle); err != nil {
				problems = append(problems, err.Error())
			}
			if idle > 0 {
				problems = append(problems, fmt.Sprintf("%s: %d sessions of the run idle in a transaction", when, idle))
			}
			col := fmt.Sprintf("note_%d_%s", i, strings.ReplaceAll(when, " ", "_"))
			if _, err := admin.Exec(ctx, fmt.Sprintf("ALTER TABLE customers ADD COLUMN %s text", col)); err != nil {
				problems = append(problems, fmt.Sprintf("%s: ALTER TABLE customers during the run: %v", when, err))
			}
		}
		base := hookedService(t, map[int64]func(){1: func() { check("first call") }, 120: func() { check("call 120") }})
		r := runDB(t, t.TempDir(), append(append([]string{"--base-url", base, "--rate", "0", "--workers", "1", "--country", "IE",
			"--id-col", "Customer ID", "--out-table", fmt.Sprintf("av_%d", i)}, input...), dbURL)...)
		wantExit(t, r, exitRowErrors)
		mu.Lock()
		if len(problems) > 0 {
			t.Fatalf("%s: %s", input[0], strings.Join(problems, "; "))
		}
		mu.Unlock()
		if _, rows := dbRows(t, dbURL, fmt.Sprintf("SELECT count(*) FROM av_%d", i)); rows[0][0] != strconv.Itoa(n) {
			t.Fatalf("%s: %s rows in the out-table, want %d", input[0], rows[0][0], n)
		}
	}
}

// terminateReader ends the backends that read the run's input, as an
// administrator or a failover would.
func terminateReader(t *testing.T, admin *pgx.Conn, db string) int {
	var n int
	err := admin.QueryRow(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = $2 AND application_name = $1`, postgres.ReaderName, db).Scan(&n)
	if err != nil {
		t.Error(err)
	}
	return n
}

// TestRunTableReconnect: the reader's backend terminated mid-run is
// reconnected to, and reading goes on after the last id: every row once.
// When the database accepts no connection, the run ends with exit 1 after
// the retries, saying to run again with --resume, which then finishes.
func TestRunTableReconnect(t *testing.T) {
	isolateJournals(t)
	dbURL := pgtest.RequireDB(t)
	n := loadSample(t, dbURL, "customers")
	smallPages(t, 50, table.Retry{Attempts: 2, Wait: time.Millisecond})
	ctx := context.Background()
	var db string
	if err := pgConn(t, dbURL).QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	// Connections to the run's database may be refused: the test's own is
	// to another one.
	admin := pgConn(t, strings.Replace(dbURL, "/"+db+"?", "/postgres?", 1))
	common := []string{"--rate", "0", "--workers", "1", "--country", "IE", "--table", "customers", "--id-col", "Customer ID"}

	var killed atomic.Int64
	base := hookedService(t, map[int64]func(){100: func() { killed.Add(int64(terminateReader(t, admin, db))) }})
	r := runDB(t, t.TempDir(), append(append([]string{"--base-url", base, "--out-table", "av"}, common...), dbURL)...)
	wantExit(t, r, exitRowErrors)
	if killed.Load() == 0 {
		t.Fatal("no reader's backend to terminate")
	}
	if !strings.Contains(messages(r.stderr), "connecting again to read the rows after id") {
		t.Errorf("no log of the reconnection:\n%s", tail(messages(r.stderr), 2000))
	}
	if _, rows := dbRows(t, dbURL, `SELECT count(*), count(DISTINCT "Customer ID") FROM av`); rows[0][0] != strconv.Itoa(n) || rows[0][1] != rows[0][0] {
		t.Fatalf("%v rows in the out-table, want %d", rows[0], n)
	}

	allow := func(on bool) {
		if _, err := admin.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s ALLOW_CONNECTIONS %v", quoteIdent(db), on)); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { allow(true) })
	base = hookedService(t, map[int64]func(){100: func() {
		allow(false)
		terminateReader(t, admin, db)
	}})
	args := append(append([]string{"--base-url", base, "--out-table", "av2"}, common...), dbURL)
	r = runDB(t, t.TempDir(), args...)
	wantExit(t, r, exitFatal)
	msg := messages(r.stderr)
	for _, want := range []string{"lost", "tried again 2 times", "--resume"} {
		if !strings.Contains(msg, want) {
			t.Errorf("no %q in the message:\n%s", want, tail(msg, 2000))
		}
	}
	if strings.Contains(r.stderr, pgtest.Password) {
		t.Fatal("the password shows")
	}
	allow(true)
	r = runDB(t, t.TempDir(), append([]string{"--resume"}, args...)...)
	wantExit(t, r, exitRowErrors)
	if !strings.Contains(messages(r.stderr), "--resume: the journal holds") {
		t.Errorf("the run did not resume:\n%s", tail(messages(r.stderr), 2000))
	}
	if got, want := avRows(t, dbURL, "av2"), avRows(t, dbURL, "av"); len(got) != n || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the resumed out-table (%d rows) differs from the uninterrupted one (%d)", len(got), len(want))
	}
}

// TestRunTableInterrupted: a run stopped (Ctrl-C) while it reads the
// database exits 130, whatever the driver made of the cancellation.
func TestRunTableInterrupted(t *testing.T) {
	isolateJournals(t)
	sqliteURL := "sqlite:" + filepath.Join(t.TempDir(), "crm.db")
	loadSample(t, sqliteURL, "customers")
	pgURL := pgtest.RequireDB(t)
	loadSample(t, pgURL, "customers")
	for _, dbURL := range []string{pgURL, sqliteURL} {
		for _, input := range [][]string{{"--table", "customers"}, {"--query", "SELECT * FROM customers"}} {
			for _, dry := range []bool{false, true} {
				args := append([]string{"--country", "IE", "--id-col", "Customer ID", "--out-table", "av"}, input...)
				if dry {
					args = append(args, "--dry-run")
				}
				ctx, cancel := context.WithCancel(context.Background())
				cancel() // Ctrl-C before the input is read
				r := runDBContext(t, ctx, t.TempDir(), append(args, dbURL)...)
				if r.code != exitInterrupted {
					t.Errorf("%s %q dry %v: exit %d, want %d:\n%s", dbURL[:6], input, dry, r.code, exitInterrupted, tail(messages(r.stderr), 1000))
				}
			}
		}
	}
}

// runDBContext is runDB with the run's context.
func runDBContext(t *testing.T, ctx context.Context, dir string, args ...string) runResult {
	t.Helper()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	full := append([]string{"run", "--log-format", "json", "--no-progress", "--api-key-file", keyFile}, args...)
	var stdout, stderr bytes.Buffer
	code := runMain(ctx, full, streams{in: strings.NewReader(""), out: &stdout, err: &stderr})
	return runResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// TestRunTableNUL: a NUL byte in a cell of an SQLite input is removed when
// the row is read, with a warning naming the row's id and column, so that
// the PostgreSQL tables the run writes take every row; a NUL in the id is
// refused, naming the row. Rows not verified are logged with their id.
func TestRunTableNUL(t *testing.T) {
	isolateJournals(t)
	src := "sqlite:" + filepath.Join(t.TempDir(), "crm.db")
	n := loadSample(t, src, "customers")
	outDB := pgtest.RequireDB(t)
	_, rows := dbRows(t, src, `SELECT "Customer ID" FROM customers ORDER BY "Customer ID" LIMIT 1`)
	id := rows[0][0]
	dbExec(t, src, fmt.Sprintf(`UPDATE customers SET "Address 1" = 'Flat 1' || char(0) || "Address 1", Town = Town || char(0) WHERE "Customer ID" = '%s'`, id))
	r := runDB(t, t.TempDir(), "--country", "IE", "--table", "customers", "--id-col", "Customer ID",
		"--out-db", outDB, "--out-table", "av", "--review-table", "rv", src)
	wantExit(t, r, exitRowErrors)
	msg := messages(r.stderr)
	if !strings.Contains(r.stderr, `"id":"`+id+`"`) || !strings.Contains(r.stderr, `"column":"Town"`) || !strings.Contains(msg, "NUL") {
		t.Errorf("no warning naming id %s and its column:\n%s", id, tail(r.stderr, 3000))
	}
	if _, rows := dbRows(t, outDB, "SELECT count(*) FROM av"); rows[0][0] != strconv.Itoa(n) {
		t.Fatalf("%s rows in the out-table, want %d", rows[0][0], n)
	}
	const noIndex = "no unique index on its id"
	if !strings.Contains(msg, noIndex) {
		t.Errorf("no warning that the id has no index:\n%s", tail(msg, 2000))
	}
	// Log lines of a table run name rows by their id too.
	_, noAddr := dbRows(t, src, `SELECT "Customer ID" FROM customers WHERE "Address 1" = '' AND "Address 2" = '' AND Town = ''`)
	named := 0
	for _, line := range strings.Split(r.stderr, "\n") {
		if strings.Contains(line, "row not verified") {
			if len(noAddr) != 1 || !strings.Contains(line, `"id":"`+noAddr[0][0]+`"`) {
				t.Errorf("a row not verified is not named by its id %v: %s", noAddr, line)
			}
			named++
		}
	}
	if named != 1 {
		t.Errorf("%d lines of rows not verified, want 1", named)
	}

	dbExec(t, src, fmt.Sprintf(`UPDATE customers SET "Customer ID" = "Customer ID" || char(0) WHERE "Customer ID" = '%s'`, id),
		`CREATE UNIQUE INDEX customers_id ON customers ("Customer ID")`)
	r = runDB(t, t.TempDir(), "--country", "IE", "--table", "customers", "--id-col", "Customer ID",
		"--out-db", outDB, "--out-table", "av_nul", src)
	wantExit(t, r, exitFatal)
	msg = messages(r.stderr)
	if !strings.Contains(msg, "row 1") || !strings.Contains(msg, "NUL") || !strings.Contains(msg, id) {
		t.Errorf("the refusal does not name the row:\n%s", tail(msg, 2000))
	}
	if strings.Contains(msg, noIndex) {
		t.Errorf("a warning that the id has no index, with one:\n%s", tail(msg, 2000))
	}
}
