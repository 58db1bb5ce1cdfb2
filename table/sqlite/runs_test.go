package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/addrclean/addrclean/table/tabletest"
)

// TestRuns: the runs table of an out-table in SQLite, named with and
// without its database's name.
func TestRuns(t *testing.T) {
	for _, schema := range []string{"", "main"} {
		t.Run("schema "+schema, func(t *testing.T) {
			tabletest.Runs(t, tabletest.Harness{
				NewDB:     func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "db.sqlite") },
				Types:     types,
				FetchRows: 1000,
			}, schema)
		})
	}
}
