package main

import (
	_ "embed"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// The help of each command, above the list of its flags (which printFlags
// writes from the FlagSet, so that defaults cannot drift from the code).
// Kept as text files: they are prose, edited as prose.
var (
	//go:embed help/addrclean.txt
	usageText string
	//go:embed help/run.txt
	runUsage string
	//go:embed help/apply.txt
	applyUsage string
	//go:embed help/report.txt
	reportUsage string
	//go:embed help/serve.txt
	serveUsage string
	//go:embed help/verify.txt
	verifyUsage string
	//go:embed help/cache.txt
	cacheUsage string
	//go:embed help/reference.txt
	referenceUsage string
)

// printFlags lists the flags of fs the way the README and the examples
// write them: "--name" (the flag package prints "-name"), a one-letter
// shorthand on the line of the flag it stands for ("-o, --out PATH"),
// the usage indented below, and the default when it is not the zero value.
func printFlags(fs *flag.FlagSet, w io.Writer) {
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

// closestCommand returns the name in names nearest to name by edit
// distance (a swap of two neighbouring letters counting one), or "" when
// none is near enough to be what was meant: "rnu" gives "run".
func closestCommand(name string, names []string) string {
	name = strings.ToLower(name)
	best, bestD := "", max(1, len(name)/3)+1
	for _, n := range slices.Sorted(slices.Values(names)) {
		d := editDistance(name, n)
		if transposed(name, n) {
			d = 1
		}
		if d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// transposed reports whether a and b differ by one swap of neighbouring
// letters, the commonest typo ("rnu"); Levenshtein counts it as two.
func transposed(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:]
}
