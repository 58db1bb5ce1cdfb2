package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// barWriter is stderr while a progress bar may be drawn on it: a log line
// first clears the bar's line, so that it is not printed onto the bar, and
// the bar is drawn again below it at its next update. Bar updates take the
// same lock (progress.update), so neither cuts into the other.
type barWriter struct {
	mu    sync.Mutex
	w     io.Writer
	clear func() // clears the bar's line; nil while no bar shows
}

func (b *barWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.clear != nil {
		b.clear()
	}
	return b.w.Write(p)
}

// repeatLimit is how many warnings with one message are shown; the rest
// are counted and reported once at the end (a file of blank rows would
// otherwise print one line per row).
const repeatLimit = 5

// maxRepeatKeys bounds the messages counted: they are the program's own
// constant texts, a few dozen at most.
const maxRepeatKeys = 256

// repeatGuard is a zerolog hook that lets the first repeatLimit warnings
// of each message through and counts the rest.
type repeatGuard struct {
	mu     sync.Mutex
	seen   map[string]int
	closed bool
}

func newRepeatGuard() *repeatGuard { return &repeatGuard{seen: make(map[string]int)} }

// Run implements zerolog.Hook.
func (g *repeatGuard) Run(e *zerolog.Event, level zerolog.Level, msg string) {
	if level != zerolog.WarnLevel {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return
	}
	n, ok := g.seen[msg]
	if !ok && len(g.seen) >= maxRepeatKeys {
		return
	}
	n++
	g.seen[msg] = n
	switch {
	case n == repeatLimit:
		e.Bool("more_alike_counted", true)
	case n > repeatLimit:
		e.Discard()
	}
}

// report logs, once, how many warnings of each message were not shown.
func (g *repeatGuard) report(log zerolog.Logger) {
	g.mu.Lock()
	seen := g.seen // nil the second time; Run leaves it alone once closed
	g.seen, g.closed = nil, true
	g.mu.Unlock()
	for _, msg := range slices.Sorted(maps.Keys(seen)) {
		if n := seen[msg] - repeatLimit; n > 0 {
			log.Warn().Int("not_shown", n).Int("total", seen[msg]).Msg(fmt.Sprintf("%s: %d more like this not shown", msg, n))
		}
	}
}

// Durations are logged as durations ("cache_ttl":"720h0m0s", as the flags
// take them), not as zerolog's default milliseconds (2592000000). This is
// an output format, so cmd decides it, once, before anything logs.
func init() {
	zerolog.DurationFieldFormat = zerolog.DurationFormatString
}

// jsonLogs reports whether --log-format gives one JSON object per stderr
// line: json, or auto when stderr is not a terminal.
func jsonLogs(format string, tty bool) bool {
	return format == "json" || (format == "auto" || format == "") && !tty
}

// newLogger builds the one logger of the process: console format on a
// terminal, one JSON object per line otherwise (or as --log-format says).
func newLogger(w io.Writer, tty bool, format, level string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		return zerolog.Nop(), usageErrorf("--log-level %q: want trace, debug, info, warn or error", level)
	}
	if !slices.Contains([]string{"auto", "", "console", "json"}, format) {
		return zerolog.Nop(), usageErrorf("--log-format %q: want auto, console or json", format)
	}
	out := w
	if !jsonLogs(format, tty) {
		out = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly, NoColor: !tty}
	}
	return zerolog.New(out).Level(lvl).With().Timestamp().Logger(), nil
}
