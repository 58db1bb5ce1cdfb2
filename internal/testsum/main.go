package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/addrclean/addrclean/internal/needs"
)

func main() {
	cmd := exec.Command("go", append([]string{"test", "-json"}, os.Args[1:]...)...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(2)
	}
	s, sumErr := summarize(stdout, os.Stdout)
	runErr := cmd.Wait()
	fmt.Println(s.line())
	switch {
	case sumErr != nil:
		fmt.Fprintln(os.Stderr, "testsum:", sumErr)
		os.Exit(2)
	case runErr != nil:
		var ee *exec.ExitError
		if errors.As(runErr, &ee) {
			os.Exit(ee.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "testsum:", runErr)
		os.Exit(2)
	}
}

// event is one line of 'go test -json' (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// missing is one program some tests needed.
type missing struct {
	what, install string
	tests         int
}

// summary is what the run skipped for want of programs, in the order met.
type summary struct {
	missing []*missing
}

func (s *summary) add(what, install string) {
	for _, m := range s.missing {
		if m.what == what {
			m.tests++
			return
		}
	}
	s.missing = append(s.missing, &missing{what: what, install: install, tests: 1})
}

// line is the last line of make test.
func (s *summary) line() string {
	if len(s.missing) == 0 {
		return "skipped: none for want of Chromium or PostgreSQL"
	}
	var parts []string
	for _, m := range s.missing {
		parts = append(parts, fmt.Sprintf("%d test(s) without %s (install: %s)", m.tests, m.what, m.install))
	}
	return "skipped: " + strings.Join(parts, "; ")
}

// summarize reads the events of r and writes to w what go test prints
// without -v. A test's output is held until the test ends and shown only
// if it failed; memory is bounded by the output of the tests running at
// once.
func summarize(r io.Reader, w io.Writer) (*summary, error) {
	s := &summary{}
	held := map[string][]string{} // package + "\x00" + test: its output so far
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not an event: go test printed it itself.
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		key := e.Package + "\x00" + e.Test
		switch e.Action {
		case "build-output":
			fmt.Fprint(w, e.Output)
		case "output":
			if e.Test == "" {
				// Package lines: "ok pkg 1.2s", "FAIL", "--- FAIL" of a
				// test's parent are printed as go test prints them; the
				// verbose ones are not.
				if !verboseLine(e.Output) {
					fmt.Fprint(w, e.Output)
				}
				continue
			}
			held[key] = append(held[key], e.Output)
		case "skip":
			for _, o := range held[key] {
				if what, install, ok := needs.Parse(o); ok {
					s.add(what, install)
					break
				}
			}
			delete(held, key)
		case "fail":
			if e.Test == "" {
				// A package that failed with tests still open (a panic, a
				// timeout): their output is the reason, show it.
				flushPackage(w, held, e.Package)
				continue
			}
			// -json reports in -v order, the "--- FAIL" line last; go test
			// without -v prints it first.
			out := slices.DeleteFunc(held[key], func(o string) bool { return strings.HasPrefix(o, "=== ") })
			slices.SortStableFunc(out, func(a, b string) int {
				return compareBool(strings.HasPrefix(strings.TrimSpace(b), "--- "), strings.HasPrefix(strings.TrimSpace(a), "--- "))
			})
			for _, o := range out {
				fmt.Fprint(w, o)
			}
			delete(held, key)
		case "pass":
			delete(held, key)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(held)) {
		fmt.Fprint(w, strings.Join(held[k], ""))
	}
	if err := sc.Err(); err != nil {
		return s, fmt.Errorf("reading go test -json: %w", err)
	}
	slices.SortStableFunc(s.missing, func(a, b *missing) int { return strings.Compare(a.what, b.what) })
	return s, nil
}

// flushPackage writes and forgets the output held for the tests of pkg
// that never ended.
func flushPackage(w io.Writer, held map[string][]string, pkg string) {
	for _, k := range slices.Sorted(maps.Keys(held)) {
		if strings.HasPrefix(k, pkg+"\x00") {
			fmt.Fprint(w, strings.Join(held[k], ""))
			delete(held, k)
		}
	}
}

// verboseLine reports the package-level lines that go test prints only
// with -v: "PASS" alone and the "=== RUN"-style progress lines.
func verboseLine(s string) bool {
	return s == "PASS\n" || strings.HasPrefix(s, "=== ")
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
