package postgres_test

import (
	"testing"

	"github.com/addrclean/addrclean/internal/pgtest"
	"github.com/addrclean/addrclean/table/postgres"
	"github.com/addrclean/addrclean/table/tabletest"
)

// TestRuns: the runs table of an out-table in a schema of PostgreSQL.
func TestRuns(t *testing.T) {
	tabletest.Runs(t, tabletest.Harness{
		NewDB:     func(t *testing.T) string { return pgtest.RequireDB(t) },
		Types:     types,
		FetchRows: postgres.FetchRows,
	}, "Crm")
}
