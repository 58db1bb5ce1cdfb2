package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// recorder is a testing.TB whose Fatal stops only the goroutine that
// called it, so a test can see the helpers fail.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

func (r *recorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.failed = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	runtime.Goexit()
}

// run calls f with a recorder in its own goroutine and returns the failure
// message, "" when f passed.
func run(t *testing.T, f func(tb testing.TB)) string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.failed
}

func TestCheck(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join("testdata", name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("plain", "a\nb\n")
	write("json", "{\n  \"a\": [\n    1,\n    \"<\"\n  ]\n}")
	write("json-nl", "{\n  \"a\": 1\n}\n")
	write("json-blank", "{\n  \"a\": 1\n}\n\n")
	tests := []struct {
		name    string
		check   func(testing.TB, string, []byte)
		file    string
		got     string
		wantErr string // part of the failure, "" when it must pass
	}{
		{"equal", Check, "plain", "a\nb\n", ""},
		{"other line", Check, "plain", "a\nc\n", "differs at line 2"},
		{"no final newline", Check, "plain", "a\nb", "newlines at its end: got 0, want 1"},
		{"missing file", Check, "none", "x", "-update to create it"},
		{"json indented", CheckJSON, "json", `{"a":[1,"<"]}`, ""},
		{"json without final newline", CheckJSON, "json", "{\"a\": [1, \"<\"]}\n", ""},
		{"json with final newline", CheckJSON, "json-nl", `{"a":1}`, ""},
		{"json escaping counts", CheckJSON, "json", `{"a":[1,"\u003c"]}`, "differs at line 4"},
		{"json member order counts", CheckJSON, "json-nl", `{"b":1}`, "differs at line 2"},
		{"json blank lines count", CheckJSON, "json-blank", `{"a":1}`, "newlines at its end: got 1, want 2"},
		{"not json", CheckJSON, "json", `{"a":`, "unexpected end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := run(t, func(tb testing.TB) { tt.check(tb, tt.file, []byte(tt.got)) })
			if tt.wantErr == "" && msg != "" || !strings.Contains(msg, tt.wantErr) {
				t.Errorf("failure %q, want one holding %q", msg, tt.wantErr)
			}
		})
	}
}
