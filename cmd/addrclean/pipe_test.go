package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestStdoutReaderGoneLeavesNoTempFiles: `run -o - ... | head` closes the
// pipe early. The run must fail (not exit 0) and take its temporary review
// file with it, not die of SIGPIPE and leave it beside the input.
func TestStdoutReaderGoneLeavesNoTempFiles(t *testing.T) {
	src, err := os.ReadFile("../../sample_data/customers.csv")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "customers.csv")
	if err := os.WriteFile(in, src, 0o644); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // the reader is gone before the first row
	cmd := exec.Command(os.Args[0], "run", "--log-format", "json", "--no-progress", "--country", "IE", "-o", "-", in)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	_ = cmd.Run() // the exit code is checked below
	w.Close()
	if code := cmd.ProcessState.ExitCode(); code != exitFatal {
		t.Errorf("exit %d (%v), want %d: %s", code, cmd.ProcessState, exitFatal, stderr.String())
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "customers.csv" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}
