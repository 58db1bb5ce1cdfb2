package tabletest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/table"
)

// readHarness is what a driver's test gives runRead.
type readHarness struct {
	Harness
	// LockTimeout is a statement that makes a statement of the writing
	// side that waits for a lock fail within seconds rather than wait for
	// ever; "" for a kind whose waits are bounded already.
	LockTimeout string
}

// runRead runs the suite of reading the input: one read-only statement,
// keyset pages, the spill of a query, cancellation.
func runRead(t *testing.T, h readHarness) {
	t.Run("OneReadOnlyStatement", func(t *testing.T) { testOneStatement(t, h.Harness) })
	t.Run("Pages", func(t *testing.T) { testPages(t, h.Harness) })
	t.Run("PagesRefuse", func(t *testing.T) { testPagesRefuse(t, h.Harness) })
	t.Run("QuerySpill", func(t *testing.T) { testQuerySpill(t, h) })
	t.Run("Cancelled", func(t *testing.T) { testCancelled(t, h.Harness) })
}

// numbers creates table name with ids 1..n (integers, not in id order on
// disk) and a text column v = 'v<id>'.
func numbers(t *testing.T, h Harness, url, name string, n int) {
	t.Helper()
	Exec(t, url, fmt.Sprintf("CREATE TABLE %s (id %s, v %s)", name, h.Types["int"], h.Types["text"]),
		fmt.Sprintf(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < %d)
			INSERT INTO %s SELECT %d - i, 'v' || (%d - i) FROM s`, n, name, n+1, n+1))
}

// drain reads src to its end or first error.
func drain(ctx context.Context, src *table.Source) (ids []string, err error) {
	for {
		r, err := src.Next(ctx)
		if errors.Is(err, io.EOF) {
			return ids, nil
		}
		if err != nil {
			return ids, err
		}
		ids = append(ids, r.ID)
	}
}

func testOneStatement(t *testing.T, h Harness) {
	url := h.NewDB(t)
	numbers(t, h, url, "customers", 5)
	Exec(t, url, fmt.Sprintf("CREATE TABLE canary (id %s)", h.Types["int"]), "INSERT INTO canary VALUES (1)")
	dir := t.TempDir()
	wheres, queries := Attacks(dir)
	// Even through a handle that may write, a source cannot.
	db := Open(t, url, false)
	ctx := context.Background()
	check := func(what string, err error) {
		t.Helper()
		// The user's to fix (exit 2), not a failure of the database.
		if !errors.Is(err, table.ErrBadQuery) {
			t.Errorf("%s: %v, want ErrBadQuery", what, err)
		}
		if _, rows := ReadAll(t, db, "SELECT count(*) FROM canary"); rows[0][0] != "1" {
			t.Fatalf("%s: the canary table was changed or dropped", what)
		}
		for _, f := range []string{"evil.db", "copy.db"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				t.Fatalf("%s: %s was written", what, f)
			}
		}
	}
	for _, w := range wheres {
		src, err := table.OpenTable(ctx, db, table.Name{Table: "customers"}, w, "test", table.SourceOptions{Key: "id", Logger: zerolog.Nop()})
		if err == nil {
			_, err = drain(ctx, src)
			src.Close()
		}
		check("--where "+w, err)
	}
	for _, q := range queries {
		src, err := table.OpenQuery(ctx, db, q, "test", table.SourceOptions{Logger: zerolog.Nop(), SpillDir: t.TempDir()})
		if err == nil {
			_, err = drain(ctx, src)
			src.Close()
		}
		check("--query "+q, err)
	}
}

func testPages(t *testing.T, h Harness) {
	url := h.NewDB(t)
	// 25 ids in pages of 4: the pages cross 9 to 10, where text order and
	// number order part.
	numbers(t, h, url, "big", 25)
	Exec(t, url, "INSERT INTO big VALUES (NULL, 'no id')")
	db := Open(t, url, true)
	ctx := context.Background()
	for _, c := range []struct {
		where string
		want  []string
	}{
		{"", seq(1, 25)},
		{"id % 2 = 0", evens(25)},
		{"v <> 'v3' -- a comment", slices.Delete(seq(1, 25), 2, 3)},
		{"id > 30", nil},
	} {
		for _, pageRows := range []int{4, 1, 1000} {
			src, err := table.OpenTable(ctx, db, table.Name{Table: "big"}, c.where, "test",
				table.SourceOptions{Key: "id", PageRows: pageRows, Logger: zerolog.Nop()})
			if err != nil {
				t.Fatalf("where %q: %v", c.where, err)
			}
			if got := src.Header(); !slices.Equal(got, []string{"id", "v"}) {
				t.Fatalf("header %q", got)
			}
			ids, err := drain(ctx, src)
			src.Close()
			if err != nil {
				t.Fatalf("where %q, pages of %d: %v", c.where, pageRows, err)
			}
			if !slices.Equal(ids, c.want) {
				t.Fatalf("where %q, pages of %d: ids %v, want %v", c.where, pageRows, ids, c.want)
			}
		}
	}

	// Text ids page in the database's order of text.
	Exec(t, url, fmt.Sprintf("CREATE TABLE words (code %s, n %s)", h.Types["text"], h.Types["int"]),
		"INSERT INTO words VALUES ('b', 2), ('a', 1), ('d', 4), ('c', 3), ('e', 5)")
	src, err := table.OpenTable(ctx, db, table.Name{Table: "words"}, "", "test",
		table.SourceOptions{Key: "code", PageRows: 2, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := drain(ctx, src)
	src.Close()
	if err != nil || !slices.Equal(ids, []string{"a", "b", "c", "d", "e"}) {
		t.Fatalf("text ids %v, %v", ids, err)
	}
}

func seq(from, to int) []string {
	var s []string
	for i := from; i <= to; i++ {
		s = append(s, fmt.Sprint(i))
	}
	return s
}

func evens(to int) []string {
	var s []string
	for i := 2; i <= to; i += 2 {
		s = append(s, fmt.Sprint(i))
	}
	return s
}

func testPagesRefuse(t *testing.T, h Harness) {
	url := h.NewDB(t)
	numbers(t, h, url, "big", 10)
	Exec(t, url, "INSERT INTO big VALUES (4, 'again')", "INSERT INTO big VALUES (8, 'again')")
	db := Open(t, url, true)
	ctx := context.Background()
	for _, c := range []struct {
		where    string
		pageRows int
		want     error
	}{
		// 4 twice in one page, 8 twice across two pages of 4 (4,4,5,6 | 7,8 | 8).
		{"id <= 5", 10, table.ErrDuplicateKey},
		{"id >= 7", 2, table.ErrDuplicateKey},
		{"id <> 4", 3, table.ErrDuplicateKey},
		// A condition that closes its parenthesis undoes the paging.
		{"id = 1) OR (id > 0", 3, table.ErrPaging},
	} {
		src, err := table.OpenTable(ctx, db, table.Name{Table: "big"}, c.where, "test",
			table.SourceOptions{Key: "id", PageRows: c.pageRows, Logger: zerolog.Nop()})
		if err == nil {
			_, err = drain(ctx, src)
			src.Close()
		}
		if !errors.Is(err, c.want) {
			t.Errorf("where %q in pages of %d: %v, want %v", c.where, c.pageRows, err, c.want)
		}
	}
}

// testQuerySpill reads a query whole before its first row is used: the
// table can then be altered and dropped while rows are still read.
func testQuerySpill(t *testing.T, h readHarness) {
	url := h.NewDB(t)
	n := 2*h.FetchRows + 7
	numbers(t, h.Harness, url, "big", n)
	db := Open(t, url, false)
	ctx := context.Background()
	dir := t.TempDir()
	src, err := table.OpenQuery(ctx, db, "SELECT v, id FROM big ORDER BY id DESC", "test",
		table.SourceOptions{Logger: zerolog.Nop(), SpillDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the spill file has a name: %v", ents)
	}
	src.UseKey("id")
	first, err := src.Next(ctx)
	if err != nil || first.ID != fmt.Sprint(n) || first.Cells[0] != fmt.Sprintf("v%d", n) {
		t.Fatalf("first row %+v, %v", first, err)
	}
	// No transaction of the reader's holds the table.
	if h.LockTimeout != "" {
		if err := db.Exec(ctx, h.LockTimeout); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{"ALTER TABLE big ADD COLUMN w " + h.Types["text"], "DROP TABLE big"} {
		if err := db.Exec(ctx, s); err != nil {
			t.Fatalf("%s while the query's rows are read: %v", s, err)
		}
	}
	ids, err := drain(ctx, src)
	if err != nil || len(ids) != n-1 || ids[len(ids)-1] != "1" {
		t.Fatalf("%d more rows, last %v: %v", len(ids), ids[len(ids)-1:], err)
	}
}

// testCancelled: a read whose context ends reports the cancellation, not a
// failure of the database.
func testCancelled(t *testing.T, h Harness) {
	url := h.NewDB(t)
	numbers(t, h, url, "big", 50)
	db := Open(t, url, true)
	for _, open := range []func(ctx context.Context) (*table.Source, error){
		func(ctx context.Context) (*table.Source, error) {
			return table.OpenTable(ctx, db, table.Name{Table: "big"}, "", "test", table.SourceOptions{Key: "id", PageRows: 3, Logger: zerolog.Nop()})
		},
		func(ctx context.Context) (*table.Source, error) {
			return table.OpenQuery(ctx, db, "SELECT * FROM big", "test", table.SourceOptions{Logger: zerolog.Nop(), SpillDir: t.TempDir()})
		},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		src, err := open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := src.Next(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		_, err = drain(ctx, src)
		src.Close()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("read after a cancel: %v, want context.Canceled", err)
		}
		// Cancelled before it starts.
		if _, err := open(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("open with a cancelled context: %v, want context.Canceled", err)
		}
	}
}
