package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/addrclean/addrclean/table/tabletest"
)

// BenchmarkRead: see tabletest.BenchmarkRead.
func BenchmarkRead(b *testing.B) {
	tabletest.BenchmarkRead(b, "sqlite:"+filepath.Join(b.TempDir(), "bench.db"), types)
}
