package runs

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"
)

// TestJournalDirMade: makeJournalDir says which directories it made, and
// remove takes away those that are empty, innermost first, and no other:
// not a directory that was there, not one another run's journal is in.
func TestJournalDirMade(t *testing.T) {
	for _, tc := range []struct {
		name     string
		there    string // made before, under the test's directory
		other    string // another run's file, made after
		dir      string
		want     []string // left, under the test's directory
		wantGone []string
	}{
		{"all made", "", "", "a/b/c", nil, []string{"a"}},
		{"parent there", "a", "", "a/b/c", []string{"a"}, []string{"a/b"}},
		{"there already", "a/b/c", "", "a/b/c", []string{"a/b/c"}, nil},
		{"another run's journal", "", "a/b/other.journal", "a/b/c", []string{"a/b/other.journal"}, []string{"a/b/c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			at := func(p string) string { return filepath.Join(base, p) }
			if tc.there != "" {
				if err := os.MkdirAll(at(tc.there), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			made, err := makeJournalDir(at(tc.dir))
			if err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(at(tc.dir)); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 && tc.there == "" {
				t.Fatalf("%s: %v, %v", tc.dir, fi, err)
			}
			if tc.other != "" {
				if err := os.WriteFile(at(tc.other), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			made.remove()
			for _, p := range tc.want {
				if _, err := os.Stat(at(p)); err != nil {
					t.Errorf("%s was removed: %v", p, err)
				}
			}
			for _, p := range tc.wantGone {
				if _, err := os.Stat(at(p)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s is left: %v", p, err)
				}
			}
		})
	}
	if made, err := makeJournalDir(""); err != nil || made != (journalDir{}) {
		t.Errorf(`makeJournalDir(""): %v, %v`, made, err)
	}
}

// TestJournalDirMadeCreateFails: a journal that cannot be created (here:
// the run stopped as it was about to) leaves no directory made for it,
// since there is no Run to Abandon.
func TestJournalDirMadeCreateFails(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "a", "b")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	id := func() (Identity, error) { return Identity{BaseURL: "https://api.example.com"}, nil }
	if _, err := (Policy{Mode: "on"}).Open(ctx, filepath.Join(dir, "x.journal"), dir, id, nil, zerolog.New(io.Discard)); err == nil {
		t.Fatal("Open with a cancelled context: no error")
	}
	if _, err := os.Stat(filepath.Join(base, "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the directory made for the journal is still there: %v", err)
	}
}
