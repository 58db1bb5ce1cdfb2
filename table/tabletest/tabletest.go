package tabletest

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/addrclean/addrclean/table"
)

// Harness is what a driver's test gives the suite.
type Harness struct {
	// NewDB returns the URL of a fresh, empty database.
	NewDB func(t *testing.T) string
	// Types are the DDL type names of the kind for "int", "text", "bool",
	// "float" and "timestamp".
	Types map[string]string
	// FetchRows is the driver's read batch, so that a source crosses it.
	FetchRows int
}

// Open opens the database at raw (read-only when ro), closed when the test ends.
func Open(t testing.TB, raw string, ro bool) table.Database {
	t.Helper()
	u, err := table.ParseURL(raw)
	if err != nil {
		t.Fatal(err)
	}
	db, err := table.Open(context.Background(), u, table.Options{ReadOnly: ro})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// Exec runs setup statements through the database's writing side.
func Exec(t testing.TB, raw string, stmts ...string) {
	t.Helper()
	db := Open(t, raw, false)
	for _, s := range stmts {
		if err := db.Exec(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// ReadAll reads every row of query, checking the rows are numbered 1, 2, ...
func ReadAll(t *testing.T, db table.Database, query string) (header []string, rows [][]string) {
	t.Helper()
	src, err := table.OpenSource(context.Background(), db, query, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for {
		r, err := src.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if r.Num != len(rows)+1 || r.Line != r.Num {
			t.Fatalf("row numbered %d (line %d), want %d", r.Num, r.Line, len(rows)+1)
		}
		rows = append(rows, r.Cells)
	}
	return src.Header(), rows
}

// Attacks are the texts of item 6 of issue 20, as a --where and as a
// --query: each tries to run a second statement or to write.
func Attacks(dir string) (wheres, queries []string) {
	evil := filepath.Join(dir, "evil.db")
	cp := filepath.Join(dir, "copy.db")
	wheres = []string{
		"true); COMMIT; DROP TABLE canary; SELECT * FROM customers WHERE (true",
		"1); DROP TABLE canary; SELECT * FROM customers WHERE (1",
		"1); ATTACH DATABASE '" + evil + "' AS e; CREATE TABLE e.t(a); SELECT * FROM customers WHERE (1",
		"1); VACUUM INTO '" + cp + "'; SELECT * FROM customers WHERE (1",
		"1) AND id IN (SELECT 1 FROM canary); DELETE FROM canary; SELECT * FROM customers WHERE (1",
		"id IN (SELECT id FROM canary FOR UPDATE)",
	}
	queries = []string{
		"SELECT * FROM customers; COMMIT; DROP TABLE canary; SELECT 1",
		"SELECT * FROM customers; DROP TABLE canary",
		"DROP TABLE canary",
		"DELETE FROM canary RETURNING *",
		"WITH d AS (DELETE FROM canary RETURNING *) SELECT * FROM d",
		"SELECT * FROM customers FOR UPDATE",
		"ATTACH DATABASE '" + evil + "' AS e",
		"VACUUM INTO '" + cp + "'",
		"COMMIT",
	}
	return wheres, queries
}
