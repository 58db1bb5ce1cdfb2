package main

import (
	"io"
	"os"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newLogger builds the one logger of the process: console format on a
// terminal, one JSON object per line otherwise (or as --log-format says).
func newLogger(w io.Writer, format, level string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		return zerolog.Nop(), usageErrorf("--log-level %q: want trace, debug, info, warn or error", level)
	}
	switch format {
	case "auto", "":
		if isTerminal(w) {
			format = "console"
		} else {
			format = "json"
		}
	case "console", "json":
	default:
		return zerolog.Nop(), usageErrorf("--log-format %q: want auto, console or json", format)
	}
	out := w
	if format == "console" {
		out = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly, NoColor: !isTerminal(w)}
	}
	return zerolog.New(out).Level(lvl).With().Timestamp().Logger(), nil
}
