package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/addrclean/addrclean/apply"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/runfile"
	"github.com/addrclean/addrclean/runs/endpoint"
	"github.com/addrclean/addrclean/table"
	"github.com/addrclean/addrclean/writers"
)

const applyUsage = `Usage: addrclean apply --enriched CLEANED --review REVIEWED -o FINAL [flags]
       addrclean apply DBURL --table NAME --id-col COLUMN --out-table NAME --review-table NAME
                       (--final-table NAME | -o FINAL) [flags]

Write the final file for import: every row of the enriched file CLEANED, its input
columns unchanged, then final_line1..4, final_city, final_region, final_postcode,
final_country (the ISO code), final_country_name and final_source, from the
decisions a person recorded in the review file REVIEWED (column "decision"):
  accept   the address the service verified           final_source = service
  keep     the input's own address                     final_source = input
  edit     the address typed in the edit_ columns      final_source = person
  (empty)  undecided: no final address                 final_source = unresolved
accept on a row the service gave no verified address (no av_address_id, or
Reject, Error) leaves it unresolved, with the reason listed. Rows the service
accepted are not in the review; they take its address. The review may come back
sorted, with columns added, in this or the previous layout: rows are matched by
row (and id); a cell edited outside the address is a warning (the input's cell is
written); a changed address, or a row missing or of another run, is refused.
Any of the files may be .csv, .tsv, .xlsx or .jsonl. Nothing calls the service.

A keep decision copies the input's address columns: pass the mapping flags given to
'addrclean run' if it was not detected from the header.

Over tables (the nightly run's --out-table and --review-table, in the input's
database DBURL), the input rows are read again from --table (or --query, with
--where) in --id-col order, joined by id with the two tables; a person records
decisions with UPDATE in the review table. --final-table NAME gets the id,
the final_ columns and applied_at, upserted by id (created if missing); -o
writes the full rows to a file. A review row whose input_label is not the
input's address now (it changed since the run: run again first), or whose id
the out-table has as Accept or not at all, is refused, named by id; review
rows of ids the input does not have (deleted, or outside --where) are
counted and left alone; an accepted row whose address changed since the run
is unresolved until the next run. The tables are read twice: first to check, then to
write, so a refused review leaves the final table as it was.

Exit codes: 0 written, every row resolved; 2 usage error, or a review that does not
belong to the enriched file or holds decisions that cannot be applied (the rows are
named; nothing is written); 3 written, but some rows are unresolved; 1 other errors.

Examples:
  Files: the run's enriched file and the review a person filled in:
    addrclean apply --enriched customers.cleaned.csv --review customers.review.xlsx \
      -o customers.final.csv
  A keep decision needs the address columns when run was told them:
    addrclean apply --line-cols "Street,Area" --postcode-col Eircode \
      --enriched out.xlsx --review review.xlsx -o final.xlsx
  Tables: the decisions recorded with UPDATE in the review table:
    addrclean apply --table crm.customers --id-col id --out-table crm.customers_av \
      --review-table crm.customers_review --final-table crm.customers_final \
      postgres://etl@db.example.com/crm

Flags:
`

type applyOptions struct {
	enriched, review, out           string
	lineCols                        string
	lineCol                         listFlag
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
		printFlags(fs, s.err)
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
	pos, err := parseInterspersed(fs, args)
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
	var me *apply.MismatchError
	switch {
	case errors.As(err, &me):
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
