package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/internal/pgtest"
)

// TestRunRefusedLeavesDatabase: a run refused by a check that comes after
// the output tables' checks (an unknown --method, a live run with no key,
// --resume over the journal of another input, a missing --reference)
// leaves the database exactly as it was, in PostgreSQL and SQLite, for the
// spellings users type: no table, no runs table, no schema object created.
// The catalogue (every relation of every schema with its columns, the
// schemas themselves; sqlite_schema) is compared before and after.
func TestRunRefusedLeavesDatabase(t *testing.T) {
	isolateJournals(t)
	t.Setenv("ADDRCLEAN_API_KEY", "")
	srv := newTestService(t, nil)
	for _, kind := range []string{"postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			dbURL, spellings := refusalDB(t, kind)
			for _, sp := range spellings {
				t.Run(sp.name, func(t *testing.T) {
					testRefusalsLeaveDatabase(t, srv.URL, dbURL, sp)
				})
			}
		})
	}
}

// spelling is an input and its output tables as a user spells them, and
// the same input's sibling (another input for the same output tables).
type spelling struct {
	name           string
	input, another []string
	outputs        []string // the output tables' args
	created        []string // the relations a run creates, to drop
}

// refusalDB makes a database holding the sample export (PostgreSQL: as
// crm.customers, and its copy crm.others; SQLite: customers and others)
// and a schema "Crm Out" (PostgreSQL), and the spellings to try on it.
func refusalDB(t *testing.T, kind string) (string, []spelling) {
	t.Helper()
	if kind == "sqlite" {
		dbURL := "sqlite:" + filepath.Join(t.TempDir(), "crm.db")
		// In a subtest, so that its connections are closed when it ends:
		// dropCreated then sets the journal mode back.
		t.Run("load", func(t *testing.T) {
			loadSample(t, dbURL, "customers")
			dbExec(t, dbURL, `CREATE TABLE others AS SELECT * FROM customers`)
		})
		return dbURL, []spelling{
			{"schema-qualified", []string{"--table", "main.customers"}, []string{"--table", "main.others"},
				[]string{"--out-table", "main.customers_av"}, []string{"main.customers_av", "main.customers_av_runs"}},
			{"quoted mixed case", []string{"--table", `"customers"`}, []string{"--table", `"others"`},
				[]string{"--out-table", `main."Av Set"`, "--review-table", `"Av Review"`},
				[]string{`main."Av Set"`, `main."Av Set_runs"`, `main."Av Review"`}},
			{"query", []string{"--query", `SELECT * FROM main.customers WHERE "Town" <> ''`}, []string{"--query", `SELECT * FROM others`},
				[]string{"--out-table", "customers_av"}, []string{"customers_av", "customers_av_runs"}},
		}
	}
	dbURL := pgtest.RequireDB(t)
	loadSample(t, dbURL, "customers")
	dbExec(t, dbURL, `CREATE SCHEMA crm`, `ALTER TABLE customers SET SCHEMA crm`,
		`CREATE TABLE crm.others AS SELECT * FROM crm.customers`, `CREATE SCHEMA "Crm Out"`)
	return dbURL, []spelling{
		{"schema-qualified", []string{"--table", "crm.customers"}, []string{"--table", "crm.others"},
			[]string{"--out-table", "crm.customers_av"}, []string{"crm.customers_av", "crm.customers_av_runs"}},
		{"quoted mixed case", []string{"--table", `"crm"."customers"`}, []string{"--table", `"crm"."others"`},
			[]string{"--out-table", `"Crm Out"."Av Set"`, "--review-table", `"Crm Out"."Av Review"`},
			[]string{`"Crm Out"."Av Set"`, `"Crm Out"."Av Set_runs"`, `"Crm Out"."Av Review"`}},
		{"query", []string{"--query", `SELECT * FROM crm.customers WHERE "Town" <> ''`}, []string{"--query", `SELECT * FROM crm.others`},
			[]string{"--out-table", "crm.customers_av"}, []string{"crm.customers_av", "crm.customers_av_runs"}},
	}
}

// testRefusalsLeaveDatabase runs each refusal for spelling sp against the
// database at dbURL and wants its catalogue unchanged.
func testRefusalsLeaveDatabase(t *testing.T, base, dbURL string, sp spelling) {
	id := []string{"--id-col", "Customer ID", "--country", "IE", "--limit", "5"}
	args := func(parts ...[]string) []string {
		var all []string
		for _, p := range append([][]string{id}, parts...) {
			all = append(all, p...)
		}
		return append(all, dbURL)
	}
	live := []string{"--base-url", base, "--retries", "0"}
	for _, c := range []struct {
		name   string
		args   []string
		noKey  bool
		before func(t *testing.T) // sets the stage, not compared
		code   int
		want   string
	}{
		{name: "unknown --method", args: args(live, []string{"--method", "PATCH"}, sp.input, sp.outputs),
			code: exitUsage, want: `--method "PATCH"`},
		{name: "live run with no key", args: args(live, sp.input, sp.outputs), noKey: true,
			code: exitUsage, want: "--base-url needs an API key"},
		{name: "--resume over the journal of another input",
			before: func(t *testing.T) {
				// A finished run over the other input keeps its journal for
				// the same output tables; its tables are dropped again.
				r := runDB(t, t.TempDir(), args([]string{"--journal", "on", "--keep-journal"}, sp.another, sp.outputs)...)
				if r.code != exitOK && r.code != exitRowErrors {
					t.Fatalf("the first run: exit %d\n%s", r.code, tail(r.stderr, 1500))
				}
				dropCreated(t, dbURL, sp.created)
			},
			args: args([]string{"--journal", "on", "--resume"}, sp.input, sp.outputs), code: exitUsage, want: "was written for a different run"},
		{name: "missing --reference", args: args([]string{"--reference", filepath.Join(t.TempDir(), "missing.csv")}, sp.input, sp.outputs),
			code: exitFatal, want: "missing.csv"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Each case starts from the same database, whatever the last
			// one left.
			dropCreated(t, dbURL, sp.created)
			if c.before != nil {
				c.before(t)
			}
			before := refusalCatalogue(t, dbURL)
			var r runResult
			if c.noKey {
				r = runNoKey(c.args...)
			} else {
				r = runDB(t, t.TempDir(), c.args...)
			}
			if msg := messages(r.stderr); r.code != c.code || !strings.Contains(msg, c.want) {
				t.Fatalf("exit %d, want %d naming %q:\n%s", r.code, c.code, c.want, tail(msg, 1500))
			}
			if d := catalogueDiff(before, refusalCatalogue(t, dbURL)); len(d) > 0 {
				t.Errorf("the refused run changed the database:\n%s", strings.Join(d, "\n"))
			}
		})
	}
}

// refusalCatalogue is the database's catalogue, one line an object, and a
// digest of the input's rows: for PostgreSQL its schemas, the count of its
// types and every relation (tables, indexes, sequences, views) with its
// columns and types, outside the temporary schemas (an earlier run's
// session may still be dropping its staging tables); for SQLite its
// journal mode and sqlite_schema.
func refusalCatalogue(t *testing.T, dbURL string) []string {
	t.Helper()
	in := "main.customers"
	var lines []string
	if !strings.HasPrefix(dbURL, "sqlite:") {
		in = "crm.customers"
		_, schemas := dbRows(t, dbURL, `SELECT 'schema ' || nspname FROM pg_namespace
			WHERE nspname NOT LIKE 'pg_temp%' AND nspname NOT LIKE 'pg_toast_temp%' ORDER BY 1`)
		_, types := dbRows(t, dbURL, `SELECT 'types ' || count(*) FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
			WHERE n.nspname NOT LIKE 'pg_temp%' AND n.nspname NOT LIKE 'pg_toast_temp%'`)
		for _, r := range append(schemas, types...) {
			lines = append(lines, r[0])
		}
	}
	if path, ok := strings.CutPrefix(dbURL, "sqlite:"); ok {
		// The tool's readers refuse pragmas: a connection of the test's.
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		var mode string
		err = db.QueryRow("PRAGMA journal_mode").Scan(&mode)
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, "journal_mode "+mode)
	}
	_, rels := dbRows(t, dbURL, catalogQuery(dbURL))
	for _, r := range rels {
		lines = append(lines, r[0])
	}
	_, rows := dbRows(t, dbURL, "SELECT * FROM "+in+" ORDER BY 1")
	return append(lines, fmt.Sprintf("input rows %x", sha256.Sum256([]byte(fmt.Sprint(rows)))))
}

// catalogueDiff is what after has that before has not (+), and the
// reverse (-).
func catalogueDiff(before, after []string) []string {
	var d []string
	for _, l := range after {
		if !slices.Contains(before, l) {
			d = append(d, "+ "+l)
		}
	}
	for _, l := range before {
		if !slices.Contains(after, l) {
			d = append(d, "- "+l)
		}
	}
	return d
}

// dropCreated drops the tables a run created (SQL names), so that each
// case starts from the same database. An SQLite database is put back in
// the journal mode most tools leave (DELETE), so that a refused run that
// switched it to WAL would be seen; this takes the only connection to the
// file, so it goes through a connection of its own.
func dropCreated(t *testing.T, dbURL string, names []string) {
	t.Helper()
	var stmts []string
	for _, n := range names {
		stmts = append(stmts, "DROP TABLE IF EXISTS "+n)
	}
	if !strings.HasPrefix(dbURL, "sqlite:") {
		dbExec(t, dbURL, stmts...)
		return
	}
	db, err := sql.Open("sqlite", strings.TrimPrefix(dbURL, "sqlite:"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range append(stmts, "PRAGMA journal_mode=DELETE") {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// runNoKey runs 'addrclean run' in-process with no key given: neither
// --api-key-file nor ADDRCLEAN_API_KEY (which the caller clears).
func runNoKey(args ...string) runResult {
	full := append([]string{"run", "--log-format", "json", "--no-progress"}, args...)
	var stdout, stderr bytes.Buffer
	code := runMain(context.Background(), full, streams{in: strings.NewReader(""), out: &stdout, err: &stderr})
	return runResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// TestRunRefusedCreatesNoDatabaseFile: a refused run whose --out-db is an
// SQLite file still to create leaves no file (nor -wal, -shm) behind,
// whether the output tables' checks refuse it or a later check does; the
// run that is not refused creates it.
func TestRunRefusedCreatesNoDatabaseFile(t *testing.T) {
	isolateJournals(t)
	srv := newTestService(t, nil)
	in := sampleCSV(t)
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"schema not attached", []string{"--out-table", "other.av"}, exitUsage, "has no database other"},
		{"unknown --method", []string{"--base-url", srv.URL, "--method", "PATCH", "--out-table", "av"}, exitUsage, `--method "PATCH"`},
		{"missing --reference", []string{"--reference", filepath.Join(t.TempDir(), "missing.csv"), "--out-table", `"Av Set"`}, exitFatal, "missing.csv"},
		{"not refused", []string{"--out-table", `main."Av Set"`}, exitOK, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "new.db")
			args := append([]string{"--id-col", "Customer ID", "--country", "IE", "--limit", "5", "-o", filepath.Join(dir, "out.csv"),
				"--review", filepath.Join(dir, "review.csv"), "--out-db", "sqlite:" + db}, c.args...)
			r := runDB(t, dir, append(args, in)...)
			if r.code == exitRowErrors && c.code == exitOK {
				r.code = exitOK
			}
			if msg := messages(r.stderr); r.code != c.code || !strings.Contains(msg, c.want) {
				t.Fatalf("exit %d, want %d naming %q:\n%s", r.code, c.code, c.want, tail(msg, 1500))
			}
			made, _ := filepath.Glob(db + "*")
			if c.code == exitOK {
				if len(made) == 0 {
					t.Fatal("the run did not create its --out-db")
				}
				return
			}
			if len(made) > 0 {
				t.Errorf("the refused run created %q", made)
			}
		})
	}
}

// TestApplyRefusedCreatesNoFinalTable: apply --final-table with a -o that
// cannot be written (its directory is missing) stops (exit 2) before the
// final table is created: the database's catalogue is as it was.
func TestApplyRefusedCreatesNoFinalTable(t *testing.T) {
	isolateJournals(t)
	for name, newDB := range applyDBs(t) {
		t.Run(name, func(t *testing.T) {
			dbURL := nightlyRun(t, newDB)
			_, before := dbRows(t, dbURL, catalogQuery(dbURL))
			out := filepath.Join(t.TempDir(), "missing", "final.csv")
			code, _, stderr := cli("apply", dbURL, "--table", "customers", "--id-col", "Customer ID", "--country", "IE",
				"--out-table", "av", "--review-table", "rv", "--final-table", `"Final Set"`, "-o", out)
			if code != exitUsage || !strings.Contains(stderr, out) {
				t.Fatalf("exit %d, want 2 naming %s:\n%s", code, out, tail(stderr, 1500))
			}
			_, after := dbRows(t, dbURL, catalogQuery(dbURL))
			if fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("the refused apply changed the database:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// TestApplyMissingSQLiteCreatesNoFile: apply --final-table over an SQLite
// path that names no file is refused as apply -o refuses it (exit 1, "no
// such database file"), and leaves no empty database (nor -wal, -shm)
// behind.
func TestApplyMissingSQLiteCreatesNoFile(t *testing.T) {
	isolateJournals(t)
	db := filepath.Join(t.TempDir(), "typo.db")
	code, _, stderr := cli("apply", "sqlite:"+db, "--table", "customers", "--id-col", "Customer ID", "--country", "IE",
		"--out-table", "av", "--review-table", "rv", "--final-table", "final")
	if code != exitFatal || !strings.Contains(stderr, "no such database file") {
		t.Fatalf("exit %d, want 1 saying no such database file:\n%s", code, tail(stderr, 1500))
	}
	if made, _ := filepath.Glob(db + "*"); len(made) > 0 {
		t.Errorf("the refused apply created %q", made)
	}
}
