package cache

import (
	"bytes"
	"testing"
	"time"

	"github.com/addrclean/addrclean/internal/golden"
)

// TestStatsWriteTable pins what 'addrclean cache stats' prints: a cache
// with namespaces (one never written: no times), damaged entries, and an
// empty one.
func TestStatsWriteTable(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 30, 0, 0, time.FixedZone("IST", 3600))
	for _, tt := range []struct {
		name string
		st   Stats
	}{
		{"empty", Stats{Path: "/tmp/c.db", Size: 4096}},
		{"namespaces", Stats{Path: "/home/etl/.addrclean.cache", Size: 3<<20 + 1<<19, Entries: 1203, Damaged: 2, Namespaces: []NamespaceStats{
			{Label: "embedded sample", Entries: 3},
			{Label: "https://api.example.com key 1a2b3c", Entries: 1200, Expired: 17, Damaged: 2, Oldest: at, Newest: at.Add(72 * time.Hour)},
		}}},
		{"bytes", Stats{Path: "c.db", Size: 1000}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.st.WriteTable(&b, 720*time.Hour); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "stats/"+tt.name+".txt", b.Bytes())
		})
	}
}
