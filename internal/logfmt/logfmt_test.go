package logfmt

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// One warning per blank row flooded the terminal: the first repeatLimit of
// a message are shown, the rest counted and reported once.
func TestRepeatGuard(t *testing.T) {
	var buf bytes.Buffer
	g := NewRepeatGuard()
	log := zerolog.New(&buf).Hook(g)
	for i := range 12 {
		log.Warn().Int("row", i+1).Msg("row not verified")
		log.Error().Int("row", i+1).Msg("an error is always shown")
	}
	log.Warn().Msg("once")
	g.Report(log)
	g.Report(log) // once only
	counts := make(map[string]int)
	var report map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		msg := m["message"].(string)
		counts[msg]++
		if strings.Contains(msg, "more like this") {
			report = m
		}
	}
	if counts["row not verified"] != repeatLimit || counts["an error is always shown"] != 12 || counts["once"] != 1 {
		t.Errorf("lines per message %v", counts)
	}
	if report == nil || report["message"] != "row not verified: 7 more like this not shown" || report["not_shown"] != 7.0 {
		t.Errorf("report %v", report)
	}
	if len(counts) != 4 {
		t.Errorf("messages %v, want one report line", counts)
	}
}

// TestDurationsLoggedAsDurations: a duration field reads as the flags
// write it, not as a count of milliseconds.
func TestDurationsLoggedAsDurations(t *testing.T) {
	for _, format := range []string{"json", "console"} {
		var b bytes.Buffer
		log, err := New(&b, false, format, "info")
		if err != nil {
			t.Fatal(err)
		}
		log.Info().Dur("cache_ttl", 720*time.Hour).Msg("x")
		if !strings.Contains(b.String(), "720h0m0s") || strings.Contains(b.String(), "2592000000") {
			t.Errorf("%s: %s", format, &b)
		}
	}
}

// TestNew: the format follows --log-format and the terminal; a bad level
// or format is an error naming its flag.
func TestNew(t *testing.T) {
	for _, tt := range []struct {
		format, level string
		tty, json     bool
		err           string
	}{
		{format: "auto", level: "info", tty: false, json: true},
		{format: "auto", level: "info", tty: true, json: false},
		{format: "json", level: "info", tty: true, json: true},
		{format: "console", level: "info", tty: false, json: false},
		{format: "xml", level: "info", err: `--log-format "xml"`},
		{format: "auto", level: "loud", err: `--log-level "loud"`},
		{format: "auto", level: "", err: `--log-level ""`},
	} {
		var b bytes.Buffer
		log, err := New(&b, tt.tty, tt.format, tt.level)
		if tt.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
				t.Errorf("%s/%s: err %v, want %s", tt.format, tt.level, err, tt.err)
			}
			continue
		}
		log.Info().Msg("x")
		if got := strings.HasPrefix(b.String(), "{"); err != nil || got != tt.json || JSON(tt.format, tt.tty) != tt.json {
			t.Errorf("%s tty %v: err %v, JSON %v, want %v: %q", tt.format, tt.tty, err, got, tt.json, &b)
		}
	}
}
