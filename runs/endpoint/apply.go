package endpoint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/addrclean/addrclean/apply"
	"github.com/addrclean/addrclean/internal/samefile"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/record"
	"github.com/addrclean/addrclean/runfile"
	"github.com/addrclean/addrclean/table"
	"github.com/addrclean/addrclean/writers"
)

// ApplySpec is what 'addrclean apply' names: a run's enriched and review
// outputs, read back, and where the final rows go.
type ApplySpec struct {
	// Args are the positional arguments: none for files, the DBURL of the
	// run's tables.
	Args []string
	// Enriched, Review and Out are --enriched, --review and -o.
	Enriched, Review, Out string
	// ReviewEncoding is the text encoding of a CSV review file.
	ReviewEncoding string
	// The run's input and tables, over a database; Final is --final-table.
	IDCol, Table, Query, Where, OutTable, ReviewTable, Final string
	LockTimeout                                              time.Duration
	// BatchRows overrides the final table's batch size (tests).
	BatchRows int
}

// Applier applies a review's decisions to a run's enriched output.
type Applier interface {
	// Uses are the files read and written, for the clash checks.
	Uses() []samefile.Use
	// Apply writes the final rows; warn takes warnings for the user. It
	// returns what was applied, and the outputs as the report names them.
	Apply(ctx context.Context, opts apply.Options, warn io.Writer) (apply.Report, Shown, error)
}

// Shown names the enriched output, the review and the final output.
type Shown struct{ Enriched, Review, Out string }

// PlanApply checks an apply command line, without I/O: over files when it
// names no DBURL, else over the tables of the kind that claims it.
func PlanApply(s ApplySpec) (Applier, error) {
	k := fileKind
	if len(s.Args) == 1 {
		k = lookup(s.Args[0])
	}
	if k.Apply == nil {
		return nil, usagef("%s: apply cannot read a run's outputs from a %s", s.Args[0], k.Name)
	}
	return k.Apply(s)
}

// fileApply applies a review file to an enriched file.
type fileApply struct{ s ApplySpec }

func planFileApply(s ApplySpec) (Applier, error) {
	for _, f := range []struct{ name, v string }{{"--id-col", s.IDCol}, {"--table", s.Table}, {"--query", s.Query},
		{"--where", s.Where}, {"--out-table", s.OutTable}, {"--review-table", s.ReviewTable}, {"--final-table", s.Final}} {
		if f.v != "" {
			return nil, usagef("%s goes with a DBURL: addrclean apply DBURL --table NAME --id-col COLUMN --out-table NAME --review-table NAME --final-table NAME", f.name)
		}
	}
	switch {
	case len(s.Args) > 0:
		return nil, usagef("apply takes no positional arguments (got %q): use --enriched, --review and -o", s.Args)
	case s.Enriched == "" || s.Review == "" || s.Out == "":
		return nil, &Error{Class: Usage, Help: true, Err: errors.New("apply needs --enriched, --review and -o")}
	}
	// Said here, not as the reader's "no standard input given".
	for _, f := range []struct{ name, v string }{{"--enriched", s.Enriched}, {"--review", s.Review}} {
		if f.v == "-" {
			return nil, usagef("%s -: apply reads files; give a path", f.name)
		}
	}
	if _, err := writers.FormatFromPath(s.Out); err != nil {
		return nil, usagef("-o %s: %w", s.Out, err)
	}
	return fileApply{s}, nil
}

func (f fileApply) Uses() []samefile.Use {
	return []samefile.Use{{Name: "--enriched", Path: f.s.Enriched, Role: samefile.Read},
		{Name: "--review", Path: f.s.Review, Role: samefile.Read}, {Name: "--out", Path: f.s.Out, Role: samefile.Write}}
}

func (f fileApply) Apply(ctx context.Context, opts apply.Options, _ io.Writer) (apply.Report, Shown, error) {
	shown := Shown{Enriched: f.s.Enriched, Review: f.s.Review, Out: f.s.Out}
	if _, err := record.NormaliseEncoding(f.s.ReviewEncoding); err != nil {
		return apply.Report{}, shown, usagef("--encoding: %w", err)
	}
	opts.ReadReview = readers.Options{Encoding: f.s.ReviewEncoding}
	rep, err := apply.Run(ctx, f.s.Enriched, f.s.Review, f.s.Out, opts)
	return rep, shown, err
}

// tableApply joins a run's --out-table and --review-table with its input
// table by id, into a final table and/or a file.
type tableApply struct {
	s ApplySpec
	u *table.URL
}

func planTableApply(s ApplySpec) (Applier, error) {
	switch {
	case s.Enriched != "" || s.Review != "":
		return nil, usagef("with a DBURL, name the run's tables with --out-table and --review-table, not --enriched and --review")
	case (s.Table == "") == (s.Query == ""):
		return nil, usagef("apply over tables needs the run's input: --table NAME or --query \"SELECT ...\" (one of them)")
	case s.Where != "" && s.Table == "":
		return nil, usagef("--where goes with --table")
	case strings.TrimSpace(s.IDCol) == "":
		return nil, usagef("apply over tables needs --id-col COLUMN: the id joins the input to the run's tables")
	case s.OutTable == "" || s.ReviewTable == "":
		return nil, usagef("apply over tables needs --out-table and --review-table (the run's)")
	case s.Final == "" && s.Out == "":
		return nil, usagef("apply over tables needs --final-table NAME or -o FINAL for its output")
	case s.ReviewEncoding != "utf-8":
		return nil, usagef("--encoding is for a CSV review file, not a review table")
	}
	if s.Out != "" {
		if _, err := writers.FormatFromPath(s.Out); err != nil {
			return nil, usagef("-o %s: %w", s.Out, err)
		}
	}
	u, err := table.ParseURL(s.Args[0])
	if err != nil {
		return nil, fatal(err)
	}
	return &tableApply{s: s, u: u}, nil
}

func (t *tableApply) Uses() []samefile.Use {
	return []samefile.Use{dbUse("DBURL", t.u, t.s.Final != ""), {Name: "--out", Path: t.s.Out, Role: samefile.Write}}
}

func (t *tableApply) Apply(ctx context.Context, opts apply.Options, warn io.Writer) (apply.Report, Shown, error) {
	s := t.s
	shown := Shown{Enriched: s.Enriched, Review: s.Review, Out: s.Out}
	names := map[string]table.Name{}
	for _, f := range []struct{ flag, v string }{{"--table", s.Table}, {"--out-table", s.OutTable},
		{"--review-table", s.ReviewTable}, {"--final-table", s.Final}} {
		if f.v == "" {
			continue
		}
		n, err := table.ParseName(f.v)
		if err != nil {
			return apply.Report{}, shown, usagef("%s: %w", f.flag, err)
		}
		for other, m := range names {
			if m == n {
				return apply.Report{}, shown, usagef("%s and %s are the same table %s", other, f.flag, n)
			}
		}
		names[f.flag] = n
	}
	if t.u.HasPassword {
		fmt.Fprintln(warn, "addrclean: warning: "+PasswordWarning)
	}
	if s.LockTimeout <= 0 {
		return apply.Report{}, shown, usagef("--lock-timeout %v: want a positive duration such as 10s", s.LockTimeout)
	}
	if t.u.Scheme == "sqlite" && s.Final != "" {
		// The command reads this database too: a path that names no file
		// is refused as a read-only open refuses it, not created empty by
		// the writer that --final-table needs.
		if _, err := os.Stat(t.u.Path); errors.Is(err, fs.ErrNotExist) {
			return apply.Report{}, shown, TableError(fmt.Errorf("%s: no such database file", t.u.Display))
		}
	}
	db, err := table.Open(ctx, t.u, table.Options{ReadOnly: s.Final == "", LockTimeout: s.LockTimeout})
	if err != nil {
		return apply.Report{}, shown, TableError(err)
	}
	defer db.Close()
	j := table.Join{DB: db, Input: s.Query, Out: names["--out-table"], Review: names["--review-table"]}
	if s.Table != "" {
		j.Input = table.InputQuery(names["--table"], s.Where)
	}
	if s.Final != "" {
		// Before anything is read: the final table must be none of the
		// tables the command reads, under any spelling.
		if err := checkFinalTable(ctx, db, j, names["--table"], names["--final-table"]); err != nil {
			return apply.Report{}, shown, err
		}
	}
	cols, err := j.InputColumns(ctx)
	if err != nil {
		return apply.Report{}, shown, fmt.Errorf("the input: %w", err)
	}
	header := table.Names(cols)
	m, err := readers.NewMapper(header, opts.Mapping)
	if err != nil {
		return apply.Report{}, shown, fmt.Errorf("the input: %w", err)
	}
	j.Key = m.Columns()["id"]
	opts.IDColumn, opts.CheckLabels = j.Key, true
	shown.Enriched = "table " + j.Out.String() + " in " + t.u.Display
	shown.Review = "table " + j.Review.String()
	// First a pass that writes nothing: the final table is committed batch
	// by batch, so a review to refuse must be found before any is written.
	if _, err := applyJoin(ctx, j, shown, opts, discard{}); err != nil {
		return apply.Report{}, shown, err
	}
	var outs multiRows
	var names2 []string
	// The file first: it is a temporary file until the end, removed if the
	// command fails, while the final table is created at once; so a -o
	// that cannot be written refuses the command before the table exists.
	if s.Out != "" {
		w, err := writers.NewRows(s.Out, apply.Header(header), opts.Write)
		if err != nil {
			return apply.Report{}, shown, fatal(fmt.Errorf("-o: %w", err))
		}
		outs = append(outs, w)
		names2 = append(names2, s.Out)
	}
	if s.Final != "" {
		final := names["--final-table"]
		w, err := table.NewRowSink(ctx, db, final, "table "+final.String(),
			apply.Header(header), j.Key, table.KeyType(cols, j.Key), apply.FinalColumns, time.Now(), s.BatchRows)
		if err != nil {
			_ = outs.Abort()
			return apply.Report{}, shown, TableError(err)
		}
		// The table is named first, as before.
		outs = append(multiRows{w}, outs...)
		names2 = append([]string{"table " + final.String()}, names2...)
	}
	shown.Out = strings.Join(names2, " and ")
	rep, err := applyJoin(ctx, j, shown, opts, outs)
	return rep, shown, err
}

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
		return setupError(ctx, err)
	}
	f, ok, err := db.Resolve(ctx, final)
	if err != nil {
		return setupError(ctx, err)
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
			return setupError(ctx, err)
		}
		if ok && r.ID == f.ID {
			return usagef("--final-table %s is table %s, the run's %s %s: name another table", final, f.Name, o.flag, o.n)
		}
	}
	return nil
}

// applyJoin runs apply over the streams of j; out is closed or aborted.
func applyJoin(ctx context.Context, j table.Join, shown Shown, opts apply.Options, out writers.RowWriter) (apply.Report, error) {
	en, rv, err := openJoin(ctx, j, shown.Enriched, shown.Review)
	if err != nil {
		_ = out.Abort()
		return apply.Report{}, err
	}
	defer en.Close()
	defer rv.Close()
	return apply.Apply(ctx, en, rv, shown.Review, out, opts)
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
