package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/addrclean/addrclean/table"
)

// TestUniqueKey pins which keys ON CONFLICT can use: a single-column
// primary key (INTEGER, the rowid, has no index) or unique index, not a
// composite key, a plain column or another column's key.
func TestUniqueKey(t *testing.T) {
	ctx := context.Background()
	u, _ := table.ParseURL("sqlite:" + filepath.Join(t.TempDir(), "x.db"))
	db, err := table.Open(ctx, u, table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"CREATE TABLE a (id INTEGER PRIMARY KEY, v TEXT)", "CREATE TABLE b (id TEXT PRIMARY KEY, v TEXT)",
		"CREATE TABLE c (id TEXT, v TEXT)", "CREATE TABLE d (id TEXT, v TEXT, PRIMARY KEY (id, v))", "CREATE TABLE e (id TEXT, v TEXT)", "CREATE UNIQUE INDEX ei ON e(id)",
		"CREATE TABLE f (x TEXT PRIMARY KEY, id TEXT)"} {
		if err := db.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for tb, want := range map[string]bool{"a": true, "b": true, "c": false, "d": false, "e": true, "f": false} {
		got, err := db.UniqueKey(ctx, table.Name{Table: tb}, "id")
		if err != nil || got != want {
			t.Errorf("%s: %v %v want %v", tb, got, err, want)
		}
	}
}
