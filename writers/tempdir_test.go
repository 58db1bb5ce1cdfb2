package writers

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestXLSXTempDir: an XLSX output's excelize files go to a directory beside
// it, named like its temporary outputs, which Close removes.
func TestXLSXTempDir(t *testing.T) {
	for _, ctor := range []struct {
		name string
		open func(path string) (interface{ Close() error }, error)
	}{
		{"enriched", func(p string) (interface{ Close() error }, error) { return NewEnriched(p, []string{"a"}, Options{}) }},
		{"rows", func(p string) (interface{ Close() error }, error) { return NewRows(p, []string{"a"}, Options{}) }},
	} {
		t.Run(ctor.name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := ctor.open(filepath.Join(dir, "out.xlsx"))
			if err != nil {
				t.Fatal(err)
			}
			if m, _ := filepath.Glob(filepath.Join(dir, ".out.xlsx.tmp-excelize-*")); len(m) != 1 {
				t.Fatalf("temporary directories while open: %v", m)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if m, _ := filepath.Glob(filepath.Join(dir, ".out.xlsx.tmp-*")); len(m) != 0 {
				t.Fatalf("left after Close: %v", m)
			}
		})
	}
}

// TestRemoveStaleTempDirs: the TempDir a killed process left (unlocked,
// with a file in it) is removed; a live one is not.
func TestRemoveStaleTempDirs(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock: open files protect a live run's there")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "out.xlsx")
	stale := filepath.Join(dir, ".out.xlsx.tmp-excelize-123")
	if err := os.Mkdir(stale, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stale, "excelize-456"), make([]byte, 1024), 0o600); err != nil {
		t.Fatal(err)
	}
	live, err := NewTempDir(path)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Remove()
	removed := RemoveStaleTemps(path)
	if len(removed) != 1 || removed[0] != stale {
		t.Fatalf("removed %v, want %s", removed, stale)
	}
	if _, err := os.Stat(live.Path()); err != nil {
		t.Fatalf("the live directory was removed: %v", err)
	}
	if err := live.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(live.Path()); !os.IsNotExist(err) {
		t.Fatalf("Remove left %s", live.Path())
	}
}
