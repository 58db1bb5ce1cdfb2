package tabletest

import (
	"context"
	"strconv"
	"testing"

	"github.com/addrclean/addrclean/table"
)

// BenchmarkRead reads a BenchRows-row table of the database at url (empty,
// of a kind whose DDL types are types) whose id is its primary key as a run
// does: in keyset pages of several sizes; as a --query, copied to a local
// file first; and (cursor) streamed by one SELECT ... ORDER BY id, as main
// read a table and apply reads its join. noindex- reads a table without an
// index on the id, where each page sorts the whole table, in pages of 1,000
// and of the default for it, table.UnindexedPageRows.
func BenchmarkRead(b *testing.B, url string, types map[string]string) {
	FillBench(b, url, "bench", true, types)
	FillBench(b, url, "noindex", false, types)
	u, _ := table.ParseURL(url)
	db, err := table.Open(context.Background(), u, table.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	n := table.Name{Table: "bench"}
	pages := func(n table.Name, rows int) func(b *testing.B) {
		return func(b *testing.B) {
			BenchRead(b, func(ctx context.Context) (*table.Source, error) {
				return table.OpenTable(ctx, db, n, "", "bench", table.SourceOptions{Key: "id", PageRows: rows})
			})
		}
	}
	for _, rows := range []int{100, 1000, 10000} {
		b.Run("pages-"+strconv.Itoa(rows), pages(n, rows))
	}
	b.Run("noindex-pages-1000", pages(table.Name{Table: "noindex"}, 1000))
	b.Run("noindex-default", pages(table.Name{Table: "noindex"}, 0))
	b.Run("query-spill", func(b *testing.B) {
		BenchRead(b, func(ctx context.Context) (*table.Source, error) {
			return table.OpenQuery(ctx, db, table.TableQuery(n, "", "id"), "bench", table.SourceOptions{SpillDir: b.TempDir()})
		})
	})
	b.Run("cursor", func(b *testing.B) {
		BenchRead(b, func(ctx context.Context) (*table.Source, error) {
			return table.OpenSource(ctx, db, table.TableQuery(n, "", "id"), "bench")
		})
	})
}
