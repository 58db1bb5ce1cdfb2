package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"
)

// flagError ends a subcommand whose flags did not parse: after --help
// (shown) with exit 0, else with exit 2 (the problem is reported).
func flagError(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return withCode(exitUsage, nil)
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
