package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestRunDryRunNoJournalDir: the journal directory of a run whose outputs
// are all tables (the default one, and --journal-dir) is created with the
// journal: a dry run, and a run refused before its journal, leave none; a
// run refused after it removes the journal and the directories it made.
func TestRunDryRunNoJournalDir(t *testing.T) {
	srv, _ := countingService(t)
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "crm.db")
	loadSample(t, dbURL, "customers")
	common := []string{"--base-url", srv.URL, "--rate", "0", "--country", "IE", "--table", "main.customers", "--id-col", "Customer ID"}
	for _, tc := range []struct {
		name    string
		args    []string
		flagDir bool // --journal-dir
		exit    int
	}{
		{"dry run", []string{"--dry-run", "--out-table", "av"}, false, exitOK},
		{"dry run, --journal-dir", []string{"--dry-run", "--out-table", "av"}, true, exitOK},
		{"refused: the out-table is the input", []string{"--out-table", "customers"}, false, exitUsage},
		{"refused, --journal-dir", []string{"--out-table", "customers"}, true, exitUsage},
		// Refused after the journal is created: it is removed, and so is
		// the directory made for it.
		{"refused at the service's flags", []string{"--out-table", "av", "--method", "PUT"}, false, exitUsage},
		{"refused at the service's flags, --journal-dir", []string{"--out-table", "av", "--method", "PUT"}, true, exitUsage},
		{"run", []string{"--out-table", "av", "--keep-journal"}, true, exitRowErrors},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defaultDir := isolateJournals(t)
			flagDir := filepath.Join(t.TempDir(), "journals")
			args := append(append([]string{}, common...), tc.args...)
			if tc.flagDir {
				args = append(args, "--journal-dir", flagDir)
			}
			r := runDB(t, t.TempDir(), append(args, dbURL)...)
			wantExit(t, r, tc.exit)
			if tc.name == "run" {
				// The run makes the directory, with its journal.
				if m, _ := filepath.Glob(filepath.Join(flagDir, "*.journal")); len(m) != 1 {
					t.Fatalf("--journal-dir %s holds %q, want the run's journal", flagDir, m)
				}
				return
			}
			for _, dir := range []string{filepath.Dir(defaultDir), flagDir} {
				if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("%s was created (%v)", dir, err)
				}
			}
		})
	}
}
