package endpoint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/internal/pgtest"
	"github.com/addrclean/addrclean/internal/samefile"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/table"
	"github.com/addrclean/addrclean/table/tabletest"
	"github.com/addrclean/addrclean/writers"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestNew: each spelling of INPUT finds its kind, and what the run needs
// to know of it (the name it is shown by, no password; shard; stdin; the
// file a clash check compares) is told without I/O.
func TestNew(t *testing.T) {
	csv := touch(t, "crm.csv")
	tests := []struct {
		name      string
		spec      Spec
		shown     string
		shardable bool
		stdin     bool
		use       samefile.Use
	}{
		{"csv", Spec{Input: csv}, csv, false, false, samefile.Use{Name: "INPUT", Path: csv, Role: samefile.Read}},
		{"stdin", Spec{Input: "-", Out: "o.csv", Review: "r.csv"}, "-", false, true, samefile.Use{Name: "INPUT", Path: "-", Role: samefile.Read}},
		{"postgres table, password hidden", Spec{Input: "postgres://etl:s3cret@db.example.com/crm", Table: "crm.customers", IDCol: "id", OutTable: "av", LockTimeout: time.Second},
			"postgres://etl@db.example.com/crm table crm.customers", true, false, samefile.Use{}},
		{"postgresql query", Spec{Input: "postgresql://etl@db/crm", Query: "SELECT 1", IDCol: "id", Out: "o.csv", LockTimeout: time.Second},
			"postgres://etl@db/crm (query)", true, false, samefile.Use{}},
		{"sqlite quoted table", Spec{Input: "sqlite:crm.db", Table: `"Cust Table"`, IDCol: "id", DryRun: true, LockTimeout: time.Second},
			`sqlite:crm.db table Cust Table`, true, false, samefile.Use{Name: "INPUT", Path: "crm.db", Role: samefile.ReadDatabase}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			info := p.Info()
			if info.Name != tt.shown || info.Shardable != tt.shardable || info.Stdin != tt.stdin {
				t.Errorf("got %q shardable=%v stdin=%v, want %q %v %v", info.Name, info.Shardable, info.Stdin, tt.shown, tt.shardable, tt.stdin)
			}
			if strings.Contains(info.Name+info.Key, "s3cret") {
				t.Errorf("the password shows: %q, key %q", info.Name, info.Key)
			}
			if uses := p.InputUses(); len(uses) != 1 || uses[0] != tt.use {
				t.Errorf("input uses %+v, want %+v", uses, tt.use)
			}
		})
	}
}

// TestNewRefuses: what cannot be read or written is refused before
// anything is opened, as a usage error saying what to change (a malformed
// URL is fatal: the URL, not a flag, is wrong).
func TestNewRefuses(t *testing.T) {
	db := "sqlite:crm.db"
	csv := touch(t, "crm.csv")
	tests := []struct {
		name  string
		spec  Spec
		class Class
		want  string
	}{
		{"table flag on a file", Spec{Input: csv, Table: "cust"}, Usage, "--table reads from a database: INPUT must then be a DBURL"},
		{"where on a file", Spec{Input: csv, Where: "x"}, Usage, "--where reads from a database"},
		{"out-db alone", Spec{Input: csv, OutDB: db}, Usage, "--out-db names the database of --out-table and --review-table"},
		{"out-table of a file without out-db", Spec{Input: csv, OutTable: "av"}, Usage, "need --out-db DBURL"},
		{"unreadable extension", Spec{Input: "crm.xls"}, Usage, ".xls"},
		{"neither table nor query", Spec{Input: db, IDCol: "id", Out: "o.csv"}, Usage, "needs --table NAME or --query"},
		{"both", Spec{Input: db, Table: "a", Query: "SELECT 1", IDCol: "id", Out: "o.csv"}, Usage, "(one of them)"},
		{"where with query", Spec{Input: db, Query: "SELECT 1", Where: "x", IDCol: "id", Out: "o.csv"}, Usage, "--where goes with --table"},
		{"no id", Spec{Input: db, Table: "cust", Out: "o.csv"}, Usage, "needs --id-col COLUMN"},
		{"no output", Spec{Input: db, Table: "cust", IDCol: "id"}, Usage, "needs --out-table NAME or -o PATH"},
		{"bad lock timeout", Spec{Input: db, Table: "cust", IDCol: "id", OutTable: "av"}, Usage, "--lock-timeout 0s"},
		{"same out and review", Spec{Input: db, Table: "cust", IDCol: "id", OutTable: "av", ReviewTable: "av", LockTimeout: time.Second}, Usage, "are the same table av"},
		{"output is the input", Spec{Input: db, Table: "cust", IDCol: "id", OutTable: "cust", LockTimeout: time.Second}, Usage, "the output table cust is the input table"},
		{"output is the input, other spelling of the file", Spec{Input: db, Table: "cust", IDCol: "id", ReviewTable: "cust", Out: "o.csv", OutDB: "sqlite:./crm.db", LockTimeout: time.Second},
			Usage, "the output table cust is the input table"},
		{"malformed out-db", Spec{Input: csv, OutTable: "av", OutDB: "sqlite:", LockTimeout: time.Second}, Fatal, "--out-db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.spec)
			var e *Error
			if !errors.As(err, &e) || e.Class != tt.class || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v (%#v), want class %d with %q", err, e, tt.class, tt.want)
			}
		})
	}
}

// TestFileOutputs: a file input's outputs default beside it, in its
// format; a database input has no default file outputs.
func TestFileOutputs(t *testing.T) {
	dir := t.TempDir()
	in := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct{ input, out, review string }{
		{in("crm.csv"), in("crm.cleaned.csv"), in("crm.review.csv")},
		{in("crm.xlsx"), in("crm.cleaned.xlsx"), in("crm.review.xlsx")},
		{in("crm.xlsm"), in("crm.cleaned.xlsx"), in("crm.review.xlsx")},
		{in("crm.tab"), in("crm.cleaned.tsv"), in("crm.review.tsv")},
		{in("crm.TSV"), in("crm.cleaned.TSV"), in("crm.review.TSV")},
		{"sqlite:crm.db", "", ""},
	}
	for _, tt := range tests {
		if !table.IsURL(tt.input) {
			touchAt(t, tt.input)
		}
		p, err := New(Spec{Input: tt.input, Table: map[bool]string{true: "cust"}[table.IsURL(tt.input)], IDCol: "id", DryRun: true, LockTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		out, review, err := p.Files()
		if err != nil || out != tt.out || review != tt.review {
			t.Errorf("%s: got %q, %q, %v; want %q, %q", tt.input, out, review, err, tt.out, tt.review)
		}
	}
	p, _ := New(Spec{Input: "-"})
	if _, _, err := p.Files(); err == nil || !strings.Contains(err.Error(), "reading stdin: pass -o PATH") {
		t.Errorf("stdin without outputs: %v", err)
	}
	p, _ = New(Spec{Input: touch(t, "a.csv"), Review: "-"})
	if _, _, err := p.Files(); err == nil || !strings.Contains(err.Error(), "--review cannot be stdout") {
		t.Errorf("review on stdout: %v", err)
	}
}

// TestTableRun: a table input and table outputs through the plan alone,
// over SQLite and PostgreSQL, with the spellings users type: the rows are
// read in id order, the output tables are created and written, and an
// output that is the input under another spelling is refused before any
// table is created.
func TestTableRun(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			dbURL := "sqlite:" + filepath.Join(t.TempDir(), "crm.db")
			schema := "main"
			if kind == "postgres" {
				dbURL, schema = pgtest.RequireDB(t), "public"
			}
			tabletest.Exec(t, dbURL, `CREATE TABLE "Cust" (id integer PRIMARY KEY, street text, town text)`,
				`INSERT INTO "Cust" VALUES (2, '1 Main St', 'Cork'), (1, '2 High St', 'Dublin')`)
			spec := Spec{Input: dbURL, Table: `"Cust"`, IDCol: "id", OutTable: "av", ReviewTable: "rv", LockTimeout: 5 * time.Second}

			clash := spec
			clash.OutTable = schema + `."Cust"`
			p, err := New(clash)
			if err != nil {
				t.Fatal(err)
			}
			r, err := p.Open(ctx, readers.Options{}, readers.MappingSpec{ID: "id", DefaultCountry: "IE"}, zerolog.Nop(), true)
			if err != nil {
				t.Fatal(err)
			}
			var e *Error
			if err := p.CheckTables(ctx, "id"); !errors.As(err, &e) || e.Class != Usage {
				t.Fatalf("an out-table that is the input: %v, want a usage error", err)
			}
			_ = r
			p.Close()
			if _, err := tabletest.Open(t, dbURL, true).Columns(ctx, table.Name{Table: "rv"}); !errors.Is(err, table.ErrNoTable) {
				t.Fatalf("a refused set-up created the review table (%v)", err)
			}

			p, err = New(spec)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			src, err := p.Open(ctx, readers.Options{}, readers.MappingSpec{ID: "id", DefaultCountry: "IE"}, zerolog.Nop(), true)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for {
				row, err := src.Next(ctx)
				if err != nil {
					break
				}
				ids = append(ids, row.Cells[0])
			}
			if !slices.Equal(ids, []string{"1", "2"}) {
				t.Errorf("rows read in order %v, want by id", ids)
			}
			if err := p.CheckTables(ctx, "id"); err != nil {
				t.Fatal(err)
			}
			// The check changes nothing: the DDL waits for CreateTables.
			for _, n := range []string{"av", "rv", "av_runs"} {
				if _, err := tabletest.Open(t, dbURL, true).Columns(ctx, table.Name{Table: n}); !errors.Is(err, table.ErrNoTable) {
					t.Fatalf("CheckTables created %s (%v)", n, err)
				}
			}
			if err := p.CreateTables(ctx, zerolog.Nop()); err != nil {
				t.Fatal(err)
			}
			outs, err := p.OpenOutputs(ctx, src, "id", writers.Options{}, zerolog.Nop())
			if err != nil || len(outs) != 2 {
				t.Fatalf("%d outputs, %v; want the two tables", len(outs), err)
			}
			for _, w := range outs {
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
			}
			out, review := p.Shown("", "")
			if !strings.HasPrefix(out, "table av in ") || !strings.HasPrefix(review, "table rv in ") {
				t.Errorf("shown %q, %q", out, review)
			}
			in, extra, err := p.Identity(ctx)
			if err != nil || in.Path != p.Info().Key || extra["source"] != in.Path {
				t.Errorf("identity %+v %v %v", in, extra, err)
			}
			if j := p.JournalPath("", "", ""); j == p.JournalPath("", "", "1/2") {
				t.Errorf("two shards share the journal %s", j)
			}

			// --query: an output table the query reads, spelt otherwise, is
			// refused; the file outputs of a query run are what -o names.
			q := Spec{Input: dbURL, Query: `SELECT id, street, town FROM "Cust" ORDER BY id`, IDCol: "id", Out: filepath.Join(t.TempDir(), "q.csv"),
				OutTable: schema + `."Cust"`, LockTimeout: 5 * time.Second}
			qp, err := New(q)
			if err != nil {
				t.Fatal(err)
			}
			defer qp.Close()
			if _, err := qp.Open(ctx, readers.Options{}, readers.MappingSpec{ID: "id", DefaultCountry: "IE"}, zerolog.Nop(), true); err != nil {
				t.Fatal(err)
			}
			if err := qp.CheckTables(ctx, "id"); !errors.As(err, &e) || e.Class != Usage {
				t.Fatalf("an out-table the query reads: %v, want a usage error", err)
			}
			if out, review, err := qp.Files(); err != nil || out != q.Out || review != "" {
				t.Errorf("query run's files %q, %q, %v", out, review, err)
			}
		})
	}
}

// TestPrepareInterrupted: Ctrl-C during the checks, or during the set-up
// of the output tables, is Interrupted, and nothing was created.
func TestPrepareInterrupted(t *testing.T) {
	for _, kind := range []string{"postgres", "sqlite"} {
		for _, during := range []string{"check", "set-up"} {
			t.Run(kind+" "+during, func(t *testing.T) {
				dbURL := "sqlite:" + filepath.Join(t.TempDir(), "crm.db")
				if kind == "postgres" {
					dbURL = pgtest.RequireDB(t)
				}
				p, err := New(Spec{Input: touch(t, "x.csv"), OutTable: "av", OutDB: dbURL, LockTimeout: time.Second})
				if err != nil {
					t.Fatal(err)
				}
				p.tables.db = tabletest.Open(t, dbURL, false)
				ctx, cancel := context.WithCancel(context.Background())
				if during == "set-up" {
					if err := p.CheckTables(ctx, "id"); err != nil {
						t.Fatal(err)
					}
				}
				cancel()
				err = p.CheckTables(ctx, "id")
				if during == "set-up" {
					err = p.CreateTables(ctx, zerolog.Nop())
				}
				var e *Error
				if !errors.As(err, &e) || e.Class != Interrupted {
					t.Fatalf("got %v, want Interrupted", err)
				}
				if _, err := tabletest.Open(t, dbURL, true).Columns(context.Background(), table.Name{Table: "av"}); !errors.Is(err, table.ErrNoTable) {
					t.Fatalf("the out-table exists after an interrupted set-up (%v)", err)
				}
			})
		}
	}
}

// touch makes an empty file name in a temporary directory.
func touch(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	touchAt(t, path)
	return path
}

func touchAt(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("street,town\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCheckNewOutDBLeavesNothing: the checks of output tables in an SQLite
// --out-db still to create, over a file input and over a table of another
// SQLite file, create nothing on disk: not the file, nor a scratch
// database, in its directory or in the system's temporary one. The set-up
// then creates the file and its tables.
func TestCheckNewOutDBLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // os.TempDir, where a scratch file would go
	ctx := context.Background()
	dir := t.TempDir()
	csv := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(csv, []byte("id,street,town\n1,2 High St,Dublin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	crm := "sqlite:" + filepath.Join(dir, "crm.db")
	tabletest.Exec(t, crm, "CREATE TABLE cust (id integer PRIMARY KEY, street text, town text)")
	entries := func() []string {
		var names []string
		for _, d := range []string{dir, tmp} {
			es, err := os.ReadDir(d)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				names = append(names, filepath.Join(d, e.Name()))
			}
		}
		return names
	}
	for _, tc := range []struct {
		name string
		spec Spec
	}{
		{"file input", Spec{Input: csv, Out: filepath.Join(dir, "out.csv")}},
		{"SQLite table input", Spec{Input: crm, Table: "cust", IDCol: "id"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".db")
			s := tc.spec
			s.OutDB, s.OutTable, s.ReviewTable, s.LockTimeout = "sqlite:"+db, "av", "rv", 5*time.Second
			p, err := New(s)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			before := entries()
			if _, err := p.Open(ctx, readers.Options{}, readers.MappingSpec{ID: "id", DefaultCountry: "IE"}, zerolog.Nop(), true); err != nil {
				t.Fatal(err)
			}
			if err := p.CheckTables(ctx, "id"); err != nil {
				t.Fatal(err)
			}
			if after := entries(); !slices.Equal(after, before) {
				t.Fatalf("the checks left %q, had %q", after, before)
			}
			if err := p.CreateTables(ctx, zerolog.Nop()); err != nil {
				t.Fatal(err)
			}
			if _, err := tabletest.Open(t, "sqlite:"+db, true).Columns(ctx, table.Name{Table: "rv"}); err != nil {
				t.Fatalf("the set-up did not create the review table: %v", err)
			}
		})
	}
}
