package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/addrclean/addrclean/apply"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/record"
	"github.com/addrclean/addrclean/runfile"
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
	if len(pos) == 1 && table.IsURL(pos[0]) {
		return applyTables(ctx, pos[0], o, s)
	}
	for _, f := range []struct{ name, v string }{{"--id-col", o.idCol}, {"--table", o.table}, {"--query", o.query},
		{"--where", o.where}, {"--out-table", o.outTable}, {"--review-table", o.reviewTable}, {"--final-table", o.final}} {
		if f.v != "" {
			return usageErrorf("%s goes with a DBURL: addrclean apply DBURL --table NAME --id-col COLUMN --out-table NAME --review-table NAME --final-table NAME", f.name)
		}
	}
	switch {
	case len(pos) > 0:
		return usageErrorf("apply takes no positional arguments (got %q): use --enriched, --review and -o", pos)
	case o.enriched == "" || o.review == "" || o.out == "":
		fs.Usage()
		return usageErrorf("apply needs --enriched, --review and -o")
	}
	if _, err := writers.FormatFromPath(o.out); err != nil {
		return usageErrorf("-o %s: %w", o.out, err)
	}
	if err := checkPaths(o.paths(nil)...); err != nil {
		return err
	}
	if _, err := record.NormaliseEncoding(o.reviewEncoding); err != nil {
		return usageErrorf("--encoding: %w", err)
	}
	opts := o.options(s)
	opts.ReadReview = readers.Options{Encoding: o.reviewEncoding}
	rep, err := apply.Run(ctx, o.enriched, o.review, o.out, opts)
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
		return tableError(err)
	}
	printApply(s.err, o, rep)
	if n := rep.Sources[apply.SourceUnresolved]; n > 0 {
		return withCode(exitRowErrors, nil)
	}
	return nil
}

// printApply reports the decisions by kind and the final sources.
func printApply(w io.Writer, o applyOptions, rep apply.Report) {
	var b strings.Builder
	fmt.Fprintf(&b, "Applied %s to %s: %d rows written to %s\n", o.review, o.enriched, rep.Rows, o.out)
	fmt.Fprintf(&b, "  decisions    %s\n", counts(rep.Decisions, []string{"accept", "keep", "edit", apply.Undecided}))
	fmt.Fprintf(&b, "  final_source %s\n", counts(rep.Sources, []string{apply.SourceService, apply.SourceInput, apply.SourcePerson, apply.SourceUnresolved}))
	if rep.NotVerified > 0 {
		fmt.Fprintf(&b, "  %d row(s) have no result in the out-table (added since the run): unresolved\n", rep.NotVerified)
	}
	if rep.Changed > 0 {
		fmt.Fprintf(&b, "  %d row(s) changed address since the run (the out-table verified another): unresolved until the next run\n", rep.Changed)
	}
	if rep.Outside > 0 {
		more := ""
		if int64(len(rep.OutsideIDs)) < rep.Outside {
			more = ", ..."
		}
		fmt.Fprintf(&b, "  %d review row(s) of ids the input does not have (deleted, or outside --where/--query), not applied: %s%s\n",
			rep.Outside, strings.Join(rep.OutsideIDs, ", "), more)
	}
	if len(rep.ExtraColumns) > 0 {
		fmt.Fprintf(&b, "  ignored the review's column(s) the input does not have: %s\n", strings.Join(rep.ExtraColumns, ", "))
	}
	if len(rep.MissingColumns) > 0 {
		fmt.Fprintf(&b, "  the review lacks input column(s) %s: the input's cells are written\n", strings.Join(rep.MissingColumns, ", "))
	}
	if rep.EditedCells > 0 {
		fmt.Fprintf(&b, "  WARNING      %d review cell(s) outside the address differ from the input; the input's cells are written (edit the input to change them):\n", rep.EditedCells)
		for _, c := range rep.Edited {
			name := "row " + strconv.Itoa(c.Row)
			if c.ID != "" {
				name = "id " + c.ID
			}
			fmt.Fprintf(&b, "    %s, column %q: %q in the review, %q in the input\n", name, c.Column, c.Review, c.Input)
		}
		if n := rep.EditedCells - int64(len(rep.Edited)); n > 0 {
			fmt.Fprintf(&b, "    ... and %d more\n", n)
		}
	}
	if rep.UnknownCountry > 0 {
		fmt.Fprintf(&b, "  %d row(s) have a country apply cannot write as an ISO code: unresolved (decide edit with edit_country)\n", rep.UnknownCountry)
	}
	if rep.NoServiceAddress > 0 {
		fmt.Fprintf(&b, "  %d row(s) decided accept have no address the service verified: unresolved (decide keep or edit)\n", rep.NoServiceAddress)
	}
	if n := rep.Sources[apply.SourceUnresolved]; n > 0 {
		rows := make([]string, len(rep.UnresolvedRows))
		for i, r := range rep.UnresolvedRows {
			rows[i] = strconv.Itoa(r)
		}
		more := ""
		if int64(len(rows)) < n {
			more = ", ..."
		}
		what := "row(s)"
		if len(rep.UnresolvedIDs) > 0 {
			rows, what = rep.UnresolvedIDs, "row(s), ids"
		}
		fmt.Fprintf(&b, "  UNRESOLVED   %d %s: %s%s (final_source = unresolved, no final address)\n", n, what, strings.Join(rows, ", "), more)
		for _, u := range rep.Unresolved {
			if u.Reason == apply.ReasonUndecided {
				continue // the counts above say how many; the list is of rows to look at
			}
			name := "row " + strconv.Itoa(u.Row)
			if u.ID != "" {
				name = "id " + u.ID
			}
			fmt.Fprintf(&b, "    %s: %s\n", name, u.Reason)
		}
	}
	fmt.Fprint(w, b.String())
}

// applyTables is 'addrclean apply DBURL ...': the run's tables joined with
// its input table by id, into a final table and/or a file.
func applyTables(ctx context.Context, dbURL string, o applyOptions, s streams) error {
	switch {
	case o.enriched != "" || o.review != "":
		return usageErrorf("with a DBURL, name the run's tables with --out-table and --review-table, not --enriched and --review")
	case (o.table == "") == (o.query == ""):
		return usageErrorf("apply over tables needs the run's input: --table NAME or --query \"SELECT ...\" (one of them)")
	case o.where != "" && o.table == "":
		return usageErrorf("--where goes with --table")
	case strings.TrimSpace(o.idCol) == "":
		return usageErrorf("apply over tables needs --id-col COLUMN: the id joins the input to the run's tables")
	case o.outTable == "" || o.reviewTable == "":
		return usageErrorf("apply over tables needs --out-table and --review-table (the run's)")
	case o.final == "" && o.out == "":
		return usageErrorf("apply over tables needs --final-table NAME or -o FINAL for its output")
	case o.reviewEncoding != "utf-8":
		return usageErrorf("--encoding is for a CSV review file, not a review table")
	}
	if o.out != "" {
		if _, err := writers.FormatFromPath(o.out); err != nil {
			return usageErrorf("-o %s: %w", o.out, err)
		}
	}
	u, err := table.ParseURL(dbURL)
	if err != nil {
		return withCode(exitFatal, err)
	}
	if err := checkPaths(o.paths(u)...); err != nil {
		return err
	}
	names := map[string]table.Name{}
	for _, f := range []struct{ flag, v string }{{"--table", o.table}, {"--out-table", o.outTable},
		{"--review-table", o.reviewTable}, {"--final-table", o.final}} {
		if f.v == "" {
			continue
		}
		n, err := table.ParseName(f.v)
		if err != nil {
			return usageErrorf("%s: %w", f.flag, err)
		}
		for other, m := range names {
			if m == n {
				return usageErrorf("%s and %s are the same table %s", other, f.flag, n)
			}
		}
		names[f.flag] = n
	}
	if u.HasPassword {
		fmt.Fprintln(s.err, "addrclean: warning: "+urlPasswordWarning)
	}
	if o.lockTimeout <= 0 {
		return usageErrorf("--lock-timeout %v: want a positive duration such as 10s", o.lockTimeout)
	}
	db, err := table.Open(ctx, u, table.Options{ReadOnly: o.final == "", LockTimeout: o.lockTimeout})
	if err != nil {
		return tableError(err)
	}
	defer db.Close()
	j := table.Join{DB: db, Input: o.query, Out: names["--out-table"], Review: names["--review-table"]}
	if o.table != "" {
		j.Input = table.InputQuery(names["--table"], o.where)
	}
	if o.final != "" {
		// Before anything is read: the final table must be none of the
		// tables the command reads, under any spelling.
		if err := checkFinalTable(ctx, db, j, names["--table"], names["--final-table"]); err != nil {
			return err
		}
	}
	cols, err := j.InputColumns(ctx)
	if err != nil {
		return tableError(fmt.Errorf("the input: %w", err))
	}
	header := table.Names(cols)
	opts := o.options(s)
	m, err := readers.NewMapper(header, opts.Mapping)
	if err != nil {
		return tableError(fmt.Errorf("the input: %w", err))
	}
	j.Key = m.Columns()["id"]
	opts.IDColumn, opts.CheckLabels = j.Key, true
	o.enriched = "table " + j.Out.String() + " in " + u.Display
	o.review = "table " + j.Review.String()
	// First a pass that writes nothing: the final table is committed batch
	// by batch, so a review to refuse must be found before any is written.
	if _, err := applyJoin(ctx, j, o, opts, discard{}); err != nil {
		return o.finish(s, apply.Report{}, err)
	}
	var outs multiRows
	var shown []string
	if o.final != "" {
		w, err := table.NewRowSink(ctx, db, names["--final-table"], "table "+names["--final-table"].String(),
			apply.Header(header), j.Key, table.KeyType(cols, j.Key), apply.FinalColumns, time.Now(), tableBatchRows)
		if err != nil {
			return tableError(err)
		}
		outs = append(outs, w)
		shown = append(shown, "table "+names["--final-table"].String())
	}
	if o.out != "" {
		w, err := writers.NewRows(o.out, apply.Header(header), opts.Write)
		if err != nil {
			_ = outs.Abort()
			return withCode(exitFatal, fmt.Errorf("-o: %w", err))
		}
		outs = append(outs, w)
		shown = append(shown, o.out)
	}
	o.out = strings.Join(shown, " and ")
	rep, err := applyJoin(ctx, j, o, opts, outs)
	return o.finish(s, rep, err)
}

// applyJoin runs apply over the streams of j; out is closed or aborted.
func applyJoin(ctx context.Context, j table.Join, o applyOptions, opts apply.Options, out writers.RowWriter) (apply.Report, error) {
	en, rv, err := openJoin(ctx, j, o.enriched, o.review)
	if err != nil {
		_ = out.Abort()
		return apply.Report{}, err
	}
	defer en.Close()
	defer rv.Close()
	return apply.Apply(ctx, en, rv, o.review, out, opts)
}

// openJoin opens the enriched and review streams of j, named as given.
func openJoin(ctx context.Context, j table.Join, enriched, review string) (*runfile.Enriched, *runfile.Review, error) {
	es, err := j.OpenEnriched(ctx, enriched)
	if err != nil {
		return nil, nil, err
	}
	en, err := runfile.NewEnriched(enriched, es)
	if err != nil {
		return nil, nil, err
	}
	rs, err := j.OpenReview(ctx, review)
	if err == nil {
		var rv *runfile.Review
		if rv, err = runfile.NewReview(review, rs); err == nil {
			return en, rv, nil
		}
	}
	_ = en.Close()
	return nil, nil, err
}

// discard is a writers.RowWriter that writes nothing.
type discard struct{}

func (discard) Write(context.Context, []string) error { return nil }
func (discard) Close() error                          { return nil }
func (discard) Abort() error                          { return nil }

// multiRows writes every row to each of its writers.
type multiRows []writers.RowWriter

func (m multiRows) Write(ctx context.Context, cells []string) error {
	for _, w := range m {
		if err := w.Write(ctx, cells); err != nil {
			return err
		}
	}
	return nil
}

func (m multiRows) Close() error { return m.each(writers.RowWriter.Close) }
func (m multiRows) Abort() error { return m.each(writers.RowWriter.Abort) }

// each calls f on every writer, all of them whatever fails.
func (m multiRows) each(f func(writers.RowWriter) error) error {
	var errs []error
	for _, w := range m {
		errs = append(errs, f(w))
	}
	return errors.Join(errs...)
}
