package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/journal"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/runs"
	"github.com/addrclean/addrclean/table"
	_ "github.com/addrclean/addrclean/table/postgres" // postgres:// and postgresql://
	_ "github.com/addrclean/addrclean/table/sqlite"   // sqlite:
	"github.com/addrclean/addrclean/writers"
)

// tableOptions are the flags of 'addrclean run' about database tables.
type tableOptions struct {
	table, query, where          string
	outTable, reviewTable, outDB string
	lockTimeout                  time.Duration
}

func addTableFlags(fs *flag.FlagSet, t *tableOptions) {
	fs.StringVar(&t.table, "table", "", "with a DBURL INPUT: read table `NAME` (or SCHEMA.NAME), ordered by --id-col")
	fs.StringVar(&t.query, "query", "", "with a DBURL INPUT: read the rows of this `SELECT` (give it an ORDER BY for --resume)")
	fs.StringVar(&t.where, "where", "", "with --table: only the rows matching this SQL `CONDITION`, as in --where \"updated_at > '2025-01-01'\"")
	fs.StringVar(&t.outTable, "out-table", "", "upsert the enriched results (id + av_ columns + verified_at) into table `NAME`, created if missing")
	fs.StringVar(&t.reviewTable, "review-table", "", "upsert the rows to review into table `NAME`, created if missing; rows no longer to review leave it")
	fs.StringVar(&t.outDB, "out-db", "", "`DBURL` of the database of --out-table and --review-table (default: the INPUT's database)")
	fs.DurationVar(&t.lockTimeout, "lock-timeout", table.DefaultLockTimeout, "the longest a set-up or write of an output table waits for a lock before the run stops with an error")
}

// tableBatchRows, when positive, overrides table.DefaultBatchRows; tests
// make batches small so that a killed run has committed some.
var tableBatchRows int

// tableRun is the database side of a run: a table or query as the input,
// tables as outputs, or both.
type tableRun struct {
	src      *table.URL // nil when the input is a file
	srcName  table.Name
	out      *table.URL // the database of the table outputs; nil when none
	outName  table.Name
	revName  table.Name
	query    string // --query
	where    string // --where
	identity string // the source for the journal: URL without password, and what is read
	runTime  time.Time

	srcDB, outDB table.Database
	source       *table.Source
	sinks        []namedSink // the table outputs, for their counts
}

// namedSink is a table output and how the summary names it.
type namedSink struct {
	name string
	sink *table.Sink
}

func (t *tableRun) hasOutputs() bool { return t != nil && t.out != nil }

// isTableSource reports a run whose input is a database.
func (o *runOptions) isTableSource() bool { return o.tr != nil && o.tr.src != nil }

// setupTables checks the table flags and, for a database INPUT, replaces
// o.input with its spelling without a password, so that nothing printed
// later (logs, errors, summaries) can show one.
func (o *runOptions) setupTables() error {
	t := o.tables
	if !table.IsURL(o.input) {
		for _, f := range []struct{ name, v string }{{"--table", t.table}, {"--query", t.query}, {"--where", t.where}} {
			if f.v != "" {
				return usageErrorf("%s reads from a database: INPUT must then be a DBURL (postgres://user@host/db or sqlite:PATH)", f.name)
			}
		}
		if t.outTable == "" && t.reviewTable == "" {
			if t.outDB != "" {
				return usageErrorf("--out-db names the database of --out-table and --review-table: give one of them")
			}
			return nil
		}
		if t.outDB == "" {
			return usageErrorf("--out-table and --review-table with a file INPUT need --out-db DBURL")
		}
	}
	tr := &tableRun{runTime: time.Now()}
	if table.IsURL(o.input) {
		u, err := table.ParseURL(o.input)
		if err != nil {
			return withCode(exitFatal, err)
		}
		tr.src, tr.query, tr.where = u, t.query, t.where
		switch {
		case (t.table == "") == (t.query == ""):
			return usageErrorf("a database INPUT needs --table NAME or --query \"SELECT ...\" (one of them)")
		case t.where != "" && t.table == "":
			return usageErrorf("--where goes with --table; with --query, write the condition in the query")
		case strings.TrimSpace(o.idCol) == "":
			return usageErrorf("a database INPUT needs --id-col COLUMN: the id keys the results")
		}
		if t.table != "" {
			if tr.srcName, err = table.ParseName(t.table); err != nil {
				return usageErrorf("--table: %w", err)
			}
			tr.identity = u.Display + " table " + tr.srcName.String()
			o.input = tr.identity
			if t.where != "" {
				tr.identity += " where " + t.where
			}
		} else {
			tr.identity = u.Display + " query " + t.query
			o.input = u.Display + " (query)"
		}
		if o.out == "" && t.outTable == "" && !o.dryRun {
			return usageErrorf("a database INPUT needs --out-table NAME or -o PATH for its results")
		}
		tr.out = u
	}
	if t.outDB != "" {
		u, err := table.ParseURL(t.outDB)
		if err != nil {
			return withCode(exitFatal, fmt.Errorf("--out-db: %w", err))
		}
		tr.out = u
	}
	if t.outTable == "" && t.reviewTable == "" {
		tr.out = nil
	}
	if t.lockTimeout <= 0 {
		return usageErrorf("--lock-timeout %v: want a positive duration such as 10s", t.lockTimeout)
	}
	var err error
	if t.outTable != "" {
		if tr.outName, err = table.ParseName(t.outTable); err != nil {
			return usageErrorf("--out-table: %w", err)
		}
	}
	if t.reviewTable != "" {
		if tr.revName, err = table.ParseName(t.reviewTable); err != nil {
			return usageErrorf("--review-table: %w", err)
		}
	}
	if t.outTable != "" && tr.outName == tr.revName {
		return usageErrorf("--out-table and --review-table are the same table %s", tr.outName)
	}
	if tr.src != nil && tr.out != nil && sameDatabase(tr.src, tr.out) && t.table != "" {
		for _, n := range []table.Name{tr.outName, tr.revName} {
			if n == tr.srcName {
				return usageErrorf("the output table %s is the input table: input tables are never written", n)
			}
		}
	}
	o.tr = tr
	return nil
}

// tableError sorts an error of a database: what the user must fix in the
// flags (a missing table or column, a query the database refuses) is a
// usage error, anything else (connection, password) is fatal.
func tableError(err error) error {
	var me *readers.MappingError
	switch {
	case errors.Is(err, table.ErrNoTable), errors.Is(err, table.ErrNoColumn), errors.Is(err, table.ErrBadQuery),
		errors.Is(err, table.ErrInputTable), errors.Is(err, table.ErrRefused), errors.As(err, &me):
		return withCode(exitUsage, err)
	}
	return withCode(exitFatal, err)
}

// openInput opens the run's input: a file as readers.Open does, or a table
// or query. The output database is opened before the query starts: SQLite
// must be put in WAL mode before a reader holds the file.
func (o *runOptions) openInput(ctx context.Context, ropts readers.Options, spec readers.MappingSpec) (readers.Reader, error) {
	return o.openSource(ctx, ropts, spec, ropts.Logger, true)
}

// openSource opens the input, a file or a table or query, and with
// outputs the database of the output tables too. The input's database
// is opened first, so that a missing SQLite input is not created as an
// empty output database.
func (o *runOptions) openSource(ctx context.Context, ropts readers.Options, spec readers.MappingSpec, log zerolog.Logger, outputs bool) (readers.Reader, error) {
	tr := o.tr
	if o.isTableSource() {
		db, err := table.Open(ctx, tr.src, table.Options{ReadOnly: true})
		if err != nil {
			return nil, readError(ctx, err)
		}
		tr.srcDB = db
	}
	if outputs && tr.hasOutputs() {
		db, err := table.Open(ctx, tr.out, table.Options{LockTimeout: o.tables.lockTimeout})
		if err != nil {
			return nil, tableError(err)
		}
		tr.outDB = db
	}
	if !o.isTableSource() {
		src, err := readers.Open(ctx, o.input, ropts)
		if err != nil {
			return nil, inputError(err)
		}
		return src, nil
	}
	src, err := tr.openSource(ctx, spec, o.input, log)
	if err != nil {
		return nil, readError(ctx, err)
	}
	return src, nil
}

// tablePageRows and tableRetry, when set, override the table package's
// page size and retry of a lost connection: tests make them small.
var (
	tablePageRows int
	tableRetry    table.Retry
)

// openSource starts reading the table or query from tr.srcDB: a table in
// keyset pages of its id, a query copied whole to a local file first, so
// that no transaction stays open while rows are verified.
func (tr *tableRun) openSource(ctx context.Context, spec readers.MappingSpec, name string, log zerolog.Logger) (*table.Source, error) {
	db := tr.srcDB
	opts := table.SourceOptions{Logger: log, PageRows: tablePageRows, Retry: tableRetry}
	var err error
	if tr.srcName.Table != "" {
		cols, err := db.Columns(ctx, tr.srcName)
		if err != nil {
			return nil, err
		}
		m, err := readers.NewMapper(table.Names(cols), spec)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		// The rows are read in id order, so that they are numbered alike in
		// every run and a resumed run finds its journal's rows.
		opts.Key = m.Columns()["id"]
		tr.source, err = table.OpenTable(ctx, db, tr.srcName, tr.where, name, opts)
		if err != nil {
			return nil, err
		}
		return tr.source, nil
	}
	if tr.source, err = table.OpenQuery(ctx, db, tr.query, name, opts); err != nil {
		return nil, err
	}
	if m, err := readers.NewMapper(tr.source.Header(), spec); err == nil {
		tr.source.UseKey(m.Columns()["id"])
	}
	return tr.source, nil
}

// readError sorts an error of opening the input as tableError does, except
// that an interrupted read is an interrupted run (exit 130), whatever the
// driver made of the cancellation.
func readError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return withCode(exitInterrupted, fmt.Errorf("interrupted while reading the input; nothing was verified: run the same command again"))
	}
	return tableError(err)
}

// closeTables closes the databases of the run.
func (o *runOptions) closeTables() {
	if o.tr == nil {
		return
	}
	for _, db := range []table.Database{o.tr.srcDB, o.tr.outDB} {
		if db != nil {
			_ = db.Close()
		}
	}
}

// resolveOutputs is outputPaths, except that a database input has no file
// outputs unless -o or --review names them.
func (o *runOptions) resolveOutputs() (out, review string, err error) {
	if !o.isTableSource() {
		return o.outputPaths()
	}
	out, review = o.out, o.review
	for _, p := range []struct{ flag, path string }{{"--out", out}, {"--review", review}} {
		if p.path == "" {
			continue
		}
		if _, err := writers.FormatFromPath(p.path); err != nil {
			return "", "", usageErrorf("%s %s: %w", p.flag, p.path, err)
		}
	}
	if review == "-" {
		return "", "", usageErrorf("--review cannot be stdout; give it a path")
	}
	return out, review, nil
}

// journalPathFor is the journal beside the file outputs, or, for a run
// whose outputs are all tables, one in the user's cache directory named
// after those tables.
func (o *runOptions) journalPathFor(out, review string) string {
	if (out != "" && out != "-") || review != "" {
		if out == "" {
			out = "-"
		}
		return runs.JournalPath(out, review)
	}
	tr := o.tr
	id := "-\x00" + tr.identity // -o - alone: the journal goes with the source
	if tr.hasOutputs() {
		id = tr.out.Display + "\x00" + tr.outName.String() + "\x00" + tr.revName.String()
	}
	if sh := o.shard.String(); sh != "" {
		// Shards of one set run side by side on one machine too: each
		// keeps its own journal, and locks only its own.
		id += "\x00shard " + sh
	}
	h := sha256.Sum256([]byte(id))
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "addrclean", "journals")
	_ = os.MkdirAll(dir, 0o700)
	return filepath.Join(dir, "tables-"+hex.EncodeToString(h[:8])+".journal")
}

// inputIdentity is what the journal records of the input: a file by its
// content; a table or query by its database and text (its rows are checked
// one by one: a journalled row is used only for the same address).
func (o *runOptions) inputIdentity(ctx context.Context) (journal.Input, error) {
	if o.isTableSource() {
		return journal.Input{Path: o.tr.identity}, nil
	}
	return runs.HashInput(ctx, o.input)
}

// tableMeta adds the source's identity to the journal's options, where a
// resume compares it.
func (o *runOptions) tableMeta(opts map[string]string) {
	if o.isTableSource() {
		opts["source"] = o.tr.identity
	}
}

// openAllOutputs opens the file outputs named (both, for a file input) and
// the table outputs.
func (o *runOptions) openAllOutputs(ctx context.Context, src readers.Reader, mapper *readers.Mapper,
	outPath, reviewPath string, opts writers.Options, log zerolog.Logger) ([]writers.Writer, error) {
	var outs []writers.Writer
	fail := func(err error) ([]writers.Writer, error) {
		for _, w := range outs {
			_ = w.Abort()
		}
		return nil, err
	}
	switch {
	case outPath != "" && reviewPath != "":
		ws, err := openOutputs(src, outPath, reviewPath, opts)
		if err != nil {
			return nil, err
		}
		outs = ws
	case outPath != "":
		w, err := writers.NewEnriched(outPath, src.Header(), opts)
		if err != nil {
			return nil, withCode(exitFatal, fmt.Errorf("--out: %w", err))
		}
		outs = append(outs, w)
	case reviewPath != "":
		w, err := writers.NewReview(reviewPath, src.Header(), opts)
		if err != nil {
			return nil, withCode(exitFatal, fmt.Errorf("--review: %w", err))
		}
		outs = append(outs, w)
	}
	tr := o.tr
	if !tr.hasOutputs() {
		return outs, nil
	}
	idName := mapper.Columns()["id"]
	keyType := table.Text
	if tr.source != nil {
		keyType = table.KeyType(tr.source.Columns(), idName)
	}
	for _, out := range o.tableOutputs(idName, keyType) {
		kind := table.Enriched
		if out.Deletes {
			kind = table.Review
		}
		shown := "table " + out.Name.String()
		w, err := table.NewSink(ctx, tr.outDB, out.Name, shown, table.SinkOptions{
			Kind: kind, Key: idName, KeyType: keyType, KeyIndex: slices.Index(src.Header(), idName), MarkCached: o.markCached,
			RunTime: tr.runTime, Logger: log, BatchRows: tableBatchRows,
		})
		if err != nil {
			return fail(tableSetupError(ctx, err))
		}
		outs = append(outs, w)
		tr.sinks = append(tr.sinks, namedSink{name: shown, sink: w})
	}
	return outs, nil
}

// shownOutputs names the outputs for the summary: files and tables.
func (o *runOptions) shownOutputs(out, review string) (string, string) {
	tr := o.tr
	if !tr.hasOutputs() {
		return out, review
	}
	join := func(file string, n table.Name) string {
		var parts []string
		if file != "" {
			parts = append(parts, file)
		}
		if n.Table != "" {
			parts = append(parts, "table "+n.String()+" in "+tr.out.Display)
		}
		return strings.Join(parts, " and ")
	}
	return join(out, tr.outName), join(review, tr.revName)
}
