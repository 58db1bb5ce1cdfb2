package postgres_test

import (
	"testing"

	"github.com/addrclean/addrclean/internal/pgtest"
	"github.com/addrclean/addrclean/table/postgres"
	"github.com/addrclean/addrclean/table/tabletest"
)

// TestRead runs the suite of reading the input against a real PostgreSQL
// server.
func TestRead(t *testing.T) {
	tabletest.RunRead(t, tabletest.ReadHarness{
		Harness: tabletest.Harness{
			NewDB:     func(t *testing.T) string { return pgtest.RequireDB(t) },
			Types:     types,
			FetchRows: postgres.FetchRows,
		},
		LockTimeout: "SET lock_timeout = '5s'",
	})
}
