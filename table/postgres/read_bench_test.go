package postgres_test

import (
	"testing"

	"github.com/addrclean/addrclean/internal/pgtest"
	"github.com/addrclean/addrclean/table/tabletest"
)

// BenchmarkRead: see tabletest.BenchmarkRead.
func BenchmarkRead(b *testing.B) {
	tabletest.BenchmarkRead(b, pgtest.RequireDB(b), types)
}
