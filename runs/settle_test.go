package runs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/journal"
	"github.com/addrclean/addrclean/pipeline"
	"github.com/addrclean/addrclean/runstats"
	"github.com/addrclean/addrclean/writers"
)

// output records how a run ended it.
type output struct {
	closeErr        error
	closed, aborted bool
}

func (o *output) Write(context.Context, writers.Result) error { return nil }
func (o *output) Close() error {
	o.closed = true
	return o.closeErr
}
func (o *output) Abort() error {
	o.aborted = true
	return nil
}

func TestSettle(t *testing.T) {
	diskFull := errors.New("disk full")
	tests := []struct {
		name      string
		runErr    error
		st        runstats.Stats
		rows      int  // rows in the journal
		keep      bool // --keep-journal
		closeErr  error
		end       End
		closed    bool // the outputs were finished, not aborted
		resumable bool
		left      bool // a journal file is left
	}{
		{name: "finished", st: runstats.Stats{Complete: true, RowsWritten: 1}, rows: 1, end: Finished, closed: true},
		{name: "finished, --keep-journal", st: runstats.Stats{Complete: true, RowsWritten: 1}, rows: 1, keep: true,
			end: Finished, closed: true, left: true},
		{name: "interrupted", runErr: context.Canceled, rows: 1, end: Interrupted, closed: true, resumable: true, left: true},
		{name: "interrupted by a signal seen", st: runstats.Stats{Interrupted: true}, rows: 1, end: Interrupted, closed: true,
			resumable: true, left: true},
		{name: "interrupted before any row", runErr: context.Canceled, end: Interrupted, closed: true},
		{name: "service unavailable", runErr: fmt.Errorf("x: %w", pipeline.ErrServiceUnavailable), rows: 1,
			end: Unavailable, closed: true, resumable: true, left: true},
		{name: "too many errors", runErr: pipeline.ErrTooManyErrors, rows: 1, end: TooManyErrors, closed: true,
			resumable: true, left: true},
		{name: "unreachable", runErr: fmt.Errorf("x: %w", pipeline.ErrServiceUnreachable), end: Unreachable},
		{name: "fatal after the last row keeps the journal", runErr: errors.New("boom"),
			st: runstats.Stats{Complete: true}, rows: 1, end: Failed, resumable: true, left: true},
		{name: "an output not finished keeps the journal", st: runstats.Stats{Complete: true}, rows: 1, closeErr: diskFull,
			end: OutputsFailed, closed: true, resumable: true, left: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.csv.journal")
			j, err := journal.Create(context.Background(), path, journal.Meta{})
			if err != nil {
				t.Fatal(err)
			}
			for row := 1; row <= tt.rows; row++ {
				if err := j.Record(journal.Entry{Row: row, Key: uint64(row), Err: "no address", Kind: "input"}); err != nil {
					t.Fatal(err)
				}
			}
			var logs bytes.Buffer
			r := &Run{j: j, keep: tt.keep, log: zerolog.New(&logs)}
			first, second := &output{closeErr: tt.closeErr}, &output{}
			st := tt.st
			got := r.Settle([]writers.Writer{first, second}, &st, tt.runErr)
			r.Abandon() // after Settle: nothing more
			if got.End != tt.end || got.Resumable != tt.resumable {
				t.Errorf("Settle = %+v, want end %d, resumable %v", got, tt.end, tt.resumable)
			}
			if tt.closeErr != nil {
				if !errors.Is(got.Err, tt.closeErr) || !second.aborted {
					t.Errorf("err %v; the output after the failed one aborted: %v", got.Err, second.aborted)
				}
			} else if first.closed != tt.closed || second.closed != tt.closed || first.aborted == tt.closed {
				t.Errorf("outputs closed %v %v, aborted %v; want closed %v", first.closed, second.closed, first.aborted, tt.closed)
			}
			if _, err := os.Stat(path); (err == nil) != tt.left {
				t.Errorf("journal left: %v, want %v", err == nil, tt.left)
			}
			if tt.resumable && !strings.Contains(logs.String(), "run the same command with --resume to continue") {
				t.Errorf("the log does not say how to go on:\n%s", &logs)
			}
		})
	}
}

// A run refused before it ran leaves no empty journal behind, and keeps one
// that holds rows.
func TestAbandon(t *testing.T) {
	for _, rows := range []int{0, 1} {
		path := filepath.Join(t.TempDir(), "j")
		j, err := journal.Create(context.Background(), path, journal.Meta{})
		if err != nil {
			t.Fatal(err)
		}
		if rows > 0 {
			if err := j.Record(journal.Entry{Row: 1, Key: 1, Err: "no address", Kind: "input"}); err != nil {
				t.Fatal(err)
			}
		}
		(&Run{j: j, log: zerolog.Nop()}).Abandon()
		if _, err := os.Stat(path); (err == nil) != (rows > 0) {
			t.Errorf("%d rows: journal left %v", rows, err == nil)
		}
	}
	(&Run{}).Abandon() // no journal: nothing to do
}

// dupOutput is an enriched output that counts duplicates.
type dupOutput struct{ output }

func (dupOutput) Duplicates() runstats.Duplicates { return runstats.Duplicates{Groups: 2} }

// The summary's duplicates come from the output that counts them, once it
// is finished.
func TestSettleDuplicates(t *testing.T) {
	for _, runErr := range []error{nil, errors.New("boom")} {
		var st runstats.Stats
		(&Run{log: zerolog.Nop()}).Settle([]writers.Writer{&output{}, &dupOutput{}}, &st, runErr)
		if got := st.Duplicates != nil && st.Duplicates.Groups == 2; got != (runErr == nil) {
			t.Errorf("run error %v: duplicates %+v", runErr, st.Duplicates)
		}
	}
}

// TestSettleDamagedJournal: a journal cut short or zeroed, deleted or
// replaced while the run wrote to it is not left for a --resume that would
// refuse it: a damaged one is removed, another file at its path is left
// alone, and the log says the next run starts from the first row.
func TestSettleDamagedJournal(t *testing.T) {
	tests := map[string]struct {
		damage func(p string) error
		left   string // what is at the path after Settle: "" nothing
	}{
		"cut to zero": {func(p string) error { return os.Truncate(p, 0) }, ""},
		"pages zeroed": {func(p string) error {
			fi, err := os.Stat(p)
			if err != nil {
				return err
			}
			return os.WriteFile(p, make([]byte, fi.Size()), 0o600)
		}, ""},
		"deleted": {os.Remove, ""},
		"replaced": {func(p string) error {
			if err := os.WriteFile(p+".new", []byte("theirs"), 0o600); err != nil {
				return err
			}
			return os.Rename(p+".new", p)
		}, "theirs"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			// An interrupted run's journal, resumed: its first rows are in
			// the file only, not in this run's WAL, which would write them
			// back.
			path := filepath.Join(t.TempDir(), "out.csv.journal")
			j, err := journal.Create(context.Background(), path, journal.Meta{})
			if err != nil {
				t.Fatal(err)
			}
			record := func(from, to int) {
				for row := from; row <= to; row++ {
					if err := j.Record(journal.Entry{Row: row, Key: uint64(row), Err: "no address", Kind: "input"}); err != nil {
						t.Fatal(err)
					}
				}
			}
			record(1, 300)
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			if j, err = journal.Open(context.Background(), path); err != nil {
				t.Fatal(err)
			}
			if err := j.Continue(); err != nil {
				t.Fatal(err)
			}
			record(301, 305)
			if err := tt.damage(path); err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			r := &Run{j: j, log: zerolog.New(&logs)}
			st := runstats.Stats{Interrupted: true}
			if got := r.Settle(nil, &st, nil); got.Resumable {
				t.Errorf("Settle = %+v: a journal lost or damaged is no journal to resume", got)
			}
			b, err := os.ReadFile(path)
			if string(b) != tt.left || (tt.left == "") != errors.Is(err, os.ErrNotExist) {
				t.Errorf("at the path after Settle: %d bytes, %v; want %q", len(b), err, tt.left)
			}
			if !strings.Contains(logs.String(), "the next run starts from the first row") {
				t.Errorf("the log does not say what the next run does:\n%s", &logs)
			}
		})
	}
}

// A run stopped before its first row over a journal an earlier run left:
// what Outcome says is what the next run finds. --restart discards the
// rows as asked (the next run without it is not refused); --resume keeps
// them, saying how to go on; a refusal (Abandon) leaves them.
func TestSettleBeforeFirstRow(t *testing.T) {
	id := Identity{BaseURL: "https://api.example.com"}
	who := func() (Identity, error) { return id, nil }
	tests := []struct {
		name      string
		policy    Policy
		refused   bool // Abandon, not Settle
		resumable bool
		rows      int64 // rows the journal holds after the run, -1: none left
	}{
		{name: "--restart, interrupted", policy: Policy{Restart: true}, rows: -1},
		{name: "--resume, interrupted", policy: Policy{Resume: true}, resumable: true, rows: 1},
		{name: "--restart, refused", policy: Policy{Restart: true}, refused: true, rows: 1},
		{name: "--resume, refused", policy: Policy{Resume: true}, refused: true, rows: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.csv.journal")
			interrupted(t, path, id.meta())
			p := tt.policy
			p.Mode, p.Live = "auto", true
			var logs bytes.Buffer
			r, err := p.Open(context.Background(), path, "", who, nil, zerolog.New(&logs))
			if err != nil {
				t.Fatal(err)
			}
			if tt.refused {
				r.Abandon()
				if strings.Contains(logs.String(), "run the same command") {
					t.Errorf("a refused run is told to run the same command again:\n%s", &logs)
				}
			} else {
				st := runstats.Stats{}
				got := r.Settle(nil, &st, context.Canceled)
				if got.End != Interrupted || got.Resumable != tt.resumable {
					t.Errorf("Settle = %+v, want interrupted, resumable %v", got, tt.resumable)
				}
				if tt.resumable != strings.Contains(logs.String(), "run the same command with --resume to continue") {
					t.Errorf("resumable %v, the log:\n%s", tt.resumable, &logs)
				}
			}
			var rows int64 = -1
			if _, err := os.Stat(path); err == nil {
				j, err := journal.Open(context.Background(), path)
				if err != nil {
					t.Fatal(err)
				}
				rows = j.Info().Rows
				_ = j.Close()
			}
			if rows != tt.rows {
				t.Errorf("the journal holds %d rows after the run (-1: none left), want %d", rows, tt.rows)
			}
			next, err := Policy{Mode: "auto", Live: true, Resume: tt.resumable || tt.refused}.Open(context.Background(), path, "", who, nil, zerolog.Nop())
			if err != nil {
				t.Fatalf("the next run: %v", err)
			}
			next.Abandon()
		})
	}
}

// TestRecordFree: against the embedded service a row's record is queued
// (its answer cost no call), so rows recorded one after another do not
// commit once each as a live service's must; an interrupted run keeps
// them all. Not with a cache: the pipeline writes it after the journal, and
// a queued record let the cache's commit come first, so that a row a kill
// caught in between was answered from the cache by the resumed run (its
// av_cached true where an uninterrupted run writes false).
func TestRecordFree(t *testing.T) {
	const rows = 300
	for _, tt := range []struct {
		name        string
		live, cache bool
		min, max    int64 // commits
		baseURL     string
	}{
		{name: "live", live: true, min: rows, max: rows, baseURL: "https://api.example.com"},
		{name: "live, --cache", live: true, cache: true, min: rows, max: rows, baseURL: "https://api.example.com"},
		{name: "embedded", min: 1, max: rows/256 + 2},
		{name: "embedded, --cache", cache: true, min: rows, max: rows},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.csv.journal")
			id := Identity{Input: journal.Input{Path: "/in.csv", Size: 1, SHA256: "ab"}, BaseURL: tt.baseURL}
			r, err := Policy{Mode: "on", Live: tt.live, Cache: tt.cache}.Open(context.Background(), path, "",
				func() (Identity, error) { return id, nil }, nil, zerolog.Nop())
			if err != nil {
				t.Fatal(err)
			}
			defer r.Abandon()
			for row := 1; row <= rows; row++ {
				err := r.Journal().Record(journal.Entry{Row: row, Key: uint64(row), Err: "service answered 400", Kind: "permanent"})
				if err != nil {
					t.Fatal(err)
				}
			}
			if c := r.j.Commits(); c < tt.min || c > tt.max {
				t.Errorf("%d rows recorded one after another took %d commits, want %d to %d", rows, c, tt.min, tt.max)
			}
			st := runstats.Stats{Interrupted: true}
			if got := r.Settle([]writers.Writer{&output{}}, &st, context.Canceled); got.End != Interrupted {
				t.Fatalf("Settle = %+v", got)
			}
			j, err := journal.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			if info := j.Info(); info.Rows != rows || info.Damaged != 0 {
				t.Fatalf("the journal kept %+v, want %d rows", info, rows)
			}
		})
	}
}
