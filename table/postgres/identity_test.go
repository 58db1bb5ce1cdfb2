package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/addrclean/addrclean/internal/pgtest"
	"github.com/addrclean/addrclean/table"
	"github.com/addrclean/addrclean/table/tabletest"
)

// TestReads: the relations a query reads are the planner's, views and
// partitions resolved to their tables and parents, and the text is one
// statement: a second one never runs.
func TestReads(t *testing.T) {
	url := pgtest.RequireDB(t)
	tabletest.Exec(t, url,
		`CREATE TABLE cc (id int PRIMARY KEY, town text)`,
		`CREATE VIEW ccv AS SELECT * FROM cc WHERE town <> ''`,
		`CREATE TABLE parts (id int, town text) PARTITION BY RANGE (id)`,
		`CREATE TABLE parts_1 PARTITION OF parts FOR VALUES FROM (0) TO (100)`,
		`CREATE TABLE canary (x int)`)
	db := tabletest.Open(t, url, true)
	ctx := context.Background()
	names := func(rs []table.Relation) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Name)
		}
		slices.Sort(out)
		return out
	}
	for q, want := range map[string][]string{
		"SELECT * FROM ccv":                             {"public.cc"},
		"SELECT * FROM parts WHERE id < 10":             {"public.parts", "public.parts_1"},
		"SELECT 1 FROM cc JOIN ccv USING (id);":         {"public.cc"},
		`SELECT * FROM (SELECT * FROM "public"."cc") x`: {"public.cc"},
	} {
		rs, err := db.Reads(ctx, q)
		if err != nil || !slices.Equal(names(rs), want) {
			t.Errorf("%q: %v %v, want %v", q, names(rs), err, want)
		}
	}
	if _, err := db.Reads(ctx, "SELECT 1; COMMIT; DROP TABLE canary; SELECT 1"); err == nil {
		t.Error("a text of several statements was planned")
	}
	if _, err := db.Columns(ctx, table.Name{Table: "canary"}); err != nil {
		t.Fatalf("the second statement ran: %v", err)
	}
}

// TestConcurrentSetup: set-ups of the same new tables started together
// all succeed (they used to fail on pg_type's unique index: 35 of 40 in
// five rounds of eight).
func TestConcurrentSetup(t *testing.T) {
	for range 3 {
		url := pgtest.RequireDB(t)
		const n = 8
		errs := make(chan error, n)
		var start sync.WaitGroup
		start.Add(1)
		for range n {
			db := tabletest.Open(t, url, false)
			go func() {
				start.Wait()
				for _, k := range []table.Kind{table.Enriched, table.Review} {
					tg, err := table.OpenTarget(context.Background(), db, table.Name{Table: fmt.Sprint("t", k)}, "id", table.Text,
						table.Columns(k, true))
					if err != nil {
						errs <- err
						return
					}
					_ = tg.Close()
				}
				errs <- nil
			}()
		}
		start.Done()
		for range n {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
	}
}
