package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Updating reports whether the tests run with -update.
func Updating() bool { return *update }

// Check compares got with testdata/name, or writes it there under -update.
// A difference fails the test at the first differing line.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	check(t, name, got, bytes.Equal)
}

// CheckJSON is Check for a JSON document: got is indented two spaces a
// level first, so that goldens are readable and a diff names the member,
// while member order and escaping still count. Goldens written with or
// without a final newline both match.
func CheckJSON(t testing.TB, name string, got []byte) {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, got, "", "  "); err != nil {
		t.Fatalf("%s: %v in\n%s", name, err, got)
	}
	// Indent keeps the blanks that end got.
	got = append(bytes.TrimRight(b.Bytes(), " \t\r\n"), '\n')
	check(t, name, got, func(got, want []byte) bool {
		return bytes.Equal(got[:len(got)-1], bytes.TrimSuffix(want, []byte("\n")))
	})
}

func check(t testing.TB, name string, got []byte, equal func(got, want []byte) bool) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(gl), len(wl)) {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("%s differs at line %d (run go test -update if the change is intended)\n got: %q\nwant: %q", name, i+1, g, w)
		}
	}
	// Split lines alike but for how many newlines end them.
	t.Fatalf("%s differs in the newlines at its end: got %d, want %d (run go test -update if the change is intended)",
		name, len(got)-len(bytes.TrimRight(got, "\n")), len(want)-len(bytes.TrimRight(want, "\n")))
}
