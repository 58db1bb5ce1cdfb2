package endpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/report"
	"github.com/addrclean/addrclean/table"
	"github.com/addrclean/addrclean/writers"
)

// tableSinks are the output tables of a run: --out-table and
// --review-table, in --out-db or the input's database.
type tableSinks struct {
	u                *table.URL
	flag             string // how clash checks name the database
	outName, revName table.Name
	spec             Spec
	runTime          time.Time

	db    table.Database
	sinks []namedSink // opened, for their counts
	// checked are the tables check passed, and ddl the statements that
	// ready them, for setup.
	checked []table.Output
	ddl     []table.Statement
	// scratch: db is the empty database the checks run against in place
	// of an SQLite file still to create.
	scratch bool
}

// namedSink is a table output and how the summary names it.
type namedSink struct {
	name string
	sink *table.Sink
}

// planTables checks the table outputs of spec; nil when there are none.
func planTables(s Spec, src Source) (*tableSinks, error) {
	in, isDB := src.(database)
	named := s.OutTable != "" || s.ReviewTable != ""
	if !isDB {
		if !named {
			if s.OutDB != "" {
				return nil, usagef("--out-db names the database of --out-table and --review-table: give one of them")
			}
			return nil, nil
		}
		if s.OutDB == "" {
			return nil, usagef("--out-table and --review-table with a file INPUT need --out-db DBURL")
		}
	}
	t := &tableSinks{flag: "INPUT", spec: s, runTime: time.Now()}
	if isDB {
		t.u = in.URL()
	}
	if s.OutDB != "" {
		u, err := table.ParseURL(s.OutDB)
		if err != nil {
			return nil, fatal(fmt.Errorf("--out-db: %w", err))
		}
		t.u, t.flag = u, "--out-db"
	}
	if s.LockTimeout <= 0 {
		return nil, usagef("--lock-timeout %v: want a positive duration such as 10s", s.LockTimeout)
	}
	var err error
	if s.OutTable != "" {
		if t.outName, err = table.ParseName(s.OutTable); err != nil {
			return nil, usagef("--out-table: %w", err)
		}
	}
	if s.ReviewTable != "" {
		if t.revName, err = table.ParseName(s.ReviewTable); err != nil {
			return nil, usagef("--review-table: %w", err)
		}
	}
	if s.OutTable != "" && t.outName == t.revName {
		return nil, usagef("--out-table and --review-table are the same table %s", t.outName)
	}
	if isDB {
		for _, n := range []table.Name{t.outName, t.revName} {
			if n.Table != "" && in.IsTable(t.u, n) {
				return nil, usagef("the output table %s is the input table: input tables are never written", n)
			}
		}
	}
	if !named {
		return nil, nil
	}
	return t, nil
}

// connect opens the database of the output tables. An SQLite file that
// does not exist yet (in a directory that does) is not created here: the
// checks run against an empty scratch database in its stead, named as the
// file, and setup creates the file, so that a refused run leaves no empty
// database behind. The scratch database is SQLite's anonymous one (an
// empty name): it is in memory, so a killed run leaves none on disk either.
func (t *tableSinks) connect(ctx context.Context) error {
	u := t.u
	if u.Scheme == "sqlite" {
		if _, err := os.Lstat(u.Path); errors.Is(err, fs.ErrNotExist) {
			if fi, err := os.Stat(filepath.Dir(u.Path)); err == nil && fi.IsDir() {
				t.scratch = true
				u = &table.URL{Raw: "sqlite:", Scheme: "sqlite", Display: t.u.Display}
			}
		}
	}
	db, err := table.Open(ctx, u, table.Options{LockTimeout: t.spec.LockTimeout})
	if err != nil {
		return TableError(err)
	}
	t.db = db
	return nil
}

// dropScratch closes the scratch database, if any.
func (t *tableSinks) dropScratch() {
	if !t.scratch {
		return
	}
	if t.db != nil {
		_ = t.db.Close()
		t.db = nil
	}
	t.scratch = false
}

// close closes the database of the output tables.
func (t *tableSinks) close() {
	t.dropScratch()
	if t.db != nil {
		_ = t.db.Close()
	}
}

// outputs are the output tables, as the checks take them.
func (t *tableSinks) outputs(idName string, keyType table.Type) []table.Output {
	var outs []table.Output
	for _, s := range []struct {
		flag string
		name table.Name
		kind table.Kind
	}{{"--out-table", t.outName, table.Enriched}, {"--review-table", t.revName, table.Review}} {
		if s.name.Table != "" {
			outs = append(outs, table.Output{Flag: s.flag, Name: s.name, Key: idName, KeyType: keyType,
				Cols: table.Columns(s.kind, t.spec.MarkCached), Deletes: s.kind == table.Review})
		}
	}
	return outs
}

func keyType(src Source, idName string) table.Type {
	if in, ok := src.(database); ok {
		return in.KeyType(idName)
	}
	return table.Text
}

// check checks the output tables, changing nothing: none may be a table
// the input reads, under any spelling; each must be able to take what the
// run writes (or be created). The DDL that readies them is kept for setup,
// which runs once every other check of the run has passed.
func (t *tableSinks) check(ctx context.Context, src Source, idName string) error {
	if idName == "" {
		return usagef("--out-table and --review-table key their rows by the id column: give --id-col COLUMN")
	}
	outs := t.outputs(idName, keyType(src, idName))
	if t.outName.Table != "" {
		// The run's summary is kept beside the out-table (Record): checked
		// and created with the others, never discovered at the end.
		outs = append(outs, table.RunsOutput(t.outName))
	}
	// A database file still to create (scratch) is not the input's.
	if in, ok := src.(database); ok && !t.scratch {
		if err := table.CheckNotInput(ctx, in.Reads(idName), t.db, outs); err != nil {
			return setupError(ctx, err)
		}
	}
	stmts, err := table.Plan(ctx, t.db, outs)
	if err != nil {
		return setupError(ctx, err)
	}
	t.checked, t.ddl = outs, stmts
	return nil
}

// setup runs the DDL that check planned, in one transaction: a failure
// leaves every database as it was.
func (t *tableSinks) setup(ctx context.Context, log zerolog.Logger) error {
	if t.checked == nil {
		return errors.New("output tables set up before they were checked") // a bug of the caller's
	}
	apply := func() error { return table.Apply(ctx, t.db, t.checked, t.ddl) }
	if t.scratch {
		// Only now is the SQLite file created; another runner may have
		// made it, tables and all, since the checks: they are planned
		// again against the real file.
		t.dropScratch()
		db, err := table.Open(ctx, t.u, table.Options{LockTimeout: t.spec.LockTimeout})
		if err != nil {
			return setupError(ctx, err)
		}
		t.db = db
		apply = func() error { return table.Prepare(ctx, t.db, t.checked) }
	}
	if err := apply(); err != nil {
		return setupError(ctx, err)
	}
	log.Debug().Int("tables", len(t.checked)).Int("statements", len(t.ddl)).Msg("output tables checked and ready")
	return nil
}

// open opens a sink per output table.
func (t *tableSinks) open(ctx context.Context, src Source, header []string, idName string, log zerolog.Logger) ([]writers.Writer, error) {
	kt := keyType(src, idName)
	var outs []writers.Writer
	for _, out := range t.outputs(idName, kt) {
		kind := table.Enriched
		if out.Deletes {
			kind = table.Review
		}
		shown := "table " + out.Name.String()
		w, err := table.NewSink(ctx, t.db, out.Name, shown, table.SinkOptions{
			Kind: kind, Key: idName, KeyType: kt, KeyIndex: slices.Index(header, idName), MarkCached: t.spec.MarkCached,
			RunTime: t.runTime, Logger: log, BatchRows: t.spec.BatchRows,
		})
		if err != nil {
			for _, w := range outs {
				_ = w.Abort()
			}
			return nil, setupError(ctx, err)
		}
		outs = append(outs, w)
		t.sinks = append(t.sinks, namedSink{name: shown, sink: w})
	}
	return outs, nil
}

// shown joins a file output and a table for the summary.
func (t *tableSinks) shown(file string, n table.Name) string {
	var parts []string
	if file != "" {
		parts = append(parts, file)
	}
	if n.Table != "" {
		parts = append(parts, "table "+n.String()+" in "+t.u.Display)
	}
	return strings.Join(parts, " and ")
}

// counts are the counts of the table sinks, once closed.
func (t *tableSinks) counts() []report.TableCounts {
	var out []report.TableCounts
	for _, s := range t.sinks {
		c := s.sink.Counts()
		out = append(out, report.TableCounts{Table: s.name, Inserted: c.Inserted, Updated: c.Updated, Unchanged: c.Unchanged, Deleted: c.Deleted})
	}
	return out
}

// record keeps the run's summary in the runs table next to the
// out-table (table.RunsName). The outputs are written by now: a failure
// is logged and leaves the run's outcome as it was.
func (t *tableSinks) record(ctx context.Context, src Source, sum *report.Summary, log zerolog.Logger) {
	if t.outName.Table == "" || t.db == nil || t.scratch { // never set up: nothing to record in
		return
	}
	rn := table.RunsName(t.outName)
	// The input is never written: a runs table that is the input table
	// (or the review table) under another role is left alone.
	if in, ok := src.(database); rn == t.revName || (ok && in.IsTable(t.u, rn)) {
		log.Warn().Str("runs_table", rn.String()).Msg("the runs table would be the input or review table: the run's summary is not recorded")
		return
	}
	b, err := json.Marshal(sum)
	if err == nil {
		err = table.RecordRun(context.WithoutCancel(ctx), t.db, t.outName,
			// Finished is the moment of recording, not the summary's whole
			// second: report orders runs by it, and runs of shards one
			// after another can end within a second.
			table.Run{ID: uuid.NewString(), Started: sum.Started, Finished: time.Now().UTC(), Summary: b})
	}
	if err != nil {
		log.Error().Err(err).Str("runs_table", rn.String()).Msg("recording the run's summary")
		return
	}
	log.Debug().Str("runs_table", rn.String()).Msg("run recorded")
}
