package report

import (
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/addrclean/addrclean/estimate"
)

// ShardSet is the set of shards (run --shard I/N) whose runs filled an
// out-table: the latest run of each part, and what is wrong with the set.
type ShardSet struct {
	// Count is N, the number of parts.
	Count int `json:"count"`
	// Runs are the latest run of each part that ran, in part order.
	Runs []ShardRun `json:"runs"`
	// Missing are the parts with no recorded run (the first maxListed of
	// them; MissingCount counts them all): their rows are not in the
	// table, or are those of an older run (see Mixed).
	Missing      []int `json:"missing,omitempty"`
	MissingCount int   `json:"missing_count,omitempty"`
	// Failed are the parts whose latest run did not finish its part
	// (stopped, interrupted): its rows are partly missing or older.
	Failed []int `json:"failed,omitempty"`
	// Mixed are the --shard values of other runs ("1/4", or unsharded's
	// text for a run of the whole input) whose rows the table may still hold: runs recorded
	// among the set's, or before it while a part is missing.
	Mixed []string `json:"mixed,omitempty"`
}

// ShardRun is one part's latest run.
type ShardRun struct {
	Shard       string    `json:"shard"`
	Started     time.Time `json:"started,omitzero"`
	Finished    time.Time `json:"finished,omitzero"`
	RowsRead    int64     `json:"rows_read"`
	CallsMade   int64     `json:"calls_made"`
	RateLimited int64     `json:"rate_limited"`
	// Status is "complete", or why the run did not finish its part.
	Status string `json:"status"`
}

// Complete reports whether every part has a latest run that finished it.
func (s *ShardSet) Complete() bool { return s.MissingCount == 0 && len(s.Failed) == 0 }

// maxListed bounds ShardSet.Missing: N may be large and few parts run.
const maxListed = 100

// maxMixed bounds ShardSet.Mixed: a table written by many kinds of runs
// is flagged as mixed without listing them all.
const maxMixed = 8

// FromRuns reads the runs recorded for an out-table, the run that finished
// last first (table.Runs), and returns what the table's report shows:
// the last run's summary when it was not a shard, as it rewrote every row;
// otherwise the latest run of each part of its set (its N) summed into one
// summary (calls, rows, 429s, errors, table counts; started at the first
// start, finished at the last finish) with the set in Shards. It reads no
// further than it must: up to a run of the whole table, or until every
// part has its run. An error of runs is returned as it is.
func FromRuns(runs iter.Seq2[[]byte, error]) (*Summary, error) {
	var set *shardWalk
	for b, err := range runs {
		if err != nil {
			return nil, err
		}
		s, err := ParseSummary(b)
		if err != nil {
			return nil, err
		}
		if set == nil {
			i, n, ok := parseShard(s.Shard)
			if !ok {
				return s, nil
			}
			set = &shardWalk{n: n, runs: map[int]*Summary{i: s}}
		} else if !set.add(s) {
			break
		}
		if len(set.runs) == set.n {
			break
		}
	}
	if set == nil {
		return nil, nil
	}
	return set.summary(), nil
}

// unsharded stands for a run of the whole input in ShardSet.Mixed.
const unsharded = "none (the whole table)"

// shardWalk collects a set's runs, newest first.
type shardWalk struct {
	n     int
	runs  map[int]*Summary
	mixed []string
}

// add looks at the next older run s; it returns false when older runs no
// longer matter.
func (w *shardWalk) add(s *Summary) bool {
	i, n, ok := parseShard(s.Shard)
	switch {
	case !ok:
		// A run of the whole table rewrote every row: the rows of the
		// parts still missing are its, and nothing older shows.
		w.mix(unsharded)
		return false
	case n != w.n:
		w.mix(s.Shard)
	case w.runs[i] == nil:
		w.runs[i] = s
	}
	return true
}

func (w *shardWalk) mix(spec string) {
	if !slices.Contains(w.mixed, spec) && len(w.mixed) < maxMixed {
		w.mixed = append(w.mixed, spec)
	}
}

// summary sums the set's runs into one summary; the latest run gives what
// is not summed (input, version, reference).
func (w *shardWalk) summary() *Summary {
	set := &ShardSet{Count: w.n, Mixed: w.mixed}
	sum := &Summary{}
	var latest time.Time
	counts := map[string]*TableCounts{}
	var order []string
	prices := map[string]bool{}
	next := 0 // the first part not yet looked at
	missing := func(upTo int) {
		set.MissingCount += upTo - next
		for i := next; i < upTo && len(set.Missing) < maxListed; i++ {
			set.Missing = append(set.Missing, i)
		}
	}
	for _, i := range slices.Sorted(maps.Keys(w.runs)) {
		missing(i)
		next = i + 1
		s := w.runs[i]
		r := ShardRun{Shard: s.Shard, Started: s.Started, Finished: s.Finished, RowsRead: s.RowsRead,
			CallsMade: s.CallsMade, RateLimited: s.RateLimited, Status: runStatus(s)}
		set.Runs = append(set.Runs, r)
		if r.Status != "complete" {
			set.Failed = append(set.Failed, i)
		}
		if latest.IsZero() || s.Finished.After(latest) {
			latest = s.Finished
			sum.Input, sum.Version, sum.Reference = s.Input, s.Version, s.Reference
		}
		if sum.Started.IsZero() || (!s.Started.IsZero() && s.Started.Before(sum.Started)) {
			sum.Started = s.Started
		}
		if s.Finished.After(sum.Finished) {
			sum.Finished = s.Finished
		}
		addStats(sum, s)
		for _, c := range s.Tables {
			t := counts[c.Table]
			if t == nil {
				t = &TableCounts{Table: c.Table}
				counts[c.Table] = t
				order = append(order, c.Table)
			}
			t.Inserted, t.Updated, t.Unchanged, t.Deleted = t.Inserted+c.Inserted, t.Updated+c.Updated, t.Unchanged+c.Unchanged, t.Deleted+c.Deleted
		}
		price := ""
		if s.Spent != nil {
			price = s.Spent.PricePerCall
		}
		prices[price] = true
	}
	missing(w.n)
	for _, name := range order {
		sum.Tables = append(sum.Tables, *counts[name])
	}
	// The money is summed only at one price: shards priced differently
	// (or some not at all) show their calls, not a made-up total.
	if p := slices.Collect(maps.Keys(prices)); len(p) == 1 && p[0] != "" {
		if price, err := estimate.ParsePrice(p[0]); err == nil {
			spent := price.Spent(sum.CallsMade)
			sum.Spent = &spent
		}
	}
	if !sum.Started.IsZero() && sum.Finished.After(sum.Started) {
		sum.Elapsed = sum.Finished.Sub(sum.Started)
		sum.ElapsedSeconds = sum.Elapsed.Seconds()
	}
	sum.Complete = set.Complete()
	sum.Shards = set
	return sum
}

// addStats adds the counts of s to sum.
func addStats(sum, s *Summary) {
	a, b := &sum.Stats, &s.Stats
	a.RowsRead += b.RowsRead
	a.RowsWritten += b.RowsWritten
	a.CallsMade += b.CallsMade
	a.CallsSaved += b.CallsSaved
	a.CacheHits += b.CacheHits
	a.Retries += b.Retries
	a.RateLimited += b.RateLimited
	a.TokenRefreshes += b.TokenRefreshes
	a.RowsResumed += b.RowsResumed
	a.Actions = addCounts(a.Actions, b.Actions)
	a.MatchLevels = addCounts(a.MatchLevels, b.MatchLevels)
	a.Errors = addCounts(a.Errors, b.Errors)
}

func addCounts(to, from map[string]int64) map[string]int64 {
	for k, v := range from {
		if to == nil {
			to = map[string]int64{}
		}
		to[k] += v
	}
	return to
}

// runStatus says whether run s finished its part.
func runStatus(s *Summary) string {
	switch {
	case s.Interrupted:
		return "interrupted"
	case s.Stopped != "":
		return "stopped: " + s.Stopped
	case !s.Complete:
		return "incomplete"
	}
	return "complete"
}

// parseShard parses a summary's "I/N"; ok is false for a run of the whole
// input (and for a value no run writes).
func parseShard(spec string) (i, n int, ok bool) {
	a, b, found := strings.Cut(spec, "/")
	if !found {
		return 0, 0, false
	}
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, false
	}
	return i, n, true
}

// setWarning says what is wrong with a set, for the page's header; "" for
// a complete set of one kind.
func (s *ShardSet) warning() string {
	var parts []string
	if s.MissingCount > 0 {
		parts = append(parts, fmt.Sprintf("%s never ran", shardList(s.Missing, s.MissingCount, s.Count)))
	}
	if len(s.Failed) > 0 {
		parts = append(parts, fmt.Sprintf("%s did not finish", shardList(s.Failed, len(s.Failed), s.Count)))
	}
	if len(s.Mixed) > 0 {
		parts = append(parts, "the table may also hold rows of other runs (--shard "+strings.Join(s.Mixed, ", ")+")")
	}
	if len(parts) == 0 {
		return ""
	}
	what := "Incomplete set"
	if s.Complete() {
		what = "Mixed set"
	}
	return what + ": " + strings.Join(parts, "; ") + ". The rows and the cost below are not those of one whole run."
}

// shardList names parts as "shard 2/3" or "shards 0/4, 2/4", the first
// ten of a long list; count is how many there are in all.
func shardList(parts []int, count, n int) string {
	const most = 10
	names := make([]string, 0, min(len(parts), most))
	for _, i := range parts[:min(len(parts), most)] {
		names = append(names, fmt.Sprintf("%d/%d", i, n))
	}
	text := strings.Join(names, ", ")
	if count > len(names) {
		text += fmt.Sprintf(" and %d more", count-len(names))
	}
	if count == 1 {
		return "shard " + text
	}
	return "shards " + text
}
