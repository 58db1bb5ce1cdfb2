package runs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestPeekHeadless: a dry run's look at a journal a killed run left headless
// (an empty file; an older addrclean's torn first line) finds none and
// leaves the file as it is: journal.Open would make the empty one a journal
// and remove the torn one.
func TestPeekHeadless(t *testing.T) {
	for name, content := range map[string][]byte{
		"empty": nil,
		"torn":  []byte(`0123abcd {"t":"header","journal":"addr`),
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.csv.journal")
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			j, err := Policy{Mode: "auto", Resume: true}.Peek(context.Background(), path, func() (Identity, error) { return Identity{}, nil })
			if j != nil {
				_ = j.Close()
			}
			if j != nil || err != nil {
				t.Errorf("Peek: %v, %v; want none", j, err)
			}
			if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, content) {
				t.Errorf("Peek changed the journal: %d bytes (%v), was %d", len(after), err, len(content))
			}
		})
	}
}
