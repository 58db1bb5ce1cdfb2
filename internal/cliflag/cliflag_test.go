package cliflag

import (
	"bytes"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestClosest covers the guesses, and the names too far off to guess.
func TestClosest(t *testing.T) {
	names := []string{"run", "apply", "report", "serve", "verify", "cache", "reference", "help", "version"}
	for in, want := range map[string]string{
		"rnu": "run", "RUN": "run", "aplly": "apply", "verfiy": "verify", "cahce": "cache",
		"refrence": "reference", "hlep": "help", "versoin": "version",
		"x": "", "frobnicate": "", "runner": "", "": "",
	} {
		if got := Closest(in, names); got != want {
			t.Errorf("Closest(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPrintDefaults: "--name", a shorthand on its long flag's line, defaults
// as the flag package gives them (strings quoted, zero values left out).
func TestPrintDefaults(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("out", "", "output `PATH`")
	fs.String("o", "", "shorthand for --out")
	fs.String("log-format", "auto", "auto or json")
	fs.Duration("cache-ttl", 720*time.Hour, "age")
	fs.Bool("json", false, "as JSON")
	fs.Int("workers", 8, "concurrent requests")
	var b bytes.Buffer
	PrintDefaults(fs, &b)
	want := "  --cache-ttl duration\n    \tage (default 720h0m0s)\n" +
		"  --json\n    \tas JSON\n" +
		"  --log-format string\n    \tauto or json (default \"auto\")\n" +
		"  -o, --out PATH\n    \toutput PATH\n" +
		"  --workers int\n    \tconcurrent requests (default 8)\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", &b, want)
	}
}

// TestParse: flags after positional arguments, "--" ending the flags, a
// repeatable flag, --help once on out, and a mistyped flag answered in a
// few lines with the nearest flag.
func TestParse(t *testing.T) {
	tests := []struct {
		name         string
		args         []string
		interspersed bool
		pos          []string
		lines        []string
		out, errOut  string // substrings; "" = must be empty
		err          error
	}{
		{name: "flags after the input", args: []string{"in.csv", "--country", "IE", "--line-col", "a", "--line-col", "b,c"},
			interspersed: true, pos: []string{"in.csv"}, lines: []string{"a", "b,c"}},
		{name: "-- ends the flags", args: []string{"--country", "IE", "--", "x", "--not-a-flag", "--country", "GB"},
			interspersed: true, pos: []string{"x", "--not-a-flag", "--country", "GB"}},
		{name: "not interspersed stops at the first argument", args: []string{"a", "--country", "IE"},
			pos: []string{"a", "--country", "IE"}},
		{name: "help", args: []string{"--help"}, out: "Usage: x\n  --country CODE", err: flag.ErrHelp},
		{name: "did you mean", args: []string{"--countr", "IE"}, errOut: "did you mean --country?\nRun 'addrclean x --help' for the flags.\n"},
		{name: "a prefix is near enough", args: []string{"--count"}, errOut: "did you mean --country?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			fs := New("x", "Usage: x\n", &errOut)
			fs.String("country", "", "country `CODE`")
			var lines List
			fs.Var(&lines, "line-col", "a `COLUMN`")
			pos, err := Parse(fs, tt.args, "Usage: x\n", &out, tt.interspersed)
			if tt.err != nil || tt.errOut != "" {
				if err == nil || tt.err != nil && err != tt.err {
					t.Fatalf("err %v, want %v", err, tt.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(pos, tt.pos) || !slices.Equal(lines, tt.lines) {
				t.Errorf("positional %q, lines %q; want %q, %q", pos, lines, tt.pos, tt.lines)
			}
			for _, c := range []struct {
				got  string
				want string
			}{{out.String(), tt.out}, {errOut.String(), tt.errOut}} {
				if c.want == "" && c.got != "" || !strings.Contains(c.got, c.want) {
					t.Errorf("got %q, want %q", c.got, c.want)
				}
			}
			if strings.Count(out.String(), "Usage: x") > 1 || strings.Contains(errOut.String(), "Usage:") {
				t.Errorf("the usage printed more than once, or on errors:\nout %q\nerr %q", &out, &errOut)
			}
		})
	}
}

// TestWasSet tells a flag given at its default from one not given.
func TestWasSet(t *testing.T) {
	fs := New("x", "", io.Discard)
	fs.Float64("rate", 20, "")
	fs.Bool("json", false, "")
	if _, err := Interspersed(fs, []string{"--rate", "20"}); err != nil {
		t.Fatal(err)
	}
	if !WasSet(fs, "rate") || WasSet(fs, "json") {
		t.Errorf("WasSet rate %v, json %v; want true, false", WasSet(fs, "rate"), WasSet(fs, "json"))
	}
}
