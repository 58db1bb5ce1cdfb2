package endpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestJournalBeside(t *testing.T) {
	if got := journalBeside("out.csv", "review.csv"); got != "out.csv.journal" {
		t.Errorf("beside the enriched output: %q", got)
	}
	if got := journalBeside("-", "review.csv"); got != "review.csv.journal" {
		t.Errorf("enriched output on stdout: %q", got)
	}
}

func TestHashInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(path, []byte("a,b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := hashInput(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("a,b\n"))
	if in.Size != 4 || !filepath.IsAbs(in.Path) || in.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("hashInput = %+v", in)
	}
	// Hashing a large input must not hold up Ctrl-C.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := hashInput(ctx, path); !errors.Is(err, context.Canceled) {
		t.Errorf("with ctx cancelled: %v", err)
	}
	if _, err := hashInput(t.Context(), path+".missing"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing input: %v", err)
	}
}

// TestJournalPath: a run whose outputs are all tables keeps its journal in
// Spec.JournalDir (--journal-dir), else in addrclean/journals of the
// user's cache directory; a file output keeps it beside the file. Neither
// creates the directory: JournalDir names the one the run creates with
// its journal (none beside a file output), so that a dry run or a refused
// run leaves none.
func TestJournalPath(t *testing.T) {
	cache, dir := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	db := "sqlite:" + filepath.Join(t.TempDir(), "crm.db")
	for _, tc := range []struct {
		name, journalDir, out string
		wantDir               string
		made                  bool // the run makes wantDir
	}{
		{"tables, default", "", "", filepath.Join(cache, "addrclean", "journals"), true},
		{"tables, --journal-dir", dir, "", dir, true},
		{"tables, relative --journal-dir", "state", "", "state", true},
		{"-o - alone, --journal-dir", dir, "-", dir, true},
		{"a file output", dir, filepath.Join(cache, "out.csv"), cache, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			p, err := New(Spec{Input: db, Table: "cust", IDCol: "id", OutTable: "av", Out: tc.out, JournalDir: tc.journalDir, LockTimeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			got := p.JournalPath(tc.out, "", "")
			if filepath.Dir(got) != tc.wantDir {
				t.Errorf("journal %s, want one in %s", got, tc.wantDir)
			}
			want := "" // beside a file output: no directory to make
			if tc.made {
				want = tc.wantDir
			}
			if made := p.JournalDir(tc.out, ""); made != want {
				t.Errorf("JournalDir %q, want %q", made, want)
			}
			if _, err := os.Stat(tc.wantDir); tc.made && tc.wantDir != dir && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the journal's directory %s was created: %v", tc.wantDir, err)
			}
		})
	}
}
