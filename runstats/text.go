package runstats

import (
	"fmt"
	"io"
	"strings"
)

// About is what the console summary names besides the statistics: what
// the command knows of the run and its outputs.
type About struct {
	Input     string   // the INPUT as given (a DBURL redacted)
	MaxErrors string   // --max-errors as given, for a run it stopped
	Cost      string   // what the calls cost, "€0.40 (100 calls at €0.004)"; "" without a price
	Enriched  string   // the outputs written; "" for none
	Review    string   // (a table run may have no review output)
	Tables    []string // the tables written, with their counts
}

// WriteText writes the short block a run prints on a console when it ends.
func (st Stats) WriteText(w io.Writer, a About) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\nSummary of %s\n", a.Input)
	fmt.Fprintf(&b, "  rows read %d, written %d in %.1fs (%.0f rows/s)%s\n", st.RowsRead, st.RowsWritten, st.ElapsedSeconds, st.RowsPerSecond,
		map[bool]string{true: ", INTERRUPTED", false: ""}[st.Interrupted])
	if st.Shard != "" {
		fmt.Fprintf(&b, "  shard %s: %d rows of the other shards passed over (not sent, not written)\n", st.Shard, st.RowsOtherShards)
	}
	switch st.Stopped {
	case "service_unavailable":
		fmt.Fprintf(&b, "  STOPPED: the service kept failing (circuit breaker); the rows not written were not tried\n")
	case "max_errors":
		fmt.Fprintf(&b, "  STOPPED: more rows are Error than --max-errors %s allows\n", a.MaxErrors)
	}
	if st.RowsResumed > 0 {
		fmt.Fprintf(&b, "  resumed     %d rows from the journal of the interrupted run, not sent again (their duplicates count as saved)\n", st.RowsResumed)
	}
	fmt.Fprintf(&b, "  actions     %s\n", Counts(st.Actions, []string{"Accept", "Suggest", "Confirm", "Reject", "Error"}))
	fmt.Fprintf(&b, "  match level %s\n", Counts(st.MatchLevels, []string{"Building", "SubBuilding", "Street", "Locality", "Region", "None"}))
	if len(st.Errors) > 0 {
		fmt.Fprintf(&b, "  errors      %s\n", Counts(st.Errors, nil))
	}
	fmt.Fprintf(&b, "  calls %d (saved by deduplication %d, answered from the cache %d), retries %d, 429s %d, token refreshes %d, rate %.1f/s (limit %s)\n",
		st.CallsMade, st.CallsSaved, st.CacheHits, st.Retries, st.RateLimited, st.TokenRefreshes, st.EffectiveRate, RateText(st.RateLimit))
	if a.Cost != "" {
		fmt.Fprintf(&b, "  cost        %s\n", a.Cost)
	}
	if d := st.Duplicates; d != nil && d.Groups > 0 {
		fmt.Fprintf(&b, "  duplicates  %d addresses shared by %d rows (%d rows a merge would fold; largest %d rows, %s)\n",
			d.Groups, d.Rows, d.Extra, d.Largest, d.LargestID)
	}
	for _, l := range []struct{ name, v string }{{"enriched", a.Enriched}, {"review", a.Review}} {
		if l.v != "" {
			fmt.Fprintf(&b, "  %-11s %s\n", l.name, l.v)
		}
	}
	for _, t := range a.Tables {
		fmt.Fprintf(&b, "  written     %s\n", t)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// RateText is a rate limit as the bar and the summary show it: "20/s", or
// "unlimited" for 0.
func RateText(r float64) string {
	if r <= 0 {
		return "unlimited"
	}
	return fmt.Sprintf("%.3g/s", r)
}
