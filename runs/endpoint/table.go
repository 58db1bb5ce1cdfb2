package endpoint

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/internal/samefile"
	"github.com/addrclean/addrclean/journal"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/table"
	_ "github.com/addrclean/addrclean/table/postgres" // postgres:// and postgresql://
	_ "github.com/addrclean/addrclean/table/sqlite"   // sqlite:
)

func init() {
	Register(Kind{Name: "database table or query (postgres://, sqlite:)", Claims: table.IsURL, Plan: planTable, Readback: planTableReadback, Apply: planTableApply})
}

// tableSource is a table (--table, --where) or a query (--query) of a
// database INPUT.
type tableSource struct {
	u        *table.URL
	name     table.Name // --table; empty for --query
	query    string     // --query
	where    string     // --where
	shown    string     // the input as shown: its URL without password, and the table
	identity string     // the input for the journal: shown, and what is read
	opts     table.SourceOptions
	lockWait time.Duration // --lock-timeout, for reads too

	db  table.Database
	src *table.Source
}

// database is a source whose rows come from a database: table outputs
// default to it, and must be none of the relations it reads.
type database interface {
	// URL is the input's database.
	URL() *table.URL
	// Reads is what the input reads, for table.CheckNotInput, once open.
	Reads(idName string) table.Input
	// KeyType is the type of the id column, once open.
	KeyType(idName string) table.Type
	// IsTable reports whether the input reads table n of database u.
	IsTable(u *table.URL, n table.Name) bool
}

func planTable(s Spec) (Source, error) {
	u, err := table.ParseURL(s.Input)
	if err != nil {
		return nil, fatal(err)
	}
	t := &tableSource{u: u, query: s.Query, where: s.Where, opts: table.SourceOptions{PageRows: s.PageRows, Retry: s.Retry},
		lockWait: s.LockTimeout}
	switch {
	case (s.Table == "") == (s.Query == ""):
		return nil, usagef("a database INPUT needs --table NAME or --query \"SELECT ...\" (one of them)")
	case s.Where != "" && s.Table == "":
		return nil, usagef("--where goes with --table; with --query, write the condition in the query")
	case strings.TrimSpace(s.IDCol) == "":
		return nil, usagef("a database INPUT needs --id-col COLUMN: the id keys the results")
	}
	if s.Table != "" {
		if t.name, err = table.ParseName(s.Table); err != nil {
			return nil, usagef("--table: %w", err)
		}
		t.identity = u.Display + " table " + t.name.String()
		t.shown = t.identity
		if s.Where != "" {
			t.identity += " where " + s.Where
		}
	} else {
		t.identity = u.Display + " query " + s.Query
		t.shown = u.Display + " (query)"
	}
	if s.Out == "" && s.OutTable == "" && !s.DryRun {
		return nil, usagef("a database INPUT needs --out-table NAME or -o PATH for its results")
	}
	return t, nil
}

func (t *tableSource) Info() Info {
	return Info{Name: t.shown, Shardable: true, Uses: []samefile.Use{dbUse("INPUT", t.u, false)}, Key: t.identity}
}

func (t *tableSource) Check() error { return nil }

// Outputs are the files named, if any: a database input has no default
// file outputs.
func (t *tableSource) Outputs(out, review string) (string, string, error) { return out, review, nil }

// Identity is the database and what is read: its rows are checked one by
// one (a journalled row is used only for the same address).
func (t *tableSource) Identity(context.Context) (journal.Input, map[string]string, error) {
	return journal.Input{Path: t.identity}, map[string]string{"source": t.identity}, nil
}

// Connect opens the input's database, read only.
func (t *tableSource) Connect(ctx context.Context) error {
	db, err := table.Open(ctx, t.u, table.Options{ReadOnly: true, LockTimeout: t.lockWait})
	if err != nil {
		return readError(ctx, err)
	}
	t.db = db
	return nil
}

// Open starts reading the table or query: a table in keyset pages of its
// id, a query copied whole to a local file first, so that no transaction
// stays open while rows are verified.
func (t *tableSource) Open(ctx context.Context, _ readers.Options, spec readers.MappingSpec, log zerolog.Logger) (readers.Reader, error) {
	if t.db == nil {
		if err := t.Connect(ctx); err != nil {
			return nil, err
		}
	}
	if err := t.open(ctx, spec, log); err != nil {
		return nil, readError(ctx, err)
	}
	return t.src, nil
}

func (t *tableSource) open(ctx context.Context, spec readers.MappingSpec, log zerolog.Logger) error {
	opts := t.opts
	opts.Logger = log
	var err error
	if t.name.Table == "" {
		if t.src, err = table.OpenQuery(ctx, t.db, t.query, t.shown, opts); err != nil {
			return err
		}
		if m, err := readers.NewMapper(t.src.Header(), spec); err == nil {
			t.src.UseKey(m.Columns()["id"])
		}
		return nil
	}
	cols, err := t.db.Columns(ctx, t.name)
	if err != nil {
		return err
	}
	m, err := readers.NewMapper(table.Names(cols), spec)
	if err != nil {
		return fmt.Errorf("%s: %w", t.shown, err)
	}
	// The rows are read in id order, so that they are numbered alike in
	// every run and a resumed run finds its journal's rows.
	opts.Key = m.Columns()["id"]
	t.src, err = table.OpenTable(ctx, t.db, t.name, t.where, t.shown, opts)
	return err
}

func (t *tableSource) ReadError(ctx context.Context, err error) error { return readError(ctx, err) }

func (t *tableSource) Close() error {
	var err error
	if t.src != nil {
		err = t.src.Close()
	}
	if t.db != nil {
		_ = t.db.Close()
	}
	return err
}

func (t *tableSource) URL() *table.URL { return t.u }

func (t *tableSource) Reads(idName string) table.Input {
	in := table.Input{DB: t.db, Table: t.name, Query: t.query, Shown: "--query"}
	if t.name.Table != "" {
		in.Query = table.TableQuery(t.name, t.where, idName)
		in.Shown = "--table " + t.name.String()
	}
	return in
}

func (t *tableSource) KeyType(idName string) table.Type {
	if t.src == nil {
		return table.Text
	}
	return table.KeyType(t.src.Columns(), idName)
}

func (t *tableSource) IsTable(u *table.URL, n table.Name) bool {
	return t.name.Table != "" && sameDatabase(t.u, u) && n == t.name
}

// dbUse is the SQLite file of a database URL (no use for PostgreSQL, whose
// files are the server's): read, or with tables written in it.
func dbUse(flag string, u *table.URL, written bool) samefile.Use {
	if u == nil || u.Scheme != "sqlite" {
		return samefile.Use{}
	}
	role := samefile.ReadDatabase
	if written {
		role = samefile.WriteDatabase
	}
	return samefile.Use{Name: flag, Path: u.Path, Role: role}
}

// sameDatabase reports whether two database URLs name one database: one
// SQLite file however it is spelt (sqlite:crm.db, sqlite:./crm.db, a link),
// or one PostgreSQL URL once its spelling is normalised.
func sameDatabase(a, b *table.URL) bool {
	if a.Scheme == "sqlite" && b.Scheme == "sqlite" {
		return samefile.Same(a.Path, b.Path)
	}
	return a.Display == b.Display
}
