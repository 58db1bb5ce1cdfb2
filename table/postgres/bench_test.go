package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/addrclean/addrclean/internal/pgtest"
	"github.com/addrclean/addrclean/table"
)

// BenchmarkWrite compares the two ways of writing a batch of enriched rows
// (2,000 rows, the sink's batch) into an out-table: COPY into the staging
// table and one upsert from it (what the sink does), against multi-row
// INSERT ... VALUES ... ON CONFLICT statements with parameters. Each
// iteration upserts the same keys, as a nightly re-run does.
func BenchmarkWrite(b *testing.B) {
	srv := pgtest.Require(b)
	ctx := context.Background()
	cols := table.Columns(table.Enriched, false)
	const batch = table.DefaultBatchRows
	recs := make([]table.Record, batch)
	for i := range recs {
		vals := make([]any, len(cols))
		for j, c := range cols {
			switch c.Type {
			case table.Bool:
				vals[j] = i%2 == 0
			case table.Float:
				vals[j] = 53.3498053 + float64(i)/1e6
			case table.Timestamp:
				vals[j] = time.Now()
			default:
				vals[j] = fmt.Sprintf("%s value %d", c.Name, i)
			}
		}
		recs[i] = table.Record{Key: fmt.Sprintf("C%07d", i), Values: vals}
	}
	for _, strategy := range []string{"copy-upsert", "insert-values"} {
		b.Run(strategy, func(b *testing.B) {
			name, err := srv.NewDB(ctx)
			if err != nil {
				b.Fatal(err)
			}
			u, _ := table.ParseURL(srv.URL(pgtest.User, name))
			db, err := Open(ctx, u, table.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			tg, err := table.OpenTarget(ctx, db, table.Name{Table: "av"}, "id", table.Text, cols)
			if err != nil {
				b.Fatal(err)
			}
			defer tg.Close()
			t := tg.(*target)
			write := t.Write
			if strategy == "insert-values" {
				write = insertValues(t, cols)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := write(ctx, recs, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// insertValues is the alternative: statements of up to 500 rows of
// parameters each, in one transaction.
func insertValues(t *target, cols []table.Column) func(context.Context, []table.Record, []string) (table.Counts, error) {
	names := []string{`"id"`}
	var sets []string
	for _, c := range cols {
		names = append(names, table.QuoteIdent(c.Name))
		sets = append(sets, table.QuoteIdent(c.Name)+" = EXCLUDED."+table.QuoteIdent(c.Name))
	}
	return func(ctx context.Context, recs []table.Record, _ []string) (table.Counts, error) {
		tx, err := t.conn.Begin(ctx)
		if err != nil {
			return table.Counts{}, err
		}
		defer tx.Rollback(ctx)
		for start := 0; start < len(recs); start += 500 {
			part := recs[start:min(start+500, len(recs))]
			var b strings.Builder
			args := make([]any, 0, len(part)*len(names))
			fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", t.q, strings.Join(names, ", "))
			for i, r := range part {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString("(")
				for j := range names {
					if j > 0 {
						b.WriteString(", ")
					}
					fmt.Fprintf(&b, "$%d", len(args)+j+1)
				}
				b.WriteString(")")
				args = append(args, r.Key)
				args = append(args, r.Values...)
			}
			fmt.Fprintf(&b, ` ON CONFLICT ("id") DO UPDATE SET %s`, strings.Join(sets, ", "))
			if _, err := tx.Exec(ctx, b.String(), args...); err != nil {
				return table.Counts{}, err
			}
		}
		return table.Counts{}, tx.Commit(ctx)
	}
}
