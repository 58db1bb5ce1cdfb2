package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/addrclean/addrclean/internal/needs"
)

// TestSummarize reads the 'go test -json' stream of a package with a test
// that passes, one skipped for want of Chromium, two subtests skipped for
// want of PostgreSQL, one skipped for another reason and one that fails:
// the output is what go test prints without -v, and the last line counts
// the skips by program.
func TestSummarize(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	s, err := summarize(f, &out)
	if err != nil {
		t.Fatal(err)
	}
	const wantOut = "--- FAIL: TestFails (0.00s)\n" +
		"    fake_test.go:17: the reason it failed\n" +
		"    fake_test.go:17: boom\n" +
		"FAIL\n" +
		"FAIL\tfake\t0.005s\n"
	if out.String() != wantOut {
		t.Errorf("output:\n%s\nwant:\n%s", &out, wantOut)
	}
	const wantLine = "skipped: 2 test(s) without PostgreSQL (install: apt-get install -y postgresql); " +
		"1 test(s) without chromium (install: apt-get install -y chromium)"
	if got := s.line(); got != wantLine {
		t.Errorf("line:\n%s\nwant:\n%s", got, wantLine)
	}
	if got := (&summary{}).line(); got != "skipped: none for want of Chromium or PostgreSQL" {
		t.Errorf("nothing skipped: %s", got)
	}
}

// TestMarkerRoundTrip: what needs writes, testsum reads.
func TestMarkerRoundTrip(t *testing.T) {
	what, install, ok := needs.Parse("    x_test.go:9: " + needs.Message("chromium", "apt-get install -y chromium", "why") + "\n")
	if !ok || what != "chromium" || install != "apt-get install -y chromium" {
		t.Fatalf("%q %q %v", what, install, ok)
	}
	if _, _, ok := needs.Parse("    x_test.go:9: starts a subprocess\n"); ok {
		t.Fatal("a plain skip read as a missing program")
	}
}

// TestSummarizeTestLeftOpen: a test that ends the test binary (os.Exit, a
// kill) never gets its own "fail" event; what it printed is shown with the
// package's failure, not dropped.
func TestSummarizeTestLeftOpen(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "exit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	if _, err := summarize(f, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"before the exit", "FAIL\tfake2"} {
		if !bytes.Contains(out.Bytes(), []byte(want)) {
			t.Errorf("output lacks %q:\n%s", want, &out)
		}
	}
}
