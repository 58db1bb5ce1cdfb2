package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/addrclean/addrclean/table"
)

// TestReadsRunsOneStatement: the tables a query reads are found without
// running anything after its first statement, however the text hides it.
func TestReadsRunsOneStatement(t *testing.T) {
	dir := t.TempDir()
	u, err := table.ParseURL("sqlite:" + filepath.Join(dir, "crm.db"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := Open(ctx, u, table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Exec(ctx, "CREATE TABLE cust (id TEXT PRIMARY KEY, town TEXT)"); err != nil {
		t.Fatal(err)
	}
	copyDB := filepath.Join(dir, "copy.db")
	for _, q := range []string{
		"SELECT * FROM cust; VACUUM INTO '" + copyDB + "'",
		"SELECT * FROM cust WHERE town <> ';' ;\n VACUUM INTO '" + copyDB + "'",
		"SELECT * FROM cust -- ;\n; VACUUM INTO '" + copyDB + "'",
		"SELECT * FROM cust WHERE (1); ATTACH DATABASE '" + copyDB + "' AS e; SELECT (1)",
	} {
		if _, err := db.Reads(ctx, q); !errors.Is(err, table.ErrBadQuery) {
			t.Errorf("%q: %v, want ErrBadQuery", q, err)
		}
		if _, err := os.Stat(copyDB); err == nil {
			t.Fatalf("%q ran its second statement", q)
		}
	}
	for _, q := range []string{"SELECT * FROM cust;", "SELECT * FROM cust WHERE town = 'a;b' ; -- done", `SELECT "a;b" FROM (SELECT 1 AS "a;b"), cust /* ; */`} {
		rels, err := db.Reads(ctx, q)
		if err != nil || len(rels) != 1 || rels[0].ID != "main.cust" {
			t.Errorf("%q: %v, %v; want main.cust", q, rels, err)
		}
	}
}
