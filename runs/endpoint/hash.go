package endpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/addrclean/addrclean/journal"
)

// hashInput identifies the input by its content, so that a resumed run
// never mixes the results of two versions of a file.
func hashInput(ctx context.Context, path string) (journal.Input, error) {
	f, err := os.Open(path)
	if err != nil {
		return journal.Input{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, ctxReader{ctx, f})
	if err != nil {
		return journal.Input{}, fmt.Errorf("reading %s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return journal.Input{Path: abs, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// ctxReader stops at Ctrl-C: hashing a large input must not hold it up.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// journalBeside is the journal beside the enriched output, or the review one.
func journalBeside(out, review string) string {
	if out == "-" {
		return review + ".journal"
	}
	return out + ".journal"
}
