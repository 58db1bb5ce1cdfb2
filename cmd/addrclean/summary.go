package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/runstats"
)

// printSummary reports the run on stderr: a short block on a console, one
// JSON log event otherwise (so every stderr line stays one JSON object).
func printSummary(w io.Writer, asJSON bool, log zerolog.Logger, o runOptions, st runstats.Stats, out, review string, written bool) {
	if asJSON {
		ev := log.Info().Str("input", o.input).Interface("summary", st)
		if o.price != nil {
			ev = ev.Interface("spent", o.price.Spent(st.CallsMade))
		}
		if written {
			for k, v := range map[string]string{"enriched": out, "review": review} {
				if v != "" {
					ev = ev.Str(k, v)
				}
			}
			if t := o.plan.TableCounts(); len(t) > 0 {
				ev = ev.Interface("tables", t)
			}
		}
		ev.Msg("summary")
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nSummary of %s\n", o.input)
	fmt.Fprintf(&b, "  rows read %d, written %d in %.1fs (%.0f rows/s)%s\n", st.RowsRead, st.RowsWritten, st.ElapsedSeconds, st.RowsPerSecond,
		map[bool]string{true: ", INTERRUPTED", false: ""}[st.Interrupted])
	if st.Shard != "" {
		fmt.Fprintf(&b, "  shard %s: %d rows of the other shards passed over (not sent, not written)\n", st.Shard, st.RowsOtherShards)
	}
	switch st.Stopped {
	case "service_unavailable":
		fmt.Fprintf(&b, "  STOPPED: the service kept failing (circuit breaker); the rows not written were not tried\n")
	case "max_errors":
		fmt.Fprintf(&b, "  STOPPED: more rows are Error than --max-errors %s allows\n", o.maxErrors)
	}
	if st.RowsResumed > 0 {
		fmt.Fprintf(&b, "  resumed     %d rows from the journal of the interrupted run, not sent again (their duplicates count as saved)\n", st.RowsResumed)
	}
	fmt.Fprintf(&b, "  actions     %s\n", runstats.Counts(st.Actions, []string{"Accept", "Suggest", "Confirm", "Reject", "Error"}))
	fmt.Fprintf(&b, "  match level %s\n", runstats.Counts(st.MatchLevels, []string{"Building", "SubBuilding", "Street", "Locality", "Region", "None"}))
	if len(st.Errors) > 0 {
		fmt.Fprintf(&b, "  errors      %s\n", runstats.Counts(st.Errors, nil))
	}
	fmt.Fprintf(&b, "  calls %d (saved by deduplication %d, answered from the cache %d), retries %d, 429s %d, token refreshes %d, rate %.1f/s (limit %s)\n",
		st.CallsMade, st.CallsSaved, st.CacheHits, st.Retries, st.RateLimited, st.TokenRefreshes, st.EffectiveRate, runstats.RateText(st.RateLimit))
	if o.price != nil {
		sp := o.price.Spent(st.CallsMade)
		fmt.Fprintf(&b, "  cost        %s (%d calls at %s)\n", sp.CostText, sp.Calls, sp.PricePerCall)
	}
	if d := st.Duplicates; d != nil && d.Groups > 0 {
		fmt.Fprintf(&b, "  duplicates  %d addresses shared by %d rows (%d rows a merge would fold; largest %d rows, %s)\n",
			d.Groups, d.Rows, d.Extra, d.Largest, d.LargestID)
	}
	if written {
		for _, l := range []struct{ name, v string }{{"enriched", out}, {"review", review}} {
			if l.v != "" { // a table run may have no review output
				fmt.Fprintf(&b, "  %-11s %s\n", l.name, l.v)
			}
		}
		for _, t := range o.plan.TableCounts() {
			fmt.Fprintf(&b, "  written     %s\n", t)
		}
	}
	fmt.Fprint(w, b.String())
}

// writeSummary writes --summary, if asked for, atomically.
func (o *runOptions) writeSummary(st runstats.Stats, out, review string) error {
	if o.summary == "" {
		return nil
	}
	return writeSummaryJSON(o.summary, o.runSummary(st, out, review))
}

// writeSummaryJSON writes v as indented JSON to path, atomically.
func writeSummaryJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err == nil {
		err = writeAtomically(path, func(f *os.File) error {
			_, err := f.Write(append(b, '\n'))
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("--summary: %w", err)
	}
	return nil
}

// writeAtomically writes path through a temporary file beside it, renamed
// into place only once write and the sync succeeded: a failure leaves no
// file, and an old one stays as it was. The file is 0644 (CreateTemp makes
// 0600): what is written this way is no secret, and other jobs read it.
func writeAtomically(path string, write func(*os.File) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	err = write(tmp)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
