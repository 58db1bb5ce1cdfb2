package main

import (
	"flag"
	"time"

	"github.com/addrclean/addrclean/runs/endpoint"
	"github.com/addrclean/addrclean/table"
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

// tablePageRows and tableRetry, when set, override the table package's
// page size and retry of a lost connection: tests make them small.
var (
	tablePageRows int
	tableRetry    table.Retry
)

// setupTables plans the run's input and outputs (endpoint.New) and replaces
// o.input with the input's name as shown, so that nothing printed later
// (logs, errors, summaries) can show a database password.
func (o *runOptions) setupTables() error {
	t := o.tables
	p, err := endpoint.New(endpoint.Spec{
		Input: o.input, Table: t.table, Query: t.query, Where: t.where, IDCol: o.idCol,
		Out: o.out, Review: o.review, OutTable: t.outTable, ReviewTable: t.reviewTable, OutDB: t.outDB,
		LockTimeout: t.lockTimeout, MarkCached: o.markCached, DryRun: o.dryRun, Report: o.report, OutEncoding: o.outEncoding,
		PageRows: tablePageRows, BatchRows: tableBatchRows, Retry: tableRetry, JournalDir: o.journalDir,
	})
	if err != nil {
		return err
	}
	o.plan, o.input = p, p.Info().Name
	return nil
}
