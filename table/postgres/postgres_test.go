package postgres_test

import (
	"os"
	"testing"

	"github.com/addrclean/addrclean/internal/pgtest"
	"github.com/addrclean/addrclean/table/postgres"
	"github.com/addrclean/addrclean/table/tabletest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

var types = map[string]string{"int": "bigint", "text": "text", "bool": "boolean", "float": "double precision",
	"timestamp": "timestamp"}

// TestSuite runs the behaviour every database kind must have against a real
// PostgreSQL server.
func TestSuite(t *testing.T) {
	tabletest.Run(t, tabletest.Harness{
		NewDB:     func(t *testing.T) string { return pgtest.RequireDB(t) },
		Types:     types,
		FetchRows: postgres.FetchRows,
	})
}
