// Package report builds the after-run report: one self-contained HTML page
// (inline CSS and SVG, nothing fetched) from a run's enriched output and,
// when known, the run's statistics. It reads outputs only, never the
// service, and keeps memory bounded: counts, a few top-N lists and a fixed
// sample of coordinates.
package report

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"

	"github.com/addrclean/addrclean/pipeline"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/runfile"
)

// Options tunes Build.
type Options struct {
	// Stats are the run's statistics (the cost section); nil leaves the
	// section out, as for a report built from an enriched file alone.
	Stats *pipeline.Stats
	// Read tunes reading the enriched file.
	Read readers.Options
	// Title names the run in the page's heading; empty means the enriched
	// file's path.
	Title string
}

// MaxPoints is how many coordinates the map samples; a fixed sample keeps
// the page small and memory flat whatever the size of the run.
const MaxPoints = 4000

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

// Point is one sampled coordinate.
type Point struct {
	Lat    float64 `json:"lat"`
	Lon    float64 `json:"lon"`
	Action string  `json:"action"`
}

// Data are the numbers of a report; WriteHTML renders them.
type Data struct {
	Title         string           `json:"title"`
	Rows          int64            `json:"rows"`
	Actions       map[string]int64 `json:"actions"`
	MatchLevels   map[string]int64 `json:"match_levels"`
	Verified      int64            `json:"verified"` // rows with a verdict (not Error)
	Amended       Amended          `json:"amended"`
	ErrorKinds    map[string]int64 `json:"error_kinds,omitempty"` // from the stats
	ErrorMessages []Count          `json:"error_messages"`
	ReviewReasons []Count          `json:"review_reasons"`
	Cost          *Cost            `json:"cost,omitempty"`
	Duplicates    Duplicates       `json:"duplicates"`
	// Located is the number of rows with coordinates; Points a fixed
	// sample of them.
	Located int64   `json:"located"`
	Points  []Point `json:"points"`
}

// ReadSummary reads the statistics from a --summary JSON file.
func ReadSummary(path string) (*pipeline.Stats, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--summary: %w", err)
	}
	var st pipeline.Stats
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("--summary %s: not a summary of addrclean run: %w", path, err)
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

// Build reads the enriched output at path and works out the report.
func Build(ctx context.Context, path string, opts Options) (*Data, error) {
	en, err := runfile.OpenEnriched(ctx, path, opts.Read)
	if err != nil {
		return nil, err
	}
	defer en.Close()
	opts.Title = cmp.Or(opts.Title, path)
	return BuildFrom(ctx, en, opts)
}

// BuildFrom works out the report from enriched rows read from anywhere (a
// file, a table); it does not close en.
func BuildFrom(ctx context.Context, en *runfile.Enriched, opts Options) (*Data, error) {
	d := &Data{Title: opts.Title, Actions: map[string]int64{}, MatchLevels: map[string]int64{}, Points: []Point{}}
	d.Duplicates.Known = en.Has("av_duplicates")
	d.Duplicates.Top = []Group{}
	var errs, reasons counter
	// A fixed seed: the same run gives the same page.
	rng := rand.New(rand.NewPCG(1, 2))
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
			p := Point{Lat: lat, Lon: lon, Action: action}
			// Reservoir sampling: every located row has the same chance.
			if len(d.Points) < MaxPoints {
				d.Points = append(d.Points, p)
			} else if i := rng.Int64N(d.Located); i < MaxPoints {
				d.Points[i] = p
			}
		}
		if n, _ := strconv.ParseInt(r.Get("av_duplicates"), 10, 64); n > 1 && r.Get("av_first_row") == strconv.Itoa(r.Num) {
			d.Duplicates.Groups++
			d.Duplicates.Rows += n
			d.Duplicates.Top = addGroup(d.Duplicates.Top, Group{ID: r.Get("av_address_id"), Rows: n, FirstRow: r.Num, Label: r.Get("av_label")})
		}
	}
	d.Duplicates.Extra = d.Duplicates.Rows - d.Duplicates.Groups
	d.ErrorMessages = errs.top(topN)
	d.ReviewReasons = reasons.top(topN)
	if st := opts.Stats; st != nil {
		d.ErrorKinds = st.Errors
		d.Cost = &Cost{
			CallsMade: st.CallsMade, CallsSaved: st.CallsSaved, CacheHits: st.CacheHits, Retries: st.Retries,
			RateLimited: st.RateLimited, TokenRefreshes: st.TokenRefreshes, ElapsedSeconds: st.ElapsedSeconds,
			RowsResumed: st.RowsResumed,
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
