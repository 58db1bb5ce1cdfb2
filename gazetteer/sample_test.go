package gazetteer_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/countries"
	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/internal/golden"
	sampledata "github.com/addrclean/addrclean/sample_data"
)

// TestSampleCustomers matches the bundled sample export against the bundled
// reference and compares verdicts with testdata/customers.golden, so that a
// change in matching shows up as a reviewable diff
// (go test ./gazetteer -run SampleCustomers -update).
func TestSampleCustomers(t *testing.T) {
	ix, err := gazetteer.Load(context.Background(), sampledata.Reference())
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("../sample_data/customers.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	count := map[gazetteer.Verdict]int{}
	for _, row := range rows[1:] {
		// Customer ID, Name, Address 1, Address 2, Town, County, Postcode, Country
		q := gazetteer.Query{City: row[4], Region: row[5]}
		for _, l := range []string{row[2], row[3], row[6]} {
			for _, part := range strings.Split(l, "\n") {
				if strings.TrimSpace(part) != "" {
					q.Lines = append(q.Lines, part)
				}
			}
		}
		if iso, ok := countries.ISO(row[7]); ok {
			q.Country = iso
		}
		m := ix.Match(q)
		count[m.Verdict]++
		id := ""
		if m.Record != nil {
			id = m.Record.ID
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\n", row[0], m.Verdict, m.Level, id, strings.Join(append(m.Lines, m.City, m.Region, m.Postcode), ", "))
	}
	t.Logf("sample verdicts: %v", count)
	golden.Check(t, "customers.golden", []byte(b.String()))
}
