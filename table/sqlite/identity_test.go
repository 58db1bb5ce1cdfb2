package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestSetupLockTimeout: a set-up that cannot have the write lock within
// the lock timeout fails with ErrLock naming the table and the statement,
// and leaves the database as it was.
func TestSetupLockTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crm.db")
	u, err := table.ParseURL("sqlite:" + path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := Open(ctx, u, table.Options{LockTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, "ROLLBACK")
	// Were the driver's default busy timeout (10s) in force instead, the
	// context would end the wait first, with another error.
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err = db.Setup(wctx, []table.Statement{{Table: table.Name{Table: "av"}, SQL: "CREATE TABLE av (id TEXT PRIMARY KEY)"}})
	if !errors.Is(err, table.ErrLock) || !strings.Contains(err.Error(), "BEGIN IMMEDIATE") {
		t.Fatalf("Setup under a held lock: %v, want ErrLock naming the statement", err)
	}
}
