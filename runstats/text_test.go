package runstats

import (
	"bytes"
	"testing"

	"github.com/addrclean/addrclean/internal/golden"
)

// TestWriteText pins the console summary: a plain run to files, and a
// stopped, resumed, priced shard that wrote tables and no review output.
func TestWriteText(t *testing.T) {
	for _, tt := range []struct {
		name string
		st   Stats
		a    About
	}{
		{name: "files", st: Stats{RowsRead: 200, RowsWritten: 200, ElapsedSeconds: 1.25, RowsPerSecond: 160,
			Actions: map[string]int64{"Accept": 150, "Suggest": 30, "Error": 20}, MatchLevels: map[string]int64{"Building": 150, "Street": 30, "None": 20},
			Errors: map[string]int64{ErrKindInput: 20}, CallsMade: 120, CallsSaved: 60, Retries: 2, EffectiveRate: 96},
			a: About{Input: "customers.csv", Enriched: "customers.cleaned.csv", Review: "customers.review.csv"}},
		{name: "stopped shard to tables", st: Stats{RowsRead: 90, RowsWritten: 80, ElapsedSeconds: 3, RowsPerSecond: 26.7,
			Shard: "1/3", RowsOtherShards: 180, Stopped: "max_errors", Interrupted: true, RowsResumed: 40,
			Actions: map[string]int64{"Accept": 40, "Error": 40}, CallsMade: 50, CacheHits: 7, RateLimited: 3, TokenRefreshes: 1,
			EffectiveRate: 16.7, RateLimit: 20, Duplicates: &Duplicates{Groups: 2, Rows: 5, Extra: 3, Largest: 3, LargestID: "IE-42"}},
			a: About{Input: "postgres://etl@db/crm", MaxErrors: "10%", Cost: "€0.20 (50 calls at €0.004)", Tables: []string{"av: 80 rows"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.st.WriteText(&b, tt.a); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "summary/"+tt.name+".txt", b.Bytes())
		})
	}
}

// TestRateText: 0 is no limit, others three significant digits a second.
func TestRateText(t *testing.T) {
	for r, want := range map[float64]string{0: "unlimited", -1: "unlimited", 20: "20/s", 0.5: "0.5/s", 1234.5: "1.23e+03/s"} {
		if got := RateText(r); got != want {
			t.Errorf("RateText(%g) = %q, want %q", r, got, want)
		}
	}
}
