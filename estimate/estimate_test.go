package estimate

import (
	"errors"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/runstats"
)

func TestPrice(t *testing.T) {
	for _, tc := range []struct {
		in           string
		calls        int64
		amount, text string
		currency     string
	}{
		{"0.004", 1234, "4.936", "4.936", ""},
		{"0.004 EUR", 1234, "4.936", "4.936 EUR", "EUR"},
		{"€0.004", 1000, "4.000", "€4.000", "€"},
		{"USD 0.01", 3, "0.03", "USD 0.03", "USD"},
		{"0,1 €", 3, "0.30", "0,30 €", "€"}, // exact: never 0.30000000000000004
		{"£1", 250, "250", "£250", "£"},
		{"2p", 0, "0", "0p", "p"},
		{"0.00001", 7, "0.00007", "0.00007", ""},
	} {
		p, err := ParsePrice(tc.in)
		if err != nil {
			t.Errorf("ParsePrice(%q): %v", tc.in, err)
			continue
		}
		amount, text := p.Times(tc.calls)
		if amount != tc.amount || text != tc.text || p.Currency() != tc.currency || p.String() != tc.in {
			t.Errorf("%q × %d = %q, %q (currency %q); want %q, %q (%q)", tc.in, tc.calls, amount, text, p.Currency(), tc.amount, tc.text, tc.currency)
		}
	}
	for _, bad := range []string{"", "EUR", "-0.004", "1,000.50", "0.004 0.005", "1.2.3", "+1"} {
		if _, err := ParsePrice(bad); !errors.Is(err, ErrPrice) {
			t.Errorf("ParsePrice(%q) = %v, want ErrPrice", bad, err)
		}
	}
}

func TestFigures(t *testing.T) {
	e := runstats.Estimate{Rows: 100, DistinctRequests: 60, CacheAnswers: 10, JournalAnswers: 5, CallsToPay: 45}
	p, err := ParsePrice("0.02 EUR")
	if err != nil {
		t.Fatal(err)
	}
	f := New(e, 20, 5, &p)
	if f.SecondsAtRate == nil || *f.SecondsAtRate != 2 || f.Cost.String() != "0.90" || f.CostText != "0.90 EUR" {
		t.Fatalf("figures %+v", f)
	}
	var b strings.Builder
	if err := f.Print(&b); err != nil || !strings.Contains(b.String(), "calls to pay       45") || !strings.Contains(b.String(), "0.90 EUR") {
		t.Fatalf("print: %v\n%s", err, b.String())
	}
	if f := New(e, 0, 1, nil); f.SecondsAtRate != nil || f.Cost != nil {
		t.Fatalf("unlimited, no price: %+v", f)
	}
}
