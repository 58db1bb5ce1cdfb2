package main

import (
	"context"
	"errors"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/pipeline"
	"github.com/addrclean/addrclean/report"
	"github.com/addrclean/addrclean/table"
)

// The cache wrapper of a run must keep the stored times of its answers:
// they are the verified_at of table outputs.
var _ pipeline.TimedCache = (*countingCache)(nil)

// tableOutputs are the output tables of the run, as the checks take them.
func (o *runOptions) tableOutputs(idName string, keyType table.Type) []table.Output {
	tr := o.tr
	var outs []table.Output
	for _, s := range []struct {
		flag string
		name table.Name
		kind table.Kind
	}{{"--out-table", tr.outName, table.Enriched}, {"--review-table", tr.revName, table.Review}} {
		if s.name.Table != "" {
			outs = append(outs, table.Output{Flag: s.flag, Name: s.name, Key: idName, KeyType: keyType,
				Cols: table.Columns(s.kind, o.markCached), Deletes: s.kind == table.Review})
		}
	}
	return outs
}

// prepareTables checks the output tables and readies them, before the
// journal is touched and before the first call is paid: none may be a
// table the input reads, under any spelling; each must be able to take
// what the run writes (or be created); then the DDL runs in one
// transaction. A refusal leaves every database as it was.
func (o *runOptions) prepareTables(ctx context.Context, idName string, log zerolog.Logger) error {
	tr := o.tr
	if !tr.hasOutputs() {
		return nil
	}
	if idName == "" {
		return usageErrorf("--out-table and --review-table key their rows by the id column: give --id-col COLUMN")
	}
	keyType := table.Text
	if tr.source != nil {
		keyType = table.KeyType(tr.source.Columns(), idName)
	}
	outs := o.tableOutputs(idName, keyType)
	if tr.outName.Table != "" {
		// The run's summary is kept beside the out-table (recordRun): checked
		// and created with the others, never discovered at the end.
		outs = append(outs, table.RunsOutput(tr.outName))
	}
	if o.isTableSource() {
		in := table.Input{DB: tr.srcDB, Table: tr.srcName, Query: tr.query, Shown: "--query"}
		if tr.srcName.Table != "" {
			in.Query = table.TableQuery(tr.srcName, tr.where, idName)
			in.Shown = "--table " + tr.srcName.String()
		}
		if err := table.CheckNotInput(ctx, in, tr.outDB, outs); err != nil {
			return tableSetupError(ctx, err)
		}
	}
	if err := table.Prepare(ctx, tr.outDB, outs); err != nil {
		return tableSetupError(ctx, err)
	}
	log.Debug().Int("tables", len(outs)).Msg("output tables checked and ready")
	return nil
}

// tableSetupError is tableError for the checks and set-up of the output
// tables: a refusal is a usage error, an interrupt exit 130 (the set-up is
// one transaction: nothing was changed).
func tableSetupError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return withCode(exitInterrupted, errors.New("interrupted while checking and setting up the output tables: nothing was changed"))
	}
	return tableError(err)
}

// tableCounts returns the counts of the run's table sinks, once closed.
func (o *runOptions) tableCounts() []report.TableCounts {
	if o.tr == nil {
		return nil
	}
	var out []report.TableCounts
	for _, s := range o.tr.sinks {
		c := s.sink.Counts()
		out = append(out, report.TableCounts{Table: s.name, Inserted: c.Inserted, Updated: c.Updated, Unchanged: c.Unchanged, Deleted: c.Deleted})
	}
	return out
}

// warnURLPassword warns, once, when a database URL holds a password: the
// command line is readable by every user of the machine (ps) for as long
// as the command runs.
func warnURLPassword(log zerolog.Logger, urls ...*table.URL) {
	for _, u := range urls {
		if u != nil && u.HasPassword {
			log.Warn().Msg(urlPasswordWarning)
			return
		}
	}
}

const urlPasswordWarning = "the DBURL holds a password, which every user of this machine can read in the process list " +
	"while the command runs: put it in PGPASSWORD or ~/.pgpass instead"

// checkFinalTable refuses an apply --final-table that is a table the
// input reads, or the run's out-table or review table, whatever the
// spelling.
func checkFinalTable(ctx context.Context, db table.Database, j table.Join, input table.Name, final table.Name) error {
	in := table.Input{DB: db, Table: input, Query: j.Input, Shown: "--query"}
	if input.Table != "" {
		in.Shown = "--table " + input.String()
	}
	out := table.Output{Flag: "--final-table", Name: final}
	if err := table.CheckNotInput(ctx, in, db, []table.Output{out}); err != nil {
		return tableSetupError(ctx, err)
	}
	f, ok, err := db.Resolve(ctx, final)
	if err != nil {
		return tableSetupError(ctx, err)
	}
	if !ok {
		return nil // to be created: none of the others
	}
	for _, o := range []struct {
		flag string
		n    table.Name
	}{{"--out-table", j.Out}, {"--review-table", j.Review}} {
		r, ok, err := db.Resolve(ctx, o.n)
		if err != nil {
			return tableSetupError(ctx, err)
		}
		if ok && r.ID == f.ID {
			return usageErrorf("--final-table %s is table %s, the run's %s %s: name another table", final, f.Name, o.flag, o.n)
		}
	}
	return nil
}
