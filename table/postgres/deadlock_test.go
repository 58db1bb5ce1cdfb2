package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/addrclean/addrclean/internal/pgtest"
	"github.com/addrclean/addrclean/table"
	"github.com/addrclean/addrclean/table/tabletest"
)

// TestWriteAfterDeadlock: another session holds row C2 while a batch
// locks C1 and waits for C2, then asks for C1 itself: the server aborts
// the batch's transaction to break the deadlock (it waited first), and
// Write writes the batch again once the other session is done, instead of
// failing the run.
func TestWriteAfterDeadlock(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Require(t)
	name, err := srv.NewDB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	url := srv.URL(pgtest.User, name)
	// The server aborts the session whose deadlock check finds the circle,
	// and a session checks once, deadlock_timeout after it starts waiting.
	// The batch's sessions check after 2 s, long after the other session
	// closes the circle; the other's check (60 s) never comes: on a busy
	// machine with the default 1 s for both, the batch's check could come
	// too early and find nothing, and the other session was the one aborted.
	super, err := pgx.Connect(ctx, srv.URL("postgres", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := super.Exec(ctx, fmt.Sprintf(`ALTER DATABASE %s SET deadlock_timeout = '2s'`, table.QuoteIdent(name))); err != nil {
		t.Fatal(err)
	}
	_ = super.Close(ctx)
	db := tabletest.Open(t, url, false)
	cols := table.Columns(table.Enriched, false)
	tg, err := table.OpenTarget(ctx, db, table.Name{Table: "av"}, "id", table.Text, cols)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	col := cols[0]
	if col.Type != table.Text {
		t.Fatalf("column %s is %v: the test writes text into it", col.Name, col.Type)
	}
	recs := func(v string) []table.Record {
		var rs []table.Record
		for _, k := range []string{"C1", "C2"} {
			vals := make([]any, len(cols))
			vals[0] = v
			rs = append(rs, table.Record{Key: k, Values: vals})
		}
		return rs
	}
	if _, err := tg.Write(ctx, recs("first"), nil); err != nil {
		t.Fatal(err)
	}

	// As the superuser: deadlock_timeout is a superuser's setting.
	other, err := pgx.Connect(ctx, srv.URL("postgres", name))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	if _, err := other.Exec(ctx, `SET deadlock_timeout = '60s'`); err != nil {
		t.Fatal(err)
	}
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	update := fmt.Sprintf("UPDATE av SET %s = 'other' WHERE id = $1", table.QuoteIdent(col.Name))
	if _, err := tx.Exec(ctx, update, "C2"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := tg.Write(ctx, recs("batch"), nil)
		done <- err
	}()
	// The batch holds C1 and waits for C2: the other session's lock.
	for waiting := 0; waiting == 0; {
		if err := other.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE NOT granted`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	// Waiting for C1 now closes the circle; the batch's check finds it and
	// the server aborts the batch.
	if _, err := tx.Exec(ctx, update, "C1"); err != nil {
		t.Fatalf("the other session: %v (the server aborted it, not the batch)", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Write after a deadlock: %v", err)
	}
	rows, err := other.Query(ctx, fmt.Sprintf("SELECT id, %s FROM av ORDER BY id", table.QuoteIdent(col.Name)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ ID, V string }])
	if err != nil {
		t.Fatal(err)
	}
	if want := "[{C1 batch} {C2 batch}]"; fmt.Sprint(got) != want {
		t.Errorf("rows %v, want %s: the batch written again after the other session", got, want)
	}
}
