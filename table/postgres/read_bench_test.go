package postgres

import (
	"context"
	"strconv"
	"testing"

	"github.com/addrclean/addrclean/internal/pgtest"
	"github.com/addrclean/addrclean/table"
	"github.com/addrclean/addrclean/table/tabletest"
)

var benchTypes = map[string]string{"int": "bigint", "text": "text"}

// BenchmarkRead reads a 100,000-row table whose id is its primary key as a
// run does: in keyset pages of several sizes; as a --query, copied to a
// local file first; and (cursor) streamed by one SELECT ... ORDER BY id, as
// main read a table and apply reads its join. noindex- reads a table
// without an index on the id, where each page sorts the whole table, in
// pages of 1,000 and of the default for it, UnindexedPageRows.
func BenchmarkRead(b *testing.B) {
	url := pgtest.RequireDB(b)
	tabletest.FillBench(b, url, "bench", true, benchTypes)
	tabletest.FillBench(b, url, "noindex", false, benchTypes)
	u, _ := table.ParseURL(url)
	db, err := Open(context.Background(), u, table.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	n := table.Name{Table: "bench"}
	pages := func(n table.Name, rows int) func(b *testing.B) {
		return func(b *testing.B) {
			tabletest.BenchRead(b, func(ctx context.Context) (*table.Source, error) {
				return table.OpenTable(ctx, db, n, "", "bench", table.SourceOptions{Key: "id", PageRows: rows})
			})
		}
	}
	for _, rows := range []int{100, 1000, 10000} {
		b.Run("pages-"+strconv.Itoa(rows), pages(n, rows))
	}
	b.Run("noindex-pages-1000", pages(table.Name{Table: "noindex"}, 1000))
	b.Run("noindex-default", pages(table.Name{Table: "noindex"}, 0)) // UnindexedPageRows
	b.Run("query-spill", func(b *testing.B) {
		tabletest.BenchRead(b, func(ctx context.Context) (*table.Source, error) {
			return table.OpenQuery(ctx, db, table.TableQuery(n, "", "id"), "bench", table.SourceOptions{SpillDir: b.TempDir()})
		})
	})
	b.Run("cursor", func(b *testing.B) {
		tabletest.BenchRead(b, func(ctx context.Context) (*table.Source, error) {
			return table.OpenSource(ctx, db, table.TableQuery(n, "", "id"), "bench")
		})
	})
}
