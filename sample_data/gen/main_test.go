package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCommittedFilesAreFresh regenerates the sample data into a temporary
// directory and compares it with the committed files: a change to the
// generator must come with regenerated data (go run ./sample_data/gen).
func TestCommittedFilesAreFresh(t *testing.T) {
	dir := t.TempDir()
	if err := run(dir, 6000, 500); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"reference.csv", "customers.csv", "customers.xlsx"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("..", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("sample_data/%s is stale: run go run ./sample_data/gen", name)
		}
	}
}
