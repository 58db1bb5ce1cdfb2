package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/addrclean/addrclean/internal/pgtest"
	"github.com/addrclean/addrclean/table"
)

// TestReadLockTimeout: reading a table another session holds locked (an
// ALTER TABLE, a VACUUM FULL) waits at most the lock timeout, then fails
// with ErrLock naming the table, as a write does; it used to wait, without
// a word, for as long as the lock was held. A table and a query alike.
func TestReadLockTimeout(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Require(t)
	name, err := srv.NewDB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other, err := pgx.Connect(ctx, srv.URL(pgtest.User, name))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	if _, err := other.Exec(ctx, "CREATE TABLE cust (id int PRIMARY KEY, street text); INSERT INTO cust VALUES (1, '1 Main St')"); err != nil {
		t.Fatal(err)
	}
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "LOCK TABLE cust IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	u, err := table.ParseURL(srv.URL(pgtest.User, name))
	if err != nil {
		t.Fatal(err)
	}
	db, err := table.Open(ctx, u, table.Options{ReadOnly: true, LockTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := table.Name{Table: "cust"}
	for _, c := range []struct {
		what string
		open func(context.Context) error
	}{
		{"table", func(ctx context.Context) error {
			src, err := table.OpenTable(ctx, db, n, "", "table cust", table.SourceOptions{Key: "id"})
			if err == nil {
				src.Close()
			}
			return err
		}},
		{"query", func(ctx context.Context) error {
			src, err := table.OpenSource(ctx, db, table.TableQuery(n, "", "id"), "table cust")
			if err == nil {
				src.Close()
			}
			return err
		}},
	} {
		// The bound only keeps a failing test from hanging while the
		// lock is held.
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := c.open(cctx)
		cancel()
		if !errors.Is(err, table.ErrLock) || !strings.Contains(err.Error(), "cust") {
			t.Errorf("%s read while the table is locked: %v; want ErrLock naming the table", c.what, err)
		}
	}
}
