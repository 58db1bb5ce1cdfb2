package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/addrclean/addrclean/table/tabletest"

	_ "github.com/addrclean/addrclean/table/sqlite"
)

var types = map[string]string{"int": "INTEGER", "text": "TEXT", "bool": "BOOLEAN", "float": "REAL", "timestamp": "TIMESTAMP"}

// TestSuite runs the behaviour every database kind must have against SQLite
// files.
func TestSuite(t *testing.T) {
	tabletest.Run(t, tabletest.Harness{
		NewDB:     func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "db.sqlite") },
		Types:     types,
		FetchRows: 1000,
	})
}
