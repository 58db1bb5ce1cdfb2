package table

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"
)

// A runs table sits next to a run's out-table and keeps one row per run
// that wrote to it: its id, when it started and finished, and its summary
// (the JSON of the run's --summary file), so that 'addrclean report' over
// the out-table can show what the run cost without the summary file.
//
//	<out-table>_runs (run_id text PRIMARY KEY, started timestamp,
//	                  finished timestamp, summary text)

// RunsSuffix makes the name of the runs table of an out-table.
const RunsSuffix = "_runs"

// RunsName is the runs table of out-table n: in n's schema, n's name with
// RunsSuffix.
func RunsName(n Name) Name { return Name{Schema: n.Schema, Table: n.Table + RunsSuffix} }

// Run is one row of a runs table.
type Run struct {
	ID                string
	Started, Finished time.Time
	// Summary is the run's summary, JSON.
	Summary []byte
}

// runsKey is the key column of a runs table.
const runsKey = "run_id"

var runsColumns = []Column{{Name: "started", Type: Timestamp}, {Name: "finished", Type: Timestamp}, {Name: "summary", Type: Text}}

// ErrNoRuns marks an out-table without runs table, or with an empty one:
// written by a version before runs tables, or by no finished run.
var ErrNoRuns = errors.New("no run recorded")

// RunsOutput is the runs table of out-table n as an output of a run, so that
// it is checked against the input and created with the other output tables,
// before the first call is paid.
func RunsOutput(n Name) Output {
	return Output{Flag: "--out-table's runs table", Name: RunsName(n), Key: runsKey, KeyType: Text, Cols: runsColumns}
}

// RecordRun upserts r into the runs table of out-table n in db, creating
// the table if it is missing.
func RecordRun(ctx context.Context, db Database, n Name, r Run) error {
	rn := RunsName(n)
	t, err := OpenTarget(ctx, db, rn, runsKey, Text, runsColumns)
	if err != nil {
		return fmt.Errorf("runs table %s: %w", rn, err)
	}
	defer t.Close()
	rec := Record{Key: r.ID, Values: []any{r.Started.UTC(), r.Finished.UTC(), string(r.Summary)}}
	if _, err := t.Write(ctx, []Record{rec}, nil); err != nil {
		return fmt.Errorf("runs table %s: %w", rn, err)
	}
	return nil
}

// Runs returns the summaries of the runs recorded for out-table n in db,
// the run that finished last first (ties by run id, descending), read as
// they are needed: a caller that stops early reads no further. Its first
// pair holds an error wrapping ErrNoRuns when there is no runs table or
// an empty one.
func Runs(ctx context.Context, db Database, n Name) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		rn := RunsName(n)
		if _, err := db.Columns(ctx, rn); errors.Is(err, ErrNoTable) {
			yield(nil, fmt.Errorf("%w: no table %s", ErrNoRuns, rn))
			return
		} else if err != nil {
			yield(nil, fmt.Errorf("runs table %s: %w", rn, err))
			return
		}
		rows, err := db.Select(ctx, fmt.Sprintf("SELECT %s FROM %s ORDER BY %s DESC, %s DESC",
			QuoteIdent("summary"), rn.SQL(), QuoteIdent("finished"), QuoteIdent(runsKey)))
		if err != nil {
			yield(nil, fmt.Errorf("runs table %s: %w", rn, err))
			return
		}
		defer rows.Close()
		for read := 0; ; read++ {
			cells, err := rows.Next(ctx)
			switch {
			case errors.Is(err, io.EOF) && read == 0:
				yield(nil, fmt.Errorf("%w: table %s is empty", ErrNoRuns, rn))
				return
			case errors.Is(err, io.EOF):
				return
			case err != nil:
				yield(nil, fmt.Errorf("runs table %s: %w", rn, err))
				return
			}
			if !yield([]byte(cells[0]), nil) {
				return
			}
		}
	}
}
