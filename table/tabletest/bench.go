package tabletest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/table"
)

// BenchRows is the size of the table BenchRead reads.
const BenchRows = 100_000

// FillBench creates table name of BenchRows rows in the database at url: an
// integer id (stored out of id order), its primary key when indexed, and
// eight text columns shaped like a CRM export's.
func FillBench(b *testing.B, url, name string, indexed bool, types map[string]string) {
	b.Helper()
	cols := []string{"id " + types["int"]}
	if indexed {
		cols[0] += " PRIMARY KEY"
	}
	for _, c := range []string{"name", "line1", "line2", "town", "county", "postcode", "country", "phone"} {
		cols = append(cols, c+" "+types["text"])
	}
	benchExec(b, url, fmt.Sprintf("CREATE TABLE %s (%s)", name, strings.Join(cols, ", ")),
		fmt.Sprintf(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < %d)
			INSERT INTO %s SELECT (i * 7919) %% %d + 1, 'Customer ' || i, i || ' Main Street', 'Apartment ' || (i %% 50),
			'Town ' || (i %% 300), 'County ' || (i %% 26), 'D' || (i %% 24) || ' X' || i, 'Ireland', '+353 1 555 ' || i FROM s`,
			BenchRows, name, BenchRows))
}

// benchExec runs setup statements through the database's writing side.
func benchExec(b *testing.B, raw string, stmts ...string) {
	b.Helper()
	u, err := table.ParseURL(raw)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	db, err := table.Open(ctx, u, table.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if err := db.Exec(ctx, s); err != nil {
			b.Fatalf("%s: %v", s, err)
		}
	}
}

// BenchRead reads every row of src, and reports rows/s, the peak of the
// heap's live objects (sampled every 1,000 rows) and the process's peak RSS
// over the read (VmHWM, reset first, Linux only).
func BenchRead(b *testing.B, open func(ctx context.Context) (*table.Source, error)) {
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
		if n != BenchRows {
			b.Fatalf("%d rows, want %d", n, BenchRows)
		}
	}
	b.ReportMetric(float64(b.N*BenchRows)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MB")
	if hwm := peakRSS(); hwm > 0 {
		b.ReportMetric(float64(hwm)/(1<<10), "peak-RSS-MB")
	}
}

// resetHWM resets the process's peak RSS (Linux: clear_refs 5).
func resetHWM() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS is VmHWM in kB, or 0.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}
