package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/internal/golden"
)

// TestHelpGolden pins the help of every command, as 'addrclean help CMD'
// prints it, and checks what every help must have: an Examples section
// and flags written with "--".
func TestHelpGolden(t *testing.T) {
	for _, name := range []string{"run", "apply", "report", "serve", "verify", "cache", "reference"} {
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := runMain(t.Context(), []string{"help", name}, streams{in: strings.NewReader(""), out: &out, err: &errb}); code != exitOK {
				t.Fatalf("help %s: exit %d; stderr %s", name, code, &errb)
			}
			if errb.Len() > 0 {
				t.Errorf("help %s wrote to stderr: %s", name, &errb)
			}
			text := out.String()
			if !strings.HasPrefix(text, "Usage: addrclean "+name) {
				t.Errorf("help %s does not start with its usage line:\n%s", name, text)
			}
			if !strings.Contains(text, "\nExamples:\n") {
				t.Errorf("help %s has no Examples section", name)
			}
			flags := text[strings.Index(text, "\nFlags:\n"):]
			for line := range strings.Lines(flags) {
				// "  -o, --out" and "  -o PATH" are shorthands; "  -out" is not.
				if short, ok := strings.CutPrefix(line, "  -"); ok && !strings.HasPrefix(short, "-") && len(short) > 1 && !strings.ContainsAny(short[1:2], ", \n") {
					t.Errorf("help %s: a long flag printed with one dash: %q", name, line)
				}
			}
			golden.Check(t, "help/"+name+".txt", out.Bytes())

			// --help prints the same text (to the command's stream).
			var o2, e2 bytes.Buffer
			runMain(t.Context(), []string{name, "--help"}, streams{in: strings.NewReader(""), out: &o2, err: &e2})
			if got := o2.String() + e2.String(); got != text {
				t.Errorf("%s --help differs from help %s:\n%s", name, name, got)
			}
		})
	}
}

// TestHelpCommands: help with no command, help of a command that is not
// one, and the did-you-mean of an unknown command.
func TestHelpCommands(t *testing.T) {
	tests := []struct {
		args           []string
		code           int
		stdout, stderr string // substrings; "" = nothing asked
	}{
		{[]string{"help"}, exitOK, "addrclean help COMMAND", ""},
		{[]string{"help", "version"}, exitOK, "Usage: addrclean version", ""},
		{[]string{"help", "--help"}, exitOK, "addrclean help COMMAND", ""},
		{[]string{"help", "-h"}, exitOK, "addrclean help COMMAND", ""},
		{[]string{"version", "--help"}, exitOK, "Usage: addrclean version", ""},
		{[]string{"rnu"}, exitUsage, "", "did you mean 'addrclean run'?"},
		{[]string{"reprot", "x"}, exitUsage, "", "did you mean 'addrclean report'?"},
		{[]string{"serv"}, exitUsage, "", "did you mean 'addrclean serve'?"},
		{[]string{"help", "aply"}, exitUsage, "", "did you mean 'addrclean apply'?"},
		{[]string{"frobnicate"}, exitUsage, "", "unknown command \"frobnicate\""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := runMain(t.Context(), tt.args, streams{in: strings.NewReader(""), out: &out, err: &errb})
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tt.code, &errb)
			}
			if !strings.Contains(out.String(), tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, &out)
			}
			if !strings.Contains(errb.String(), tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, &errb)
			}
		})
	}
	var errb bytes.Buffer
	runMain(t.Context(), []string{"frobnicate"}, streams{in: strings.NewReader(""), out: &bytes.Buffer{}, err: &errb})
	if strings.Contains(errb.String(), "did you mean") {
		t.Errorf("a far-off command got a guess:\n%s", &errb)
	}
}

// helpText is 'addrclean help name'.
func helpText(t *testing.T, name string) string {
	t.Helper()
	var out bytes.Buffer
	if code := runMain(t.Context(), []string{"help", name}, streams{in: strings.NewReader(""), out: &out, err: &out}); code != exitOK {
		t.Fatalf("help %s: exit %d\n%s", name, code, &out)
	}
	return out.String()
}

// TestHelpExamplesUseRealFlags: every flag an example of any help passes
// to a command is a flag of that command (its help lists it), so the
// examples cannot rot as flags change.
func TestHelpExamplesUseRealFlags(t *testing.T) {
	flagsOf := map[string]map[string]bool{}
	known := func(cmd string) map[string]bool {
		if m, ok := flagsOf[cmd]; ok {
			return m
		}
		m := map[string]bool{"--help": true}
		text := helpText(t, cmd)
		for line := range strings.Lines(text[strings.Index(text, "\nFlags:\n"):]) {
			if rest, ok := strings.CutPrefix(line, "  -"); ok {
				for _, f := range strings.Split(strings.Fields("-" + rest)[0], ",") {
					m[f] = true
				}
				if short, long, ok := strings.Cut(strings.TrimSpace(line), ", "); ok {
					m[short], m[strings.Fields(long)[0]] = true, true
				}
			}
		}
		flagsOf[cmd] = m
		return m
	}
	examples := 0
	for _, name := range []string{"run", "apply", "report", "serve", "verify", "cache", "reference"} {
		text := helpText(t, name)
		ex := text[strings.Index(text, "\nExamples:\n"):strings.Index(text, "\nFlags:\n")]
		// Join continued lines, then take each "addrclean CMD ..." command.
		ex = strings.ReplaceAll(ex, "\\\n", " ")
		for line := range strings.Lines(ex) {
			_, cmdline, ok := strings.Cut(line, "addrclean ")
			if !ok {
				continue
			}
			f := strings.Fields(cmdline)
			examples++
			for _, arg := range f[1:] {
				if strings.HasPrefix(arg, "-") && arg != "-" && !known(f[0])[strings.SplitN(arg, "=", 2)[0]] {
					t.Errorf("help %s: the example %q passes %s, not a flag of addrclean %s", name, strings.TrimSpace(line), arg, f[0])
				}
			}
		}
	}
	if examples < 20 {
		t.Errorf("%d examples found; the helps have more", examples)
	}
}
