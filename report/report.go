package report

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/addrclean/addrclean/estimate"
	"github.com/addrclean/addrclean/runfile"
	"github.com/addrclean/addrclean/runstats"
)

// Summary is what a run says of itself: the body of its --summary file,
// and what a table run keeps in its runs table (table.Runs).
type Summary struct {
	Input    string `json:"input"`
	Enriched string `json:"enriched,omitempty"`
	Review   string `json:"review,omitempty"`
	// Version is the version of addrclean that ran.
	Version string `json:"version,omitempty"`
	// Reference is what the addresses were verified against: the live
	// service's address (no key, no credentials), or the embedded
	// service's reference file.
	Reference string    `json:"reference,omitempty"`
	Started   time.Time `json:"started,omitzero"`
	Finished  time.Time `json:"finished,omitzero"`
	// Tables are what the run did to each output table.
	Tables []TableCounts `json:"tables,omitempty"`
	// Spent is what the calls made cost at --price-per-call; nil without
	// a price.
	Spent *estimate.Spent `json:"spent,omitempty"`
	// Shards is the set of shards summed into this summary by FromRuns;
	// nil for one run's summary.
	Shards *ShardSet `json:"shard_set,omitempty"`
	runstats.Stats
}

// TableCounts are what a run did to one output table.
type TableCounts struct {
	Table     string `json:"table"`
	Inserted  int64  `json:"inserted"`
	Updated   int64  `json:"updated"`
	Unchanged int64  `json:"unchanged"`
	Deleted   int64  `json:"deleted"`
}

func (c TableCounts) String() string {
	return fmt.Sprintf("%s: inserted %d, updated %d, unchanged %d, deleted %d", c.Table, c.Inserted, c.Updated, c.Unchanged, c.Deleted)
}

// Options tunes BuildFrom.
type Options struct {
	// Summary is the run's summary (the header's run facts, the cost and
	// error kinds); nil leaves them out, as for a report built from an
	// enriched file alone.
	Summary *Summary
	// Title names the run in the page's heading.
	Title string
}

// topN is the length of the top lists (review reasons, error messages,
// duplicate groups).
const topN = 10

// Count is one entry of a top list.
type Count struct {
	Key   string `json:"key"`
	Count int64  `json:"count"`
}

// Amended counts the verified rows whose parts the service changed.
type Amended struct {
	Lines    int64 `json:"lines"`
	City     int64 `json:"city"`
	Region   int64 `json:"region"`
	Postcode int64 `json:"postcode"`
}

// Cost is what the run spent, from its statistics.
type Cost struct {
	CallsMade      int64   `json:"calls_made"`
	CallsSaved     int64   `json:"calls_saved"`
	CacheHits      int64   `json:"cache_hits"`
	Retries        int64   `json:"retries"`
	RateLimited    int64   `json:"rate_limited"`
	TokenRefreshes int64   `json:"token_refreshes"`
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	RowsResumed    int64   `json:"rows_resumed"`
	// Spent is the calls' cost as the user writes money, when the run was
	// given a price.
	Spent string `json:"spent,omitempty"`
}

// Group is one set of rows sharing an address id.
type Group struct {
	ID       string `json:"id"`
	Rows     int64  `json:"rows"`
	FirstRow int    `json:"first_row"`
	Label    string `json:"label"`
}

// Duplicates are the rows that resolved to the same address id.
type Duplicates struct {
	// Known is false for an enriched file without av_duplicates (written by
	// an older version).
	Known  bool    `json:"known"`
	Groups int64   `json:"groups"`
	Rows   int64   `json:"rows"`
	Extra  int64   `json:"extra"`
	Top    []Group `json:"top"`
}

// RunInfo are the facts of the run the page's header shows; each is
// empty when not known.
type RunInfo struct {
	Input     string    `json:"input,omitempty"`
	Version   string    `json:"version,omitempty"`
	Reference string    `json:"reference,omitempty"`
	Started   time.Time `json:"started,omitzero"`
	Finished  time.Time `json:"finished,omitzero"`
}

// Data are the numbers of a report; WriteHTML renders them.
type Data struct {
	Title         string           `json:"title"`
	Run           RunInfo          `json:"run"`
	Rows          int64            `json:"rows"`
	Actions       map[string]int64 `json:"actions"`
	MatchLevels   map[string]int64 `json:"match_levels"`
	Verified      int64            `json:"verified"` // rows with a verdict (not Error)
	Amended       Amended          `json:"amended"`
	ErrorKinds    map[string]int64 `json:"error_kinds,omitempty"` // from the stats
	ErrorMessages []Count          `json:"error_messages"`
	ReviewReasons []Count          `json:"review_reasons"`
	Cost          *Cost            `json:"cost,omitempty"`
	// Shards is the set of shards whose runs the cost sums; nil for
	// one run.
	Shards     *ShardSet  `json:"shards,omitempty"`
	Duplicates Duplicates `json:"duplicates"`
	// Located is the number of rows with coordinates, LocatedActions
	// the same by action, and Places where they are (every located row
	// counted, in at most maxPlaces squares).
	Located        int64            `json:"located"`
	LocatedActions map[string]int64 `json:"located_actions"`
	Places         []Place          `json:"-"`
}

// ReadSummary reads a --summary JSON file.
func ReadSummary(path string) (*Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--summary: %w", err)
	}
	st, err := ParseSummary(b)
	if err != nil {
		return nil, fmt.Errorf("--summary %s: %w", path, err)
	}
	return st, nil
}

// ErrNotSummary marks a document that is not the summary of a run.
var ErrNotSummary = errors.New("not a summary of addrclean run")

// ParseSummary reads a summary from its JSON.
func ParseSummary(b []byte) (*Summary, error) {
	var st Summary
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotSummary, err)
	}
	return &st, nil
}

// counter counts keys, bounded: past maxKeys new keys go to "(other)", so
// free-text messages cannot grow it without end.
type counter struct {
	m map[string]int64
}

const maxKeys = 1000

func (c *counter) add(k string) {
	if c.m == nil {
		c.m = make(map[string]int64)
	}
	if _, ok := c.m[k]; !ok && len(c.m) >= maxKeys {
		k = "(other)"
	}
	c.m[k]++
}

// top returns the n largest counts, ties by key.
func (c *counter) top(n int) []Count {
	out := make([]Count, 0, len(c.m))
	for k, v := range c.m {
		out = append(out, Count{k, v})
	}
	slices.SortFunc(out, func(a, b Count) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Key, b.Key))
	})
	return out[:min(n, len(out))]
}

// BuildFrom works out the report from enriched rows read from anywhere (a
// file, a table); it does not close en.
func BuildFrom(ctx context.Context, en *runfile.Enriched, opts Options) (*Data, error) {
	d := &Data{Title: opts.Title, Actions: map[string]int64{}, MatchLevels: map[string]int64{}, LocatedActions: map[string]int64{}}
	d.Duplicates.Known = en.Has("av_duplicates")
	d.Duplicates.Top = []Group{}
	var errs, reasons counter
	var where places
	for {
		r, err := en.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		d.Rows++
		action := r.Get("av_action")
		d.Actions[action]++
		if action == "Error" {
			errs.add(r.Get("av_error"))
			reasons.add("Error: " + r.Get("av_error"))
		} else {
			d.Verified++
			if lvl := r.Get("av_match_level"); lvl != "" {
				d.MatchLevels[lvl]++
			}
			for _, a := range []struct {
				col string
				n   *int64
			}{{"av_lines_amended", &d.Amended.Lines}, {"av_city_amended", &d.Amended.City},
				{"av_region_amended", &d.Amended.Region}, {"av_postcode_amended", &d.Amended.Postcode}} {
				if r.Get(a.col) == "true" {
					*a.n++
				}
			}
			if action != "Accept" {
				reasons.add(action + ": " + cmp.Or(r.Get("av_message"), "(no message)"))
			}
		}
		if lat, lon, ok := coords(r.Get("av_latitude"), r.Get("av_longitude")); ok {
			d.Located++
			d.LocatedActions[action]++
			where.add(lat, lon, action)
		}
		if n, _ := strconv.ParseInt(r.Get("av_duplicates"), 10, 64); n > 1 && r.Get("av_first_row") == strconv.Itoa(r.Num) {
			d.Duplicates.Groups++
			d.Duplicates.Rows += n
			d.Duplicates.Top = addGroup(d.Duplicates.Top, Group{ID: r.Get("av_address_id"), Rows: n, FirstRow: r.Num, Label: r.Get("av_label")})
		}
	}
	d.Places = where.list()
	d.Duplicates.Extra = d.Duplicates.Rows - d.Duplicates.Groups
	d.ErrorMessages = errs.top(topN)
	d.ReviewReasons = reasons.top(topN)
	if st := opts.Summary; st != nil {
		d.Run = RunInfo{Input: st.Input, Version: st.Version, Reference: st.Reference, Started: st.Started, Finished: st.Finished}
		d.ErrorKinds = st.Errors
		d.Shards = st.Shards
		d.Cost = &Cost{
			CallsMade: st.CallsMade, CallsSaved: st.CallsSaved, CacheHits: st.CacheHits, Retries: st.Retries,
			RateLimited: st.RateLimited, TokenRefreshes: st.TokenRefreshes, ElapsedSeconds: st.ElapsedSeconds,
			RowsResumed: st.RowsResumed,
		}
		if st.Spent != nil {
			d.Cost.Spent = st.Spent.CostText
		}
	}
	return d, nil
}

// addGroup keeps the topN largest groups, the earliest first on a tie.
func addGroup(top []Group, g Group) []Group {
	top = append(top, g)
	slices.SortStableFunc(top, func(a, b Group) int {
		return cmp.Or(cmp.Compare(b.Rows, a.Rows), cmp.Compare(a.FirstRow, b.FirstRow))
	})
	return top[:min(len(top), topN)]
}

func coords(lat, lon string) (float64, float64, bool) {
	if lat == "" || lon == "" {
		return 0, 0, false
	}
	a, err1 := strconv.ParseFloat(lat, 64)
	o, err2 := strconv.ParseFloat(lon, 64)
	if err1 != nil || err2 != nil || math.IsNaN(a) || math.IsNaN(o) || math.Abs(a) > 90 || math.Abs(o) > 180 {
		return 0, 0, false
	}
	return a, o, true
}
