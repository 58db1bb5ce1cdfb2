package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// listFlag collects a repeatable flag (--line-col NAME ...).
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// newFlagSet is a subcommand's flag set: problems and its usage (with the
// flags) go to stderr.
func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		printFlags(fs, stderr)
	}
	return fs
}

// flagError ends a subcommand whose flags did not parse: after --help
// (shown) with exit 0, else with exit 2 (the problem is reported).
func flagError(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return withCode(exitUsage, nil)
}

// parseInterspersed parses flags that may come before or after positional
// arguments ("run in.csv -o out.csv" as well as "run -o out.csv in.csv"), as
// users of a tool like this expect; the flag package alone stops at the first
// positional argument.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		// The flag package swallows a "--" terminator: everything after it
		// is positional, even if it looks like a flag.
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// flagWasSet reports whether the named flag was given on the command line.
func flagWasSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// splitList splits a comma-separated list, trimming blanks.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseDelimiter accepts one character or the names tab, comma, semicolon, pipe.
func parseDelimiter(s string) (rune, error) {
	switch strings.ToLower(s) {
	case "":
		return 0, nil
	case "tab", `\t`:
		return '\t', nil
	case "comma":
		return ',', nil
	case "semicolon":
		return ';', nil
	case "pipe":
		return '|', nil
	}
	r := []rune(s)
	if len(r) != 1 || r[0] == '"' || r[0] == '\r' || r[0] == '\n' {
		return 0, fmt.Errorf("--delimiter %q: want one character, or tab, comma, semicolon, pipe", s)
	}
	return r[0], nil
}

// parseFlags parses args with fs (interspersed: flags may follow positional
// arguments). --help prints usage and the flags to out, once, and returns
// flag.ErrHelp. A bad flag is reported on fs's output in a few lines: the
// flag package's message, the closest flag name ("did you mean
// --country?") and where the flags are listed, not the whole usage.
func parseFlags(fs *flag.FlagSet, args []string, usage string, out io.Writer, interspersed bool) ([]string, error) {
	fs.Usage = func() {} // the flag package calls it on every error
	var pos []string
	var err error
	if interspersed {
		pos, err = parseInterspersed(fs, args)
	} else {
		err = fs.Parse(args)
		pos = fs.Args()
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(out, usage)
		printFlags(fs, out)
		return nil, err
	case err != nil:
		if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
			if near := closestFlag(fs, strings.TrimLeft(name, "-")); near != "" {
				fmt.Fprintf(fs.Output(), "did you mean --%s?\n", near)
			}
		}
		fmt.Fprintf(fs.Output(), "Run 'addrclean %s --help' for the flags.\n", fs.Name())
		return nil, err
	}
	return pos, nil
}

// closestFlag returns the flag of fs nearest to name by edit distance, or
// "" when none is near enough to be what was meant.
func closestFlag(fs *flag.FlagSet, name string) string {
	best, bestD := "", len(name)/2+2
	fs.VisitAll(func(f *flag.Flag) {
		if d := editDistance(name, f.Name); d < bestD || d == bestD && best != "" && f.Name < best {
			best, bestD = f.Name, d
		}
	})
	if bestD > max(1, len(name)/3) && !strings.HasPrefix(best, name) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance of a and b (flag names: short).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
