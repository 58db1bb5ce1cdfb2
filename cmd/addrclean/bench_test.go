package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/gazetteer"
	sampledata "github.com/addrclean/addrclean/sample_data"
)

// BenchmarkRunEmbedded runs 'addrclean run' in-process on the embedded
// service over rows made from the sample reference (each reference address
// once, so no call is saved by deduplication). It reports rows/s; the CPU
// profile of this benchmark is where end-to-end cost is found.
func BenchmarkRunEmbedded(b *testing.B) {
	dir := b.TempDir()
	in := filepath.Join(dir, "in.csv")
	rows := writeBenchInput(b, in)
	b.ResetTimer()
	for range b.N {
		var stderr bytes.Buffer
		code := runMain(context.Background(), []string{"run", "--log-format", "json", "--log-level", "error", "--no-progress",
			"-o", filepath.Join(dir, "out.csv"), "--review", filepath.Join(dir, "review.csv"), in},
			streams{in: strings.NewReader(""), out: &bytes.Buffer{}, err: &stderr})
		if code != exitOK && code != exitRowErrors {
			b.Fatalf("exit %d: %s", code, stderr.String())
		}
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

func writeBenchInput(b *testing.B, path string) int {
	b.Helper()
	ix, err := gazetteer.Load(context.Background(), sampledata.Reference())
	if err != nil {
		b.Fatal(err)
	}
	var recs []*gazetteer.Record
	ix.Records(func(r *gazetteer.Record) bool {
		recs = append(recs, r)
		return true
	})
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"Address 1", "Address 2", "Town", "County", "Postcode", "Country"})
	for _, r := range recs {
		_ = w.Write([]string{strings.TrimSpace(r.BuildingNumber + " " + r.Street), r.Locality, r.City, r.Region, r.Postcode, r.Country})
	}
	w.Flush()
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return len(recs)
}
