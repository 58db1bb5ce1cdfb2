package endpoint

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestInputTempDirWithoutFileOutputs: a workbook read by a run that writes
// no file (tables only, a dry run) unpacks into a locked directory of the
// system's temporary directory, and the next such run removes the one a
// killed run left there, never a live run's.
func TestInputTempDirWithoutFileOutputs(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock: open files protect a live run's there")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	stale := filepath.Join(tmp, "."+systemAnchor+".tmp-excelize-123")
	if err := os.Mkdir(stale, 0o700); err != nil {
		t.Fatal(err)
	}
	live, err := inputTempDir("in.xlsx", []string{"", ""})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Remove()
	if filepath.Dir(live.Path()) != tmp || !strings.HasPrefix(filepath.Base(live.Path()), "."+systemAnchor+".tmp-excelize-") {
		t.Fatalf("temporary directory %s, want one of %s in %s", live.Path(), systemAnchor, tmp)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("the killed run's %s is still there (%v)", stale, err)
	}
	other, err := inputTempDir("in.xlsx", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Remove()
	if _, err := os.Stat(live.Path()); err != nil {
		t.Fatalf("a second run removed the live run's directory: %v", err)
	}
	if none, err := inputTempDir("in.csv", nil); none != nil || err != nil {
		t.Fatalf("a CSV input got a temporary directory %v (%v)", none, err)
	}
}
