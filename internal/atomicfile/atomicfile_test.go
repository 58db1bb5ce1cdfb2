package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestWrite: a write that succeeds replaces the file, readable by others;
// one that fails leaves the old file as it was and no temporary file.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "summary.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	for _, tt := range []struct {
		write   string
		err     error
		want    string
		wantErr error
	}{
		{write: "half", err: boom, want: "old", wantErr: boom},
		{write: "new", want: "new"},
	} {
		err := Write(path, func(f *os.File) error {
			if _, err := f.WriteString(tt.write); err != nil {
				return err
			}
			return tt.err
		})
		if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
			t.Fatalf("err %v, want %v", err, tt.wantErr)
		}
		b, err := os.ReadFile(path)
		if err != nil || string(b) != tt.want {
			t.Errorf("file %q, %v; want %q", b, err, tt.want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("%d files in the directory, want 1 (no temporary file left)", len(entries))
		}
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v; want 0644", fi.Mode(), err)
	}
	if err := Write(filepath.Join(dir, "missing", "x"), func(*os.File) error { return nil }); err == nil {
		t.Error("a file in a missing directory was written")
	}
}
