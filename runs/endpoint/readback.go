package endpoint

import (
	"context"
	"errors"
	"fmt"

	"github.com/addrclean/addrclean/internal/samefile"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/report"
	"github.com/addrclean/addrclean/runfile"
	"github.com/addrclean/addrclean/table"
)

// Readback is a run's enriched output, read back: the input of the
// report.
type Readback interface {
	// Title names the output on the report's page.
	Title() string
	// Uses are the files read, for the clash checks.
	Uses() []samefile.Use
	// Open starts reading the enriched rows; errors are sorted (*Error).
	Open(ctx context.Context) (*runfile.Enriched, error)
	// Summary is the run's summary kept with the output, nil if none.
	Summary(ctx context.Context) (*report.Summary, error)
	// Close releases what Open opened.
	Close() error
}

// PlanReadback plans reading back the enriched output name (with
// outTable, the run's --out-table in the database name), without I/O.
func PlanReadback(name, outTable string) (Readback, error) {
	k := lookup(name)
	if k.Readback == nil {
		return nil, usagef("%s: no enriched output to read back from a %s", name, k.Name)
	}
	return k.Readback(name, outTable)
}

// Readback is the enriched output of the run of p: the file out, or the
// out-table when the run wrote no enriched file.
func (p *Plan) Readback(out string) Readback {
	if p.fromTable(out) {
		return &tableReadback{u: p.tables.u, name: p.tables.outName}
	}
	return &fileReadback{path: out}
}

type fileReadback struct {
	path string
	en   *runfile.Enriched
}

func planFileReadback(name, outTable string) (Readback, error) {
	if outTable != "" {
		return nil, usagef("--out-table goes with a DBURL: addrclean report -o REPORT.html --out-table NAME DBURL")
	}
	return &fileReadback{path: name}, nil
}

func (f *fileReadback) Title() string { return f.path }

func (f *fileReadback) Uses() []samefile.Use {
	return []samefile.Use{{Name: "ENRICHED", Path: f.path, Role: samefile.Read}}
}

func (f *fileReadback) Open(ctx context.Context) (*runfile.Enriched, error) {
	en, err := runfile.OpenEnriched(ctx, f.path, readers.Options{})
	switch {
	case errors.Is(err, runfile.ErrNotEnriched), errors.Is(err, readers.ErrUnsupportedFormat):
		return nil, usage(err)
	case err != nil:
		return nil, fatal(fmt.Errorf("report: %w", err))
	}
	f.en = en
	return en, nil
}

func (f *fileReadback) Summary(context.Context) (*report.Summary, error) { return nil, nil }

func (f *fileReadback) Close() error {
	if f.en == nil {
		return nil
	}
	return f.en.Close()
}

// tableReadback is a run's out-table; duplicates are counted by the
// database, rows numbered in id order.
type tableReadback struct {
	raw, outTable string // as given; parsed by Open
	u             *table.URL
	name          table.Name
	db            table.Database
	en            *runfile.Enriched
}

func planTableReadback(name, outTable string) (Readback, error) {
	if outTable == "" {
		return nil, usagef("report over a database needs --out-table NAME: the run's enriched table")
	}
	return &tableReadback{raw: name, outTable: outTable}, nil
}

func (t *tableReadback) Title() string { return "table " + t.name.String() + " in " + t.u.Display }

func (t *tableReadback) Uses() []samefile.Use {
	u := t.u
	if u == nil {
		u, _ = table.ParseURL(t.raw) // nil when malformed: Open says why
	}
	return []samefile.Use{dbUse("DBURL", u, false)}
}

func (t *tableReadback) Open(ctx context.Context) (*runfile.Enriched, error) {
	if t.u == nil {
		u, err := table.ParseURL(t.raw)
		if err != nil {
			return nil, fatal(err)
		}
		if t.name, err = table.ParseName(t.outTable); err != nil {
			return nil, usagef("--out-table: %w", err)
		}
		t.u = u
	}
	db, err := table.Open(ctx, t.u, table.Options{ReadOnly: true})
	if err != nil {
		return nil, TableError(err)
	}
	t.db = db
	src, err := table.OpenOutTable(ctx, db, t.name, t.Title())
	if err != nil {
		return nil, TableError(err)
	}
	if t.en, err = runfile.NewEnriched(t.Title(), src); err != nil {
		return nil, usage(err)
	}
	return t.en, nil
}

// Summary is the summary of the runs kept next to the out-table, if any
// (the set's when shards wrote it): a table written before runs tables
// existed just has none.
func (t *tableReadback) Summary(ctx context.Context) (*report.Summary, error) {
	st, err := report.FromRuns(table.Runs(ctx, t.db, t.name))
	switch {
	case errors.Is(err, table.ErrNoRuns):
		return nil, nil
	case errors.Is(err, report.ErrNotSummary):
		return nil, fatal(fmt.Errorf("runs table %s: %w", table.RunsName(t.name), err))
	case err != nil:
		return nil, TableError(err)
	}
	return st, nil
}

func (t *tableReadback) Close() error {
	if t.en != nil {
		_ = t.en.Close()
	}
	if t.db != nil {
		return t.db.Close()
	}
	return nil
}
