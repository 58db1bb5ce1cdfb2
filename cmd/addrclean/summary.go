package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/internal/atomicfile"
	"github.com/addrclean/addrclean/runstats"
)

// printSummary reports the run on stderr: a short block on a console
// (runstats.Stats.WriteText), one JSON log event otherwise (so every stderr
// line stays one JSON object).
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
	about := runstats.About{Input: o.input, MaxErrors: o.maxErrors}
	if o.price != nil {
		sp := o.price.Spent(st.CallsMade)
		about.Cost = fmt.Sprintf("%s (%d calls at %s)", sp.CostText, sp.Calls, sp.PricePerCall)
	}
	if written {
		about.Enriched, about.Review = out, review
		for _, t := range o.plan.TableCounts() {
			about.Tables = append(about.Tables, t.String())
		}
	}
	_ = st.WriteText(w, about) // stderr: nowhere to report its failure
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
		err = atomicfile.Write(path, func(f *os.File) error {
			_, err := f.Write(append(b, '\n'))
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("--summary: %w", err)
	}
	return nil
}
