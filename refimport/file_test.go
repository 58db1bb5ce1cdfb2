package refimport

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteFile: a good conversion is in place and loads; one that fails,
// or whose output does not load, leaves the old file as it was.
func TestWriteFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ref.csv")
	if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	paf := func(w io.Writer) (Stats, error) {
		f, err := os.Open("testdata/paf.csv")
		if err != nil {
			return Stats{}, err
		}
		defer f.Close()
		return PAF(context.Background(), f, w)
	}
	notLoading := func(w io.Writer) (Stats, error) {
		_, err := io.WriteString(w, "not,a\nreference\n")
		return Stats{}, err
	}
	failing := func(w io.Writer) (Stats, error) {
		_, _ = io.WriteString(w, "half")
		return Stats{}, &SourceError{Line: 3, Err: io.ErrUnexpectedEOF}
	}
	for _, tt := range []struct {
		name string
		conv func(io.Writer) (Stats, error)
		err  string
	}{
		{"does not load", notLoading, "the converted file does not load"},
		{"fails", failing, "unexpected EOF"},
	} {
		if _, err := WriteFile(context.Background(), out, tt.conv); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: err %v, want %q", tt.name, err, tt.err)
		}
		if b, _ := os.ReadFile(out); string(b) != "old" {
			t.Errorf("%s: the old file became %q", tt.name, b)
		}
	}
	st, err := WriteFile(context.Background(), out, paf)
	if err != nil || st.Written == 0 {
		t.Fatalf("PAF: %+v, %v", st, err)
	}
	want, err := os.ReadFile("testdata/paf.golden.csv")
	if b, _ := os.ReadFile(out); err != nil || string(b) != string(want) {
		t.Errorf("the file in place is not the conversion:\n%s", b)
	}
}
