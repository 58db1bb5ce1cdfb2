package logfmt

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Durations are logged as durations ("cache_ttl":"720h0m0s", as the flags
// take them), not as zerolog's default milliseconds (2592000000). It is a
// global of zerolog: set once, before anything logs, by importing this
// package, which only the command does.
func init() {
	zerolog.DurationFieldFormat = zerolog.DurationFormatString
}

// JSON reports whether --log-format gives one JSON object per stderr
// line: json, or auto when stderr is not a terminal.
func JSON(format string, tty bool) bool {
	return format == "json" || (format == "auto" || format == "") && !tty
}

// New builds the one logger of the process: console format on a
// terminal, one JSON object per line otherwise (or as --log-format says).
// Its error names the flag that is wrong (--log-level, --log-format).
func New(w io.Writer, tty bool, format, level string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		return zerolog.Nop(), fmt.Errorf("--log-level %q: want trace, debug, info, warn or error", level)
	}
	if !slices.Contains([]string{"auto", "", "console", "json"}, format) {
		return zerolog.Nop(), fmt.Errorf("--log-format %q: want auto, console or json", format)
	}
	out := w
	if !JSON(format, tty) {
		out = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly, NoColor: !tty}
	}
	return zerolog.New(out).Level(lvl).With().Timestamp().Logger(), nil
}

// repeatLimit is how many warnings with one message are shown; the rest
// are counted and reported once at the end (a file of blank rows would
// otherwise print one line per row).
const repeatLimit = 5

// maxRepeatKeys bounds the messages counted: they are the program's own
// constant texts, a few dozen at most.
const maxRepeatKeys = 256

// RepeatGuard is a zerolog hook that lets the first few warnings of each
// message through and counts the rest; Report tells how many were not shown.
type RepeatGuard struct {
	mu     sync.Mutex
	seen   map[string]int
	closed bool
}

// NewRepeatGuard is a guard that has seen nothing yet.
func NewRepeatGuard() *RepeatGuard { return &RepeatGuard{seen: make(map[string]int)} }

// Run implements zerolog.Hook.
func (g *RepeatGuard) Run(e *zerolog.Event, level zerolog.Level, msg string) {
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

// Report logs, once, how many warnings of each message were not shown.
func (g *RepeatGuard) Report(log zerolog.Logger) {
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
