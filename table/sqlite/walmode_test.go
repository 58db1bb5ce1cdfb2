package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/addrclean/addrclean/internal/sqlitefile/filetest"
	"github.com/addrclean/addrclean/table"
)

// TestWALOnFirstWrite: opening an existing database for writing, and
// checking an output table in it, leave the file as it was, journal mode
// included; the first write (the set-up) puts it in WAL mode. A run refused
// after its checks must not have switched the user's database.
func TestWALOnFirstWrite(t *testing.T) {
	ctx := context.Background()
	path, db := openCustomers(t)
	out := table.Output{Name: table.Name{Table: "av"}, Key: "id", Cols: table.Columns(table.Enriched, false)}
	stmts, err := table.Plan(ctx, db, []table.Output{out})
	if err != nil || len(stmts) == 0 {
		t.Fatalf("plan: %d statements, %v", len(stmts), err)
	}
	if m := filetest.JournalMode(t, path); m != "delete" {
		t.Fatalf("after the checks the journal mode is %s, want delete as it was", m)
	}
	if err := table.Apply(ctx, db, []table.Output{out}, stmts); err != nil {
		t.Fatal(err)
	}
	if m := filetest.JournalMode(t, path); m != "wal" {
		t.Fatalf("after the set-up the journal mode is %s, want wal", m)
	}
}

// openCustomers makes an SQLite file holding a table cust and opens it as
// a table.Database (closed with the test).
func openCustomers(t *testing.T) (string, table.Database) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "crm.db")
	filetest.Exec(t, path, "CREATE TABLE cust (id TEXT PRIMARY KEY, street TEXT)")
	u, _ := table.ParseURL("sqlite:" + path)
	db, err := table.Open(context.Background(), u, table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return path, db
}
