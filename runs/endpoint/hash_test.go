package endpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
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
