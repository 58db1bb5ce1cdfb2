package runs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/journal"
)

// TestPeek: a dry run reads the journal the run would continue, and only
// that one; it refuses as Open refuses; it changes nothing in the file.
func TestPeek(t *testing.T) {
	id := Identity{Input: journal.Input{Path: "/in.csv", Size: 1, SHA256: "ab"}, BaseURL: "https://api.example.com"}
	other := id
	other.BaseURL = "https://other.example.com"
	live := Policy{Mode: "auto", Live: true}
	resume := Policy{Mode: "auto", Live: true, Resume: true}
	for _, tc := range []struct {
		name    string
		p       Policy
		before  journalState
		written journal.Meta
		usage   string // a UsageError saying this
		answers bool   // row 1 is answered by the journal
	}{
		{name: "no journal", p: resume},
		{name: "--resume", p: resume, before: interrupted, written: id.meta(), answers: true},
		{name: "--resume of a finished run", p: resume, before: finished, written: id.meta(), answers: true},
		{name: "no --resume over an unfinished journal", p: live, before: interrupted, written: id.meta(), usage: "holds 1 finished rows"},
		{name: "no --resume over a finished journal", p: live, before: finished, written: id.meta()},
		{name: "--resume of another run", p: resume, before: interrupted, written: other.meta(), usage: "written for a different run"},
		{name: "--restart", p: Policy{Mode: "auto", Live: true, Restart: true}, before: interrupted, written: id.meta()},
		{name: "--journal off", p: Policy{Mode: "off", Live: true}, before: interrupted, written: id.meta()},
		{name: "embedded, auto, a journal there", p: Policy{Mode: "auto", Resume: true}, before: interrupted, written: id.meta(), answers: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.csv.journal")
			var was []byte
			if tc.before != nil {
				tc.before(t, path, tc.written)
				var err error
				if was, err = os.ReadFile(path); err != nil {
					t.Fatal(err)
				}
			}
			j, err := tc.p.Peek(context.Background(), path, func() (Identity, error) { return id, nil })
			var ue *UsageError
			switch {
			case tc.usage != "":
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.usage) || j != nil {
					t.Fatalf("Peek = %v, %v; want a UsageError saying %q", j, err, tc.usage)
				}
			case err != nil:
				t.Fatal(err)
			case tc.answers != (j != nil):
				t.Fatalf("journal %v, want one: %v", j, tc.answers)
			}
			if j != nil {
				if _, ok, err := j.Lookup(1, 42); !ok || err != nil {
					t.Fatalf("row 1: %v, %v", ok, err)
				}
				if err := j.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if tc.before == nil {
				if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("Peek created the journal: %v", err)
				}
			} else if now, err := os.ReadFile(path); err != nil || !bytes.Equal(now, was) {
				t.Fatalf("Peek changed the journal: %v", err)
			}
		})
	}
}
