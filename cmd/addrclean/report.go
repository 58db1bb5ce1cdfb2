package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/addrclean/addrclean/internal/cliflag"
	"github.com/addrclean/addrclean/report"
	"github.com/addrclean/addrclean/runs"
	"github.com/addrclean/addrclean/runs/endpoint"
	"github.com/addrclean/addrclean/runstats"
)

// cmdReport is 'addrclean report': the HTML report of an existing run.
func cmdReport(ctx context.Context, args []string, s streams) error {
	var out, summary, outTable string
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(s.err)
	fs.Usage = func() {
		fmt.Fprint(s.err, reportUsage)
		cliflag.PrintDefaults(fs, s.err)
	}
	fs.StringVar(&out, "out", "", "report `PATH` (.html)")
	fs.StringVar(&out, "o", "", "shorthand for --out")
	fs.StringVar(&summary, "summary", "", "the run's --summary JSON `PATH` (for the cost section)")
	fs.StringVar(&outTable, "out-table", "", "with a DBURL: the run's enriched table `NAME` (its --out-table)")
	pos, err := cliflag.Interspersed(fs, args)
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
	rb, err := endpoint.PlanReadback(pos[0], outTable)
	if err != nil {
		return err
	}
	if err := checkReportPath(out); err != nil {
		return err
	}
	if err := checkPaths(append(rb.Uses(), pathRead("--summary", summary), pathWritten("--out", out))...); err != nil {
		return err
	}
	var st *report.Summary
	if summary != "" {
		if st, err = report.ReadSummary(summary); err != nil {
			return withCode(exitFatal, err)
		}
	}
	if err := writeReport(ctx, rb, out, st); err != nil {
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

// writeReport builds the report of the enriched output rb and writes it
// to out; without st, the summary the run kept with its output, if any.
func writeReport(ctx context.Context, rb endpoint.Readback, out string, st *report.Summary) error {
	defer rb.Close()
	en, err := rb.Open(ctx)
	if err != nil {
		return err
	}
	if st == nil {
		if st, err = rb.Summary(ctx); err != nil {
			return err
		}
	}
	d, err := report.BuildFrom(ctx, en, report.Options{Summary: st, Title: rb.Title()})
	if err != nil {
		return withCode(exitFatal, fmt.Errorf("report: %w", err))
	}
	if err := d.WriteFile(out); err != nil {
		return withCode(exitFatal, err)
	}
	return nil
}

// writeRunReport writes run --report: from the enriched file, or from the
// out-table when the run wrote no file. It works out the file's path
// itself: by the end of a run, cmdRun's outPath names the tables too.
func (o *runOptions) writeRunReport(ctx context.Context, st *runstats.Stats) error {
	outPath, reviewPath, err := o.plan.Files()
	if err != nil {
		return err
	}
	var sum *report.Summary
	if st != nil {
		sum = o.runSummary(*st, outPath, reviewPath)
	}
	return writeReport(ctx, o.plan.Readback(outPath), o.report, sum)
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
		Tables: o.plan.TableCounts(), Stats: st,
	}
	if o.price != nil {
		sp := o.price.Spent(st.CallsMade)
		sum.Spent = &sp
	}
	return sum
}

// referenceText says what the rows were verified against, with no key and
// no credentials: the live service's address, or the embedded service's
// reference.
func (o *runOptions) referenceText() string {
	if o.baseURL == "" {
		return "embedded service, " + runs.ReferenceName(o.reference) + " reference"
	}
	u, err := url.Parse(o.baseURL)
	if err != nil || u.Host == "" {
		return "live service"
	}
	return "live service " + (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}
