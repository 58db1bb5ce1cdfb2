package tabletest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/internal/childrun"
	"github.com/addrclean/addrclean/table"
)

// benchRows is the size of the table benchRead reads.
const benchRows = 100_000

// fillBench creates table name of benchRows rows in the database at url: an
// integer id (stored out of id order), its primary key when indexed, and
// eight text columns shaped like a CRM export's.
func fillBench(b *testing.B, url, name string, indexed bool, types map[string]string) {
	b.Helper()
	cols := []string{"id " + types["int"]}
	if indexed {
		cols[0] += " PRIMARY KEY"
	}
	for _, c := range []string{"name", "line1", "line2", "town", "county", "postcode", "country", "phone"} {
		cols = append(cols, c+" "+types["text"])
	}
	Exec(b, url, fmt.Sprintf("CREATE TABLE %s (%s)", name, strings.Join(cols, ", ")),
		fmt.Sprintf(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < %d)
			INSERT INTO %s SELECT (i * 7919) %% %d + 1, 'Customer ' || i, i || ' Main Street', 'Apartment ' || (i %% 50),
			'Town ' || (i %% 300), 'County ' || (i %% 26), 'D' || (i %% 24) || ' X' || i, 'Ireland', '+353 1 555 ' || i FROM s`,
			benchRows, name, benchRows))
}

// benchRead reads every row of src, and reports rows/s, the peak of the
// heap's live objects (sampled every 1,000 rows) and the process's peak RSS
// over the read (VmHWM, reset first, Linux only).
func benchRead(b *testing.B, open func(ctx context.Context) (*table.Source, error)) {
	ctx := context.Background()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peakHeap uint64
	resetHWM()
	b.ResetTimer()
	for range b.N {
		src, err := open(ctx)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			_, err := src.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if n++; n%1000 == 0 {
				metrics.Read(sample)
				peakHeap = max(peakHeap, sample[0].Value.Uint64())
			}
		}
		src.Close()
		if n != benchRows {
			b.Fatalf("%d rows, want %d", n, benchRows)
		}
	}
	b.ReportMetric(float64(b.N*benchRows)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MB")
	if hwm, err := childrun.ReadHWM(0); err == nil {
		b.ReportMetric(float64(hwm)/(1<<20), "peak-RSS-MB")
	}
}

// resetHWM resets the process's peak RSS (Linux: clear_refs 5).
func resetHWM() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// benchmarkRead reads a benchRows-row table of the database at url (empty,
// of a kind whose DDL types are types) whose id is its primary key as a run
// does: in keyset pages of several sizes; as a --query, copied to a local
// file first; and (cursor) streamed by one SELECT ... ORDER BY id, as main
// read a table and apply reads its join. noindex- reads a table without an
// index on the id, where each page sorts the whole table, in pages of 1,000
// and of the default for it, table.UnindexedPageRows.
func benchmarkRead(b *testing.B, url string, types map[string]string) {
	fillBench(b, url, "bench", true, types)
	fillBench(b, url, "noindex", false, types)
	u, _ := table.ParseURL(url)
	db, err := table.Open(context.Background(), u, table.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	n := table.Name{Table: "bench"}
	pages := func(n table.Name, rows int) func(b *testing.B) {
		return func(b *testing.B) {
			benchRead(b, func(ctx context.Context) (*table.Source, error) {
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
		benchRead(b, func(ctx context.Context) (*table.Source, error) {
			return table.OpenQuery(ctx, db, table.TableQuery(n, "", "id"), "bench", table.SourceOptions{SpillDir: b.TempDir()})
		})
	})
	b.Run("cursor", func(b *testing.B) {
		benchRead(b, func(ctx context.Context) (*table.Source, error) {
			return table.OpenSource(ctx, db, table.TableQuery(n, "", "id"), "bench")
		})
	})
}
