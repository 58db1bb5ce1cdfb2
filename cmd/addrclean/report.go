package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/report"
	"github.com/addrclean/addrclean/runfile"
	"github.com/addrclean/addrclean/runstats"
	"github.com/addrclean/addrclean/table"
)

const reportUsage = `Usage: addrclean report [--summary SUMMARY.json] -o REPORT.html ENRICHED
       addrclean report [--summary SUMMARY.json] -o REPORT.html --out-table NAME DBURL

Build the after-run report from the enriched output of 'addrclean run' (.csv .tsv
.xlsx .jsonl): one self-contained HTML page (nothing fetched from the network) with
the rows by action and match level, what the service amended, errors, the busiest
review reasons, duplicates and a map of the coordinates. The cost section (calls,
dedup savings, cache hits, retries, 429s) needs the run's --summary file.
Nothing calls the service. 'addrclean run --report PATH.html' writes the same page
at the end of a run. With a DBURL, the page is built from the run's --out-table
NAME in that database (duplicates counted by the database, rows numbered in id
order). A run that wrote --out-table also keeps its summary in the table
NAME_runs beside it: the cost and errors sections of the last run are read
from there, so --summary is not needed. A table written by shards (run --shard
I/N) shows the latest run of each shard summed, and says when a shard never ran
or did not finish.

Examples:
  The report of a file run, with the cost of the run:
    addrclean report --summary customers.summary.json -o customers.html \
      customers.cleaned.csv
  The report of a table run (cost read from crm.customers_av_runs):
    addrclean report --out-table crm.customers_av -o nightly.html \
      postgres://etl@db.example.com/crm
  The same page at the end of the run itself:
    addrclean run --report customers.html customers.csv

Flags:
`

// cmdReport is 'addrclean report': the HTML report of an existing run.
func cmdReport(ctx context.Context, args []string, s streams) error {
	var out, summary, outTable string
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(s.err)
	fs.Usage = func() {
		fmt.Fprint(s.err, reportUsage)
		printFlags(fs, s.err)
	}
	fs.StringVar(&out, "out", "", "report `PATH` (.html)")
	fs.StringVar(&out, "o", "", "shorthand for --out")
	fs.StringVar(&summary, "summary", "", "the run's --summary JSON `PATH` (for the cost section)")
	fs.StringVar(&outTable, "out-table", "", "with a DBURL: the run's enriched table `NAME` (its --out-table)")
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return withCode(exitUsage, nil)
	}
	if len(pos) != 1 || out == "" {
		fs.Usage()
		return usageErrorf("report takes one ENRICHED file (or a DBURL with --out-table) and -o REPORT.html")
	}
	isDB := table.IsURL(pos[0])
	switch {
	case isDB && outTable == "":
		return usageErrorf("report over a database needs --out-table NAME: the run's enriched table")
	case !isDB && outTable != "":
		return usageErrorf("--out-table goes with a DBURL: addrclean report -o REPORT.html --out-table NAME DBURL")
	}
	if err := checkReportPath(out); err != nil {
		return err
	}
	if err := checkPaths(reportPaths(pos[0], summary, out)...); err != nil {
		return err
	}
	var st *report.Summary
	if summary != "" {
		if st, err = report.ReadSummary(summary); err != nil {
			return withCode(exitFatal, err)
		}
	}
	if isDB {
		err = writeTableReport(ctx, pos[0], outTable, out, st)
	} else {
		err = writeReport(ctx, pos[0], out, st)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(s.err, "report written to %s\n", out)
	return nil
}

// checkReportPath refuses a --report path that is not .html.
func checkReportPath(path string) error {
	if ext := strings.ToLower(filepath.Ext(path)); ext != ".html" && ext != ".htm" {
		return usageErrorf("report %s: want a .html path", path)
	}
	return nil
}

// writeReport builds the report of the enriched file and writes it.
func writeReport(ctx context.Context, enriched, out string, st *report.Summary) error {
	d, err := report.Build(ctx, enriched, report.Options{Summary: st, Title: enriched})
	switch {
	case errors.Is(err, runfile.ErrNotEnriched), errors.Is(err, readers.ErrUnsupportedFormat):
		return withCode(exitUsage, err)
	case err != nil:
		return withCode(exitFatal, fmt.Errorf("report: %w", err))
	}
	if err := d.WriteFile(out); err != nil {
		return withCode(exitFatal, err)
	}
	return nil
}

// writeTableReport builds the report of out-table name in the database at
// dbURL and writes it.
func writeTableReport(ctx context.Context, dbURL, name, out string, st *report.Summary) error {
	u, err := table.ParseURL(dbURL)
	if err != nil {
		return withCode(exitFatal, err)
	}
	n, err := table.ParseName(name)
	if err != nil {
		return usageErrorf("--out-table: %w", err)
	}
	return reportOutTable(ctx, u, n, out, st)
}

// reportsFromTable reports whether run --report is built from the
// out-table: a run with an out-table and no enriched file.
func (o *runOptions) reportsFromTable(outPath string) bool {
	return (outPath == "" || outPath == "-") && o.tr.hasOutputs() && o.tr.outName.Table != ""
}

// writeRunReport writes run --report: from the enriched file, or from the
// out-table when the run wrote no file. It works out the file's path
// itself: by the end of a run, cmdRun's outPath names the tables too.
func (o *runOptions) writeRunReport(ctx context.Context, st *runstats.Stats) error {
	outPath, reviewPath, err := o.resolveOutputs()
	if err != nil {
		return err
	}
	var sum *report.Summary
	if st != nil {
		sum = o.runSummary(*st, outPath, reviewPath)
	}
	if !o.reportsFromTable(outPath) {
		return writeReport(ctx, outPath, o.report, sum)
	}
	return reportOutTable(ctx, o.tr.out, o.tr.outName, o.report, sum)
}

// runSummary is what the run says of itself: the --summary file's body,
// the runs table's summary, the report's header. The run's end is taken
// once, on the first call, so that the three agree on it.
func (o *runOptions) runSummary(st runstats.Stats, out, review string) *report.Summary {
	if o.finished.IsZero() {
		o.finished = time.Now().UTC().Truncate(time.Second)
	}
	sum := &report.Summary{
		Input: o.input, Enriched: out, Review: review, Version: version, Reference: o.referenceText(),
		Started: o.finished.Add(-st.Elapsed.Round(time.Second)), Finished: o.finished,
		Tables: o.tableCounts(), Stats: st,
	}
	if o.price != nil {
		sp := o.price.Spent(st.CallsMade)
		sum.Spent = &sp
	}
	return sum
}

// recordRun keeps the run's summary in the runs table next to its
// out-table (table.RunsName), so that addrclean report over the table shows
// the cost without the --summary file. A run without an out-table has
// none. The outputs are written by now: a failure here is reported and
// leaves the run's outcome as it was.
func (o *runOptions) recordRun(ctx context.Context, st runstats.Stats, out, review string, log zerolog.Logger) {
	tr := o.tr
	if !tr.hasOutputs() || tr.outName.Table == "" || tr.outDB == nil {
		return
	}
	rn := table.RunsName(tr.outName)
	// The input is never written: a runs table that is the input table
	// (or the review table) under another role is left alone.
	if rn == tr.revName || (tr.src != nil && tr.src.Display == tr.out.Display && rn == tr.srcName) {
		log.Warn().Str("runs_table", rn.String()).Msg("the runs table would be the input or review table: the run's summary is not recorded")
		return
	}
	sum := o.runSummary(st, out, review)
	b, err := json.Marshal(sum)
	if err == nil {
		err = table.RecordRun(context.WithoutCancel(ctx), tr.outDB, tr.outName,
			// finished is the moment of recording, not the summary's whole
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

// referenceText says what the rows were verified against, with no key and
// no credentials: the live service's address, or the embedded service's
// reference.
func (o *runOptions) referenceText() string {
	if o.baseURL == "" {
		return "embedded service, " + referenceName(o.reference) + " reference"
	}
	u, err := url.Parse(o.baseURL)
	if err != nil || u.Host == "" {
		return "live service"
	}
	return "live service " + (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// reportOutTable builds the report of out-table n in the database at u and
// writes it to out.
func reportOutTable(ctx context.Context, u *table.URL, n table.Name, out string, st *report.Summary) error {
	db, err := table.Open(ctx, u, table.Options{ReadOnly: true})
	if err != nil {
		return tableError(err)
	}
	defer db.Close()
	title := "table " + n.String() + " in " + u.Display
	src, err := table.OpenOutTable(ctx, db, n, title)
	if err != nil {
		return tableError(err)
	}
	en, err := runfile.NewEnriched(title, src)
	if err != nil {
		return withCode(exitUsage, err)
	}
	defer en.Close()
	if st == nil {
		// The runs' summaries kept next to the out-table, if any (the set's
		// when shards wrote it): a table written before runs tables
		// existed just has no cost section.
		switch st, err = report.FromRuns(table.Runs(ctx, db, n)); {
		case errors.Is(err, table.ErrNoRuns):
		case errors.Is(err, report.ErrNotSummary):
			return withCode(exitFatal, fmt.Errorf("runs table %s: %w", table.RunsName(n), err))
		case err != nil:
			return tableError(err)
		}
	}
	d, err := report.BuildFrom(ctx, en, report.Options{Summary: st, Title: title})
	if err != nil {
		return withCode(exitFatal, fmt.Errorf("report: %w", err))
	}
	if err := d.WriteFile(out); err != nil {
		return withCode(exitFatal, err)
	}
	return nil
}
