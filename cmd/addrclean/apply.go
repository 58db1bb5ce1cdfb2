package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/addrclean/addrclean/apply"
	"github.com/addrclean/addrclean/internal/cliflag"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/runfile"
	"github.com/addrclean/addrclean/runs/endpoint"
	"github.com/addrclean/addrclean/table"
	"github.com/addrclean/addrclean/writers"
)

type applyOptions struct {
	enriched, review, out           string
	lineCols                        string
	lineCol                         cliflag.List
	cityCol, regionCol, postcodeCol string
	countryCol, country             string
	rawCells                        bool
	reviewEncoding                  string
	// Over tables.
	idCol, table, query, where   string
	outTable, reviewTable, final string
	lockTimeout                  time.Duration
}

// cmdApply is 'addrclean apply': review decisions into a final file.
func cmdApply(ctx context.Context, args []string, s streams) error {
	var o applyOptions
	fs := flag.NewFlagSet("apply", flag.ContinueOnError)
	fs.SetOutput(s.err)
	fs.Usage = func() {
		fmt.Fprint(s.err, applyUsage)
		cliflag.PrintDefaults(fs, s.err)
	}
	fs.StringVar(&o.enriched, "enriched", "", "enriched output `PATH` of addrclean run")
	fs.StringVar(&o.review, "review", "", "review `PATH` with the decisions filled in")
	fs.StringVar(&o.out, "out", "", "final output `PATH` (.csv .tsv .xlsx .jsonl; - = CSV on stdout)")
	fs.StringVar(&o.out, "o", "", "shorthand for --out")
	fs.StringVar(&o.lineCols, "line-cols", "", "comma-separated input `COLUMNS` of the address lines (for keep)")
	fs.Var(&o.lineCol, "line-col", "one input address line `COLUMN` (repeatable)")
	fs.StringVar(&o.cityCol, "city-col", "", "city `COLUMN`")
	fs.StringVar(&o.regionCol, "region-col", "", "region/county `COLUMN`")
	fs.StringVar(&o.postcodeCol, "postcode-col", "", "postcode/Eircode `COLUMN`")
	fs.StringVar(&o.countryCol, "country-col", "", "country `COLUMN`")
	fs.StringVar(&o.country, "country", "", "country `CODE` for kept rows that have none")
	fs.BoolVar(&o.rawCells, "raw-cells", false, "do not neutralise spreadsheet formulas in a CSV/XLSX final file")
	fs.StringVar(&o.reviewEncoding, "encoding", "utf-8", "text encoding of a CSV review file: utf-8 or windows-1252\n(a spreadsheet may save it as windows-1252; the enriched file, written by run, is always read as UTF-8)")
	fs.StringVar(&o.idCol, "id-col", "", "with a DBURL: the input's id `COLUMN`, the key of the tables (as given to run)")
	fs.StringVar(&o.table, "table", "", "with a DBURL: the input table `NAME` given to run")
	fs.StringVar(&o.query, "query", "", "with a DBURL: the input `SELECT` given to run, instead of --table")
	fs.StringVar(&o.where, "where", "", "with --table: the `CONDITION` given to run (only these rows)")
	fs.StringVar(&o.outTable, "out-table", "", "with a DBURL: the run's enriched table `NAME` (its --out-table)")
	fs.StringVar(&o.reviewTable, "review-table", "", "with a DBURL: the review table `NAME` with the decisions (the run's --review-table)")
	fs.StringVar(&o.final, "final-table", "", "with a DBURL: upsert id + final_ columns + applied_at into table `NAME`, created if missing")
	fs.DurationVar(&o.lockTimeout, "lock-timeout", table.DefaultLockTimeout, "with --final-table: the longest its set-up or a write waits for a lock before apply stops with an error")
	pos, err := cliflag.Interspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return withCode(exitUsage, nil)
	}
	a, err := endpoint.PlanApply(endpoint.ApplySpec{Args: pos, Enriched: o.enriched, Review: o.review, Out: o.out,
		ReviewEncoding: o.reviewEncoding, IDCol: o.idCol, Table: o.table, Query: o.query, Where: o.where,
		OutTable: o.outTable, ReviewTable: o.reviewTable, Final: o.final, LockTimeout: o.lockTimeout, BatchRows: tableBatchRows})
	var ee *endpoint.Error
	if errors.As(err, &ee) && ee.Help {
		fs.Usage()
	}
	if err != nil {
		return err
	}
	if err := checkPaths(a.Uses()...); err != nil {
		return err
	}
	rep, shown, err := a.Apply(ctx, o.options(s), s.err)
	o.enriched, o.review, o.out = shown.Enriched, shown.Review, shown.Out
	return o.finish(s, rep, err)
}

func (o applyOptions) options(s streams) apply.Options {
	return apply.Options{
		Mapping: readers.MappingSpec{
			LineCols: append(splitList(o.lineCols), o.lineCol...),
			City:     o.cityCol, Region: o.regionCol, Postcode: o.postcodeCol, Country: o.countryCol,
			DefaultCountry: o.country, ID: o.idCol,
		},
		Write: writers.Options{RawCells: o.rawCells, Stdout: s.out},
	}
}

// finish maps apply's outcome to an exit code and reports it.
func (o applyOptions) finish(s streams, rep apply.Report, err error) error {
	switch {
	case errors.As(err, new(*apply.MismatchError)):
		return withCode(exitUsage, err)
	case errors.Is(err, runfile.ErrNotEnriched), errors.Is(err, runfile.ErrNotReview), errors.Is(err, readers.ErrUnsupportedFormat):
		return withCode(exitUsage, err)
	case err != nil:
		return endpoint.TableError(err)
	}
	if err := rep.Print(s.err, o.review, o.enriched, o.out); err != nil {
		return err
	}
	if n := rep.Sources[apply.SourceUnresolved]; n > 0 {
		return withCode(exitRowErrors, nil)
	}
	return nil
}
