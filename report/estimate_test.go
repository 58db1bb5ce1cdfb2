package report

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/addrclean/addrclean/estimate"
	"github.com/addrclean/addrclean/internal/golden"
	"github.com/addrclean/addrclean/runstats"
)

// TestEstimatePage renders a dry run's page: the Estimate card with the
// counts, the time at the rate and the cost as the user writes money, and
// the page without a rate or a price.
func TestEstimatePage(t *testing.T) {
	e := runstats.Estimate{Rows: 500, NotSent: 10, DistinctRequests: 478, JournalAnswers: 120, CacheAnswers: 58, CallsToPay: 300}
	price, err := estimate.ParsePrice("€0.004")
	if err != nil {
		t.Fatal(err)
	}
	run := RunInfo{Input: "customers.csv", Version: "test", Reference: "https://api.example.com"}
	at := time.Date(2026, 11, 26, 11, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		fig  estimate.Figures
	}{
		{"estimate.html", estimate.New(e, 20, 1, &price)},
		{"estimate-unpriced.html", estimate.New(e, 0, 1, nil)},
	} {
		var page bytes.Buffer
		p := &EstimatePage{Title: "customers.csv", Run: run, At: at, Estimate: tc.fig}
		if err := p.WriteHTML(&page); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, tc.name, withoutStyle(t, page.Bytes()))
	}
}

// TestCostSpent: a run given a price says on its Cost card what its calls
// cost, from the summary's "spent".
func TestCostSpent(t *testing.T) {
	st, err := ReadSummary(filepath.Join("testdata", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	price, err := estimate.ParsePrice("0.004 EUR")
	if err != nil {
		t.Fatal(err)
	}
	sp := price.Spent(st.CallsMade)
	st.Spent = &sp
	d, err := Build(context.Background(), filepath.Join("testdata", "enriched.csv"), Options{Summary: st})
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := d.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	want := "<b>" + sp.CostText + "</b><span>spent on the calls made</span>"
	if st.CallsMade == 0 || !strings.Contains(page.String(), want) {
		t.Fatalf("no %q on the page (calls %d)", want, st.CallsMade)
	}
}
