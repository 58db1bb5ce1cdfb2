package tabletest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/addrclean/addrclean/internal/pgtest"
	"github.com/addrclean/addrclean/table/postgres"

	_ "github.com/addrclean/addrclean/table/sqlite"
)

// The suites run here against every database kind: SQLite files, and a
// real PostgreSQL server that pgtest starts.

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func sqliteDB(tb testing.TB) string { return "sqlite:" + filepath.Join(tb.TempDir(), "db.sqlite") }

var (
	sqlite = Harness{
		NewDB:     func(t *testing.T) string { return sqliteDB(t) },
		Types:     map[string]string{"int": "INTEGER", "text": "TEXT", "bool": "BOOLEAN", "float": "REAL", "timestamp": "TIMESTAMP"},
		FetchRows: 1000,
	}
	pg = Harness{
		NewDB: func(t *testing.T) string { return pgtest.RequireDB(t) },
		Types: map[string]string{"int": "bigint", "text": "text", "bool": "boolean", "float": "double precision",
			"timestamp": "timestamp"},
		FetchRows: postgres.FetchRows,
	}
)

func TestSuiteSQLite(t *testing.T)   { runSuite(t, sqlite) }
func TestSuitePostgres(t *testing.T) { runSuite(t, pg) }

func TestReadSQLite(t *testing.T) { runRead(t, readHarness{Harness: sqlite}) }
func TestReadPostgres(t *testing.T) {
	runRead(t, readHarness{Harness: pg, LockTimeout: "SET lock_timeout = '5s'"})
}

func BenchmarkReadSQLite(b *testing.B)   { benchmarkRead(b, sqliteDB(b), sqlite.Types) }
func BenchmarkReadPostgres(b *testing.B) { benchmarkRead(b, pgtest.RequireDB(b), pg.Types) }
