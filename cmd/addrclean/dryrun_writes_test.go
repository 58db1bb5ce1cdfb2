package main

import (
	"database/sql"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/internal/pgtest"
	"github.com/addrclean/addrclean/internal/sqlitefile/filetest"
)

// estimateOf runs the dry run of args and returns its estimate.
func estimateOf(t *testing.T, args []string) map[string]any {
	t.Helper()
	code, stderr, sum := runSummary(t, t.Context(), t.TempDir(), append([]string{"--dry-run"}, args...)...)
	e, _ := sum["estimate"].(map[string]any)
	if code != exitOK || e == nil {
		t.Fatalf("dry run: exit %d, %v:\n%s", code, e, tail(messages(stderr), 1000))
	}
	return e
}

// TestRunDryRunWritesNothing: a dry run reads the cache and writes nothing
// to it (docs/estimate.md): a cache file keeps its bytes, and its WAL, to
// the last one — a namespace's label edited by hand stays as it is, and
// the namespace of another service is not added, a file switched out of
// WAL mode by hand keeps its journal mode; a PostgreSQL cache, in a
// schema named by search_path and lacking cache_claims, gains no row and
// no table; nor does either from a run refused after its first look. The estimate stays the run's: a namespace that is not there
// answers nothing, and the run then pays every request.
func TestRunDryRunWritesNothing(t *testing.T) {
	svc := &billed{}
	base := newTestService(t, func(h http.Handler) http.Handler { svc.next = h; return svc }).URL
	other := newTestService(t, nil).URL // another service: another namespace
	pgURL := pgtest.RequireDB(t)
	dbExec(t, pgURL, "CREATE SCHEMA dry_cache")
	for _, tc := range []struct {
		name string
		// spec is the --cache of dir; damage changes it by hand after the
		// first run; state is what must not change.
		spec   func(dir string) string
		damage func(t *testing.T, spec string)
		state  func(t *testing.T, spec string) string
	}{
		{"sqlite file",
			func(dir string) string { return filepath.Join(dir, "answers.cache") },
			func(t *testing.T, spec string) {
				filetest.Exec(t, spec, "UPDATE cache_namespaces SET label = 'x'")
			},
			sqliteState},
		// Switched to a rollback journal by hand (sqlite3): a look must not
		// set WAL mode again, nor leave a -wal file beside it.
		{"sqlite file out of WAL mode",
			func(dir string) string { return filepath.Join(dir, "answers.cache") },
			func(t *testing.T, spec string) {
				filetest.Exec(t, spec, "UPDATE cache_namespaces SET label = 'x'", "PRAGMA journal_mode = DELETE")
			},
			func(t *testing.T, spec string) string {
				return "journal mode " + sqliteCells(t, spec, "PRAGMA journal_mode")[0] + " " + sqliteState(t, spec)
			}},
		{"postgres, schema by search_path, no cache_claims",
			func(string) string { return pgURL + "&search_path=dry_cache" },
			func(t *testing.T, _ string) {
				dbExec(t, pgURL, "UPDATE dry_cache.cache_namespaces SET label = 'x'", "DROP TABLE dry_cache.cache_claims")
			},
			func(t *testing.T, _ string) string {
				_, ns := dbRows(t, pgURL, "SELECT id, label FROM dry_cache.cache_namespaces ORDER BY id")
				_, tables := dbRows(t, pgURL, "SELECT tablename FROM pg_tables WHERE schemaname = 'dry_cache' ORDER BY 1")
				return strings.Join(flat(ns), " ") + " tables: " + strings.Join(flat(tables), " ")
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			spec := tc.spec(dir)
			args := func(url string) []string {
				return []string{"--base-url", url, "--rate", "0", "--country", "IE", "--retries", "0", "--cache", spec,
					"-o", filepath.Join(dir, "out.csv"), "--review", filepath.Join(dir, "review.csv"), sampleCSV(t)}
			}
			code, stderr, first := runSummary(t, t.Context(), dir, args(base)...)
			if code != exitRowErrors || first["calls_made"].(float64) < 10 {
				t.Fatalf("filling the cache: exit %d, %v calls:\n%s", code, first["calls_made"], tail(messages(stderr), 1000))
			}
			tc.damage(t, spec)
			before := tc.state(t, spec)
			if !strings.Contains(before, " x") {
				t.Fatalf("the label was not edited: %s", before)
			}

			// A run refused after its first look at the cache (no address
			// column to map) leaves it as it is.
			noAddress := filepath.Join(dir, "names.csv")
			if err := os.WriteFile(noAddress, []byte("Name\nAda\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			refused := args(base)
			refused[len(refused)-1] = noAddress
			if code, stderr, _ := runSummary(t, t.Context(), t.TempDir(), refused...); code == exitOK || code == exitRowErrors {
				t.Fatalf("a run over no address: exit %d:\n%s", code, tail(messages(stderr), 1000))
			}
			if after := tc.state(t, spec); after != before {
				t.Fatalf("the refused run changed the cache:\nbefore %s\nafter  %s", before, after)
			}

			// The namespace there: every request it holds is answered.
			e := estimateOf(t, args(base))
			if e["cache_answers"] != first["calls_made"] || e["calls_to_pay"] != 0.0 {
				t.Errorf("dry run over the filled cache: %v, want %v cache answers and no call", e, first["calls_made"])
			}
			// Another service's namespace is not there: it answers nothing,
			// and is not added.
			eo := estimateOf(t, args(other))
			if eo["cache_answers"] != 0.0 || eo["calls_to_pay"] != first["calls_made"] {
				t.Errorf("dry run for another service: %v, want no cache answer and %v calls", eo, first["calls_made"])
			}
			if after := tc.state(t, spec); after != before {
				t.Fatalf("the dry runs changed the cache:\nbefore %s\nafter  %s", before, after)
			}
			// The runs then pay what the dry runs said; the first creates
			// what the cache lacks.
			code, stderr, run := runSummary(t, t.Context(), dir, args(base)...)
			if code != exitRowErrors || run["calls_made"] != e["calls_to_pay"] || run["cache_hits"] != e["cache_answers"] {
				t.Fatalf("run: exit %d, calls %v, cache hits %v; estimate %v:\n%s", code, run["calls_made"], run["cache_hits"], e, tail(messages(stderr), 1000))
			}
			code, stderr, run = runSummary(t, t.Context(), dir, args(other)...)
			if code != exitRowErrors || run["calls_made"] != eo["calls_to_pay"] || run["cache_hits"] != 0.0 {
				t.Fatalf("run for another service: exit %d, calls %v, cache hits %v; estimate %v:\n%s", code, run["calls_made"], run["cache_hits"], eo, tail(messages(stderr), 1000))
			}
		})
	}
}

// sqliteState is what a dry run must not change in the cache file at spec:
// its bytes, its WAL and its namespaces' labels.
func sqliteState(t *testing.T, spec string) string {
	t.Helper()
	labels := sqliteCells(t, spec, "SELECT id, label FROM cache_namespaces ORDER BY id")
	sums := filetest.Sums(t, spec) // after the read, whose connection is closed
	return strings.Join(sums[:], " ") + " " + strings.Join(labels, " ")
}

// sqliteCells are the cells of query on the SQLite file at path, read and
// closed (an open connection would lock a cache file against the runs).
func sqliteCells(t *testing.T, path, query string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var cells []string
	for rows.Next() {
		row := make([]string, len(cols))
		ptrs := make([]any, len(cols))
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		cells = append(cells, row...)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return cells
}

// flat is rows as one list of cells.
func flat(rows [][]string) []string {
	var cells []string
	for _, r := range rows {
		cells = append(cells, r...)
	}
	return cells
}

// TestRunDryRunResumeWritesNoJournal: a dry run with --resume reads the
// journal it would continue and writes nothing to it: a journal switched
// out of WAL mode by hand (sqlite3) keeps its bytes and its mode, with no
// -wal or -journal beside it, and still answers its rows; an SQLite file
// without tables at the journal's path is not made a journal.
func TestRunDryRunResumeWritesNoJournal(t *testing.T) {
	t.Parallel() // no environment or package variable set: see docs/testing.md
	in := sampleCSV(t)
	base := newTestService(t, nil).URL
	for _, tc := range []struct {
		name    string
		make    func(t *testing.T, dir, jpath string, args []string)
		answers float64 // the estimate's journal answers
	}{
		{"journal out of WAL mode", func(t *testing.T, dir, jpath string, args []string) {
			if code, stderr, _ := runSummary(t, t.Context(), dir, append([]string{"--keep-journal"}, args...)...); code != exitOK && code != exitRowErrors {
				t.Fatalf("the run: exit %d:\n%s", code, tail(messages(stderr), 1000))
			}
			filetest.Exec(t, jpath, "PRAGMA journal_mode = DELETE")
		}, 20},
		{"SQLite file without tables", func(t *testing.T, _, jpath string, _ []string) {
			filetest.Exec(t, jpath, "PRAGMA user_version = 7")
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			jpath := filepath.Join(dir, "out.csv.journal")
			args := []string{"--base-url", base, "--rate", "0", "--country", "IE", "--limit", "20",
				"-o", filepath.Join(dir, "out.csv"), "--review", filepath.Join(dir, "review.csv"), in}
			tc.make(t, dir, jpath, args)
			before := filetest.Sums(t, jpath)
			if e := estimateOf(t, append([]string{"--resume"}, args...)); e["journal_answers"] != tc.answers {
				t.Errorf("dry run: %v, want %v journal answers", e, tc.answers)
			}
			if after := filetest.Sums(t, jpath); after != before {
				t.Fatalf("the dry run changed the journal: %v, was %v", after, before)
			}
			if made, _ := filepath.Glob(jpath + "-*"); len(made) > 0 {
				t.Fatalf("the dry run left %q", made)
			}
			if m := sqliteCells(t, jpath, "PRAGMA journal_mode")[0]; m != "delete" {
				t.Fatalf("journal mode %q after the dry run, want delete", m)
			}
		})
	}
}
