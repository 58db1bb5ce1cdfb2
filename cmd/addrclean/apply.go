package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/addrclean/addrclean/apply"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/runfile"
	"github.com/addrclean/addrclean/writers"
)

const applyUsage = `Usage: addrclean apply --enriched CLEANED --review REVIEWED -o FINAL [flags]

Write the final file for import: every row of the enriched file CLEANED, its input
columns unchanged, then final_line1..4, final_city, final_region, final_postcode,
final_country and final_source, from the decisions a person recorded in the review
file REVIEWED (column "decision"):
  accept   the service's address                       final_source = service
  keep     the input's own address                     final_source = input
  edit     the address typed in the edit_ columns      final_source = person
  (empty)  undecided: no final address                 final_source = unresolved
Rows the service accepted are not in the review; they take its address.
Any of the files may be .csv, .tsv, .xlsx or .jsonl. Nothing calls the service.

A keep decision copies the input's address columns: pass the mapping flags given to
'addrclean run' if it was not detected from the header.

Exit codes: 0 written, every row resolved; 2 usage error, or a review that does not
belong to the enriched file or holds decisions that cannot be applied (the rows are
named; nothing is written); 3 written, but some rows are unresolved; 1 other errors.

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
}

// cmdApply is 'addrclean apply': review decisions into a final file.
func cmdApply(ctx context.Context, args []string, s streams) error {
	var o applyOptions
	fs := flag.NewFlagSet("apply", flag.ContinueOnError)
	fs.SetOutput(s.err)
	fs.Usage = func() {
		fmt.Fprint(s.err, applyUsage)
		fs.PrintDefaults()
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
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return withCode(exitUsage, nil)
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
	for _, p := range []struct{ flag, path string }{{"--enriched", o.enriched}, {"--review", o.review}} {
		if o.out != "-" && sameFile(o.out, p.path) {
			return usageErrorf("-o %s would overwrite %s", o.out, p.flag)
		}
	}
	if _, err := readers.NormaliseEncoding(o.reviewEncoding); err != nil {
		return usageErrorf("--encoding: %w", err)
	}
	opts := apply.Options{
		ReadReview: &readers.Options{Encoding: o.reviewEncoding},
		Mapping: readers.MappingSpec{
			LineCols: append(splitList(o.lineCols), o.lineCol...),
			City:     o.cityCol, Region: o.regionCol, Postcode: o.postcodeCol, Country: o.countryCol,
			DefaultCountry: o.country,
		},
		Write: writers.Options{RawCells: o.rawCells, Stdout: s.out},
	}
	rep, err := apply.Run(ctx, o.enriched, o.review, o.out, opts)
	var me *apply.MismatchError
	switch {
	case errors.As(err, &me):
		return withCode(exitUsage, err)
	case errors.Is(err, runfile.ErrNotEnriched), errors.Is(err, runfile.ErrNotReview), errors.Is(err, readers.ErrUnsupportedFormat):
		return withCode(exitUsage, err)
	case err != nil:
		return withCode(exitFatal, err)
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
	if rep.NotInReview > 0 {
		fmt.Fprintf(&b, "  %d row(s) that need review were missing from the review file: unresolved\n", rep.NotInReview)
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
		fmt.Fprintf(&b, "  UNRESOLVED   %d row(s): %s%s (final_source = unresolved, no final address)\n", n, strings.Join(rows, ", "), more)
	}
	fmt.Fprint(w, b.String())
}
