package cache

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/addrclean/addrclean/internal/pgtest"
	"github.com/addrclean/addrclean/internal/sqlitefile"
)

// TestSchemaInPostgreSQL: the cache's tables, created by the same DDL in
// PostgreSQL, hold an answer as the cache writes it, and give it back with
// its checksum intact: the table a later issue shares between runners.
func TestSchemaInPostgreSQL(t *testing.T) {
	srv := pgtest.Require(t)
	ctx := context.Background()
	db, err := srv.NewDB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, srv.URL(pgtest.User, db))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, ddl := range append([]string{sqlitefile.MetaDDL}, schema...) {
		if _, err := conn.Exec(ctx, ddl); err != nil {
			t.Fatalf("%s: %v", ddl, err)
		}
	}
	ns := LiveNamespace("https://api.example.com", "k")
	e := entry{ns: ns.ID, key: entryKey("1 main street"), at: time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC).UnixMilli(),
		answer: []byte(`{"type":"verify","address":{"id":"A1","label":["1 Main Street","Cork"]}}`)}
	if _, err := conn.Exec(ctx, "INSERT INTO cache_namespaces (id, label) VALUES ($1, $2)", ns.ID, ns.Label); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO cache_answers (namespace, key, obtained_ms, answer, crc) VALUES ($1, $2, $3, $4, $5)",
		e.ns, e.key, e.at, string(e.answer), int64(checksum(e.ns, e.key, e.at, e.answer))); err != nil {
		t.Fatal(err)
	}
	var (
		at, crc int64
		answer  string
	)
	if err := conn.QueryRow(ctx, "SELECT obtained_ms, answer, crc FROM cache_answers WHERE namespace = $1 AND key = $2", e.ns, e.key).
		Scan(&at, &answer, &crc); err != nil {
		t.Fatal(err)
	}
	if at != e.at || answer != string(e.answer) || uint32(crc) != checksum(e.ns, e.key, at, []byte(answer)) {
		t.Fatalf("read back %d %s %d", at, answer, crc)
	}
	// The key is the primary key: a second answer for it is a conflict, as
	// the upsert of a shared cache needs.
	if _, err := conn.Exec(ctx, "INSERT INTO cache_answers VALUES ($1, $2, 0, '{}', 0)", e.ns, e.key); err == nil {
		t.Fatal("a second row for the same namespace and key")
	}
}
