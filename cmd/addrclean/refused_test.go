package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/internal/pgtest"
	"github.com/addrclean/addrclean/internal/sqlitefile"
	"github.com/addrclean/addrclean/internal/sqlitefile/filetest"
	"github.com/addrclean/addrclean/journal"
	"github.com/addrclean/addrclean/ratelimit/pgpace"
)

// TestRunRefusedCreatesNothing: a run refused after its flags are read (a
// missing input table, a missing id column, spelled as users type them)
// leaves no --rate-shared table (addrclean_pace), no shared cache's tables,
// no output table and no cache file behind: the cache and the timeline are created only
// once no check can refuse the run. The run that is not refused creates
// them.
func TestRunRefusedCreatesNothing(t *testing.T) {
	isolateJournals(t)
	dbURL := pgtest.RequireDB(t)
	loadSample(t, dbURL, "customers")
	srv := newTestService(t, nil)
	// The output tables too (av and its runs table): see also
	// TestRunRefusedLeavesDatabase for refusals after their checks.
	state := []string{pgpace.Table, "av", "av_runs", sqlitefile.MetaTable, "cache_namespaces", "cache_answers", "cache_claims"}
	created := func() []string {
		t.Helper()
		_, rows := dbRows(t, dbURL, `SELECT relname FROM pg_class WHERE relname IN ('`+strings.Join(state, "','")+`') ORDER BY 1`)
		var names []string
		for _, r := range rows {
			names = append(names, r[0])
		}
		return names
	}
	live := []string{"--base-url", srv.URL, "--country", "IE", "--retries", "0", "--limit", "20", "--rate", "50"}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"missing table", []string{"--table", "public.no_such_table", "--id-col", "Customer ID", "--out-table", "av"}, "no_such_table"},
		{"missing quoted table", []string{"--table", `"Customers"`, "--id-col", "Customer ID", "--out-table", "av"}, "Customers"},
		{"missing id column", []string{"--table", "customers", "--id-col", "No Such Column", "--out-table", "av"}, "No Such Column"},
		{"query of a missing table", []string{"--query", "SELECT * FROM crm.nothing ORDER BY 1", "--id-col", "Customer ID", "--out-table", "av"}, "nothing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "answers.cache")
			for _, k := range []struct {
				kind string // the URL holds the test's password: not in messages
				args []string
			}{
				{"shared cache and --rate-shared", []string{"--cache", dbURL, "--rate-shared"}},
				{"cache file", []string{"--cache", file}},
			} {
				cacheArgs := k.kind
				args := append(append(append([]string{}, live...), k.args...), c.args...)
				r := runDB(t, dir, append(args, dbURL)...)
				if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
					t.Fatalf("%s: exit %d, want 2 naming %q\n%s", cacheArgs, r.code, c.want, tail(r.stderr, 800))
				}
				if got := created(); len(got) > 0 {
					t.Errorf("%s: the refused run created %q", cacheArgs, got)
				}
				if _, err := os.Stat(file); err == nil {
					t.Errorf("%s: the refused run created the cache file %s", cacheArgs, file)
				}
			}
		})
	}
	r := runDB(t, t.TempDir(), append(append([]string{}, live...), "--cache", dbURL, "--rate-shared",
		"--table", "customers", "--id-col", "Customer ID", "--out-table", "av", dbURL)...)
	if r.code != exitOK && r.code != exitRowErrors {
		t.Fatalf("the run: exit %d\n%s", r.code, tail(r.stderr, 800))
	}
	if got := created(); len(got) != len(state) {
		t.Errorf("the run created %q, want %q", got, state)
	}
}

// TestRunCacheNotCreated: a cache file that cannot be created once the
// checks have passed (its directory is missing) stops the run with exit 1
// naming it, before any call, and without a crash.
func TestRunCacheNotCreated(t *testing.T) {
	dir := t.TempDir()
	cachePath := filepath.Join(dir, "missing", "answers.cache")
	r := runCLI(t, dir, "--country", "IE", "--cache", cachePath, sampleCSV(t))
	if r.code != exitFatal || !strings.Contains(r.stderr, cachePath) {
		t.Fatalf("exit %d, want 1 naming %s\n%s", r.code, cachePath, tail(r.stderr, 800))
	}
}

// TestRunRefusedKeepsFinishedJournal: a run refused after it settled its
// journal — by the service (a key it refuses, a service never reached) or
// by a check after the journal's (a key file that is empty, a cache that
// cannot be created) — leaves a finished journal (--keep-journal)
// as it was, to the byte, and finished: it is changed by the run's first
// row, not before. A journal switched out of WAL mode by hand (sqlite3)
// keeps its mode.
func TestRunRefusedKeepsFinishedJournal(t *testing.T) {
	t.Parallel() // no environment or package variable set: see docs/testing.md
	in := sampleCSV(t)
	base := newTestService(t, nil).URL
	dir := t.TempDir()
	jpath := filepath.Join(dir, "out.csv.journal")
	live := []string{"--base-url", base, "--rate", "0", "--country", "IE", "--limit", "20", in}
	wantExit(t, runCLI(t, dir, append([]string{"--keep-journal"}, live...)...), exitOK, exitRowErrors)
	filetest.Exec(t, jpath, "PRAGMA journal_mode = DELETE")
	before, err := os.ReadFile(jpath)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, key string
		args      []string
		want      string
	}{
		{"key refused", "pub_wrong-key", live, "key"},
		{"service never reached", testKey, []string{"--base-url", "http://127.0.0.1:1", "--retries", "0", "--country", "IE", in}, "reached"},
		{"empty key file", "", live, "key"},
		{"cache not created", testKey, append([]string{"--cache", filepath.Join(dir, "missing", "answers.cache")}, live...), "answers.cache"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each case on the finished journal, whatever the last one did.
			if err := errors.Join(os.WriteFile(jpath, before, 0o600),
				os.WriteFile(filepath.Join(dir, "key"), []byte(tc.key+"\n"), 0o600)); err != nil {
				t.Fatal(err)
			}
			r := runCLIQuiet(dir, tc.args...)
			wantExit(t, r, exitFatal)
			if !strings.Contains(messages(r.stderr), tc.want) {
				t.Fatalf("stderr does not name %q:\n%s", tc.want, tail(messages(r.stderr), 1500))
			}
			if after, _ := os.ReadFile(jpath); !bytes.Equal(after, before) {
				t.Fatalf("the refused run changed the journal (%d bytes, was %d)", len(after), len(before))
			}
			if made, _ := filepath.Glob(jpath + "-*"); len(made) > 0 {
				t.Fatalf("the refused run left %q", made)
			}
			if m := sqliteCells(t, jpath, "PRAGMA journal_mode")[0]; m != "delete" {
				t.Fatalf("journal mode %q after the refused run, want delete", m)
			}
		})
	}
	j, err := journal.Open(t.Context(), jpath)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if info := j.Info(); !info.Complete || info.Rows == 0 {
		t.Fatalf("the journal after the refused runs: complete %v, %d rows; want a finished one", info.Complete, info.Rows)
	}
}
