package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/addrclean/addrclean/table/tabletest"
)

// TestRead runs the suite of reading the input against SQLite files.
func TestRead(t *testing.T) {
	tabletest.RunRead(t, tabletest.ReadHarness{Harness: tabletest.Harness{
		NewDB: func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "db.sqlite") },
		Types: types, FetchRows: 1000,
	}})
}
