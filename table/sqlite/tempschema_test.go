package sqlite_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/table"
)

// TestTempSchemaRefused: an output table in SQLite's temp schema would be
// created on the run's own connection and dropped when it closes, after a
// summary saying its rows were inserted; it is refused before anything is
// created, as any other place results cannot stay.
func TestTempSchemaRefused(t *testing.T) {
	ctx := context.Background()
	_, db := openCustomers(t)
	for _, schema := range []string{"temp", "TEMP"} {
		out := table.Output{Flag: "--out-table", Name: table.Name{Schema: schema, Table: "av"}, Key: "id", Cols: table.Columns(table.Enriched, false)}
		stmts, err := table.Plan(ctx, db, []table.Output{out})
		if !errors.Is(err, table.ErrRefused) || !strings.Contains(err.Error(), schema+".av") {
			t.Errorf("%s.av: %d statements, %v; want ErrRefused naming the table", schema, len(stmts), err)
		}
	}
}
