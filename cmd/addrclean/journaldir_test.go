package main

import (
	"path/filepath"
	"testing"

	"github.com/addrclean/addrclean/internal/pgtest"
)

// TestRunJournalDir: the journal of a run whose outputs are all tables
// goes to --journal-dir (or ADDRCLEAN_JOURNAL_DIR; the flag wins), not to
// the user's cache directory, and a --resume with the same directory
// finds it there (a kept journal replays without a call); a run with a
// file output keeps its journal beside the file.
func TestRunJournalDir(t *testing.T) {
	cacheJournals := isolateJournals(t)
	srv, vc := countingService(t)
	for _, kind := range []string{"postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			dbURL := "sqlite:" + filepath.Join(t.TempDir(), "crm.db")
			input := "main.cc" // the spellings users type
			if kind == "postgres" {
				dbURL, input = pgtest.RequireDB(t), "public.cc"
			}
			loadSample(t, dbURL, "cc")
			common := []string{"--base-url", srv.URL, "--country", "IE", "--limit", "30", "--journal", "on", "--keep-journal",
				"--table", input, "--id-col", "Customer ID", "--out-table", "av"}
			journals := func(dir string) []string {
				m, _ := filepath.Glob(filepath.Join(dir, "*.journal"))
				return m
			}

			flagDir, envDir := t.TempDir(), t.TempDir()
			t.Setenv("ADDRCLEAN_JOURNAL_DIR", envDir)
			r := runDB(t, t.TempDir(), append(append(common, "--journal-dir", flagDir), dbURL)...)
			wantExit(t, r, exitOK, exitRowErrors)
			if got := journals(flagDir); len(got) != 1 {
				t.Fatalf("--journal-dir %s holds %q, want the run's journal", flagDir, got)
			}
			for _, dir := range []string{cacheJournals, envDir} {
				if got := journals(dir); len(got) > 0 {
					t.Fatalf("%s holds %q: the journal went past --journal-dir", dir, got)
				}
			}
			before := vc.calls.Load()
			r = runDB(t, t.TempDir(), append(append(common, "--resume", "--journal-dir", flagDir), dbURL)...)
			wantExit(t, r, exitOK, exitRowErrors)
			if n := vc.calls.Load() - before; n != 0 {
				t.Errorf("--resume with the same --journal-dir made %d calls, want 0 (the kept journal replayed)", n)
			}

			r = runDB(t, t.TempDir(), append(common, dbURL)...)
			wantExit(t, r, exitOK, exitRowErrors)
			if got := journals(envDir); len(got) != 1 {
				t.Fatalf("ADDRCLEAN_JOURNAL_DIR %s holds %q, want the run's journal", envDir, got)
			}

			outDir := t.TempDir()
			out := filepath.Join(outDir, "out.csv")
			r = runDB(t, t.TempDir(), append(append(common, "--journal-dir", flagDir, "-o", out), dbURL)...)
			wantExit(t, r, exitOK, exitRowErrors)
			if got := journals(outDir); len(got) != 1 || got[0] != out+".journal" {
				t.Errorf("with -o %s the journals beside it are %q, want %s.journal", out, got, out)
			}
			if got := journals(cacheJournals); len(got) > 0 {
				t.Errorf("%s holds %q", cacheJournals, got)
			}
		})
	}
}
