package cliflag

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// List collects a repeatable flag (--line-col NAME ...).
type List []string

func (l *List) String() string { return strings.Join(*l, ",") }

// Set implements flag.Value: each use adds one value.
func (l *List) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// New is a command's flag set: problems and its usage (with the flags) go
// to stderr.
func New(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		PrintDefaults(fs, stderr)
	}
	return fs
}

// Interspersed parses flags that may come before or after positional
// arguments ("run in.csv -o out.csv" as well as "run -o out.csv in.csv"), as
// users of a tool like this expect; the flag package alone stops at the first
// positional argument.
func Interspersed(fs *flag.FlagSet, args []string) ([]string, error) {
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

// WasSet reports whether the named flag was given on the command line.
func WasSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// Parse parses args with fs (interspersed: flags may follow positional
// arguments). --help prints usage and the flags to out, once, and returns
// flag.ErrHelp. A bad flag is reported on fs's output in a few lines: the
// flag package's message, the closest flag name ("did you mean
// --country?") and where the flags are listed, not the whole usage.
func Parse(fs *flag.FlagSet, args []string, usage string, out io.Writer, interspersed bool) ([]string, error) {
	fs.Usage = func() {} // the flag package calls it on every error
	var pos []string
	var err error
	if interspersed {
		pos, err = Interspersed(fs, args)
	} else {
		err = fs.Parse(args)
		pos = fs.Args()
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(out, usage)
		PrintDefaults(fs, out)
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

// PrintDefaults lists the flags of fs the way the README and the examples
// write them: "--name" (the flag package prints "-name"), a one-letter
// shorthand on the line of the flag it stands for ("-o, --out PATH"),
// the usage indented below, and the default when it is not the zero value.
func PrintDefaults(fs *flag.FlagSet, w io.Writer) {
	// A flag whose usage is "shorthand for --X" is shown with X.
	short := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) {
		if long, ok := strings.CutPrefix(f.Usage, "shorthand for --"); ok {
			short[long] = f.Name
		}
	})
	var b strings.Builder
	fs.VisitAll(func(f *flag.Flag) {
		if strings.HasPrefix(f.Usage, "shorthand for --") && fs.Lookup(strings.TrimPrefix(f.Usage, "shorthand for --")) != nil {
			return
		}
		name, usage := flag.UnquoteUsage(f)
		b.WriteString("  ")
		if s, ok := short[f.Name]; ok {
			b.WriteString(dashes(s) + ", ")
		}
		b.WriteString(dashes(f.Name))
		if name != "" {
			b.WriteString(" " + name)
		}
		b.WriteString("\n    \t")
		b.WriteString(strings.ReplaceAll(usage, "\n", "\n    \t"))
		if def := defaultText(f); def != "" {
			b.WriteString(" (default " + def + ")")
		}
		b.WriteString("\n")
	})
	fmt.Fprint(w, b.String())
}

// dashes writes a flag as it is typed: -o for one letter, --name otherwise.
func dashes(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// defaultText is the default of f as the usage shows it: quoted for a
// string, empty for a zero value (the flag package's rule).
func defaultText(f *flag.Flag) string {
	switch f.DefValue {
	case "", "0", "false", "0s", "[]":
		return ""
	}
	if g, ok := f.Value.(flag.Getter); ok {
		if _, isString := g.Get().(string); isString {
			return fmt.Sprintf("%q", f.DefValue)
		}
	}
	return f.DefValue
}
