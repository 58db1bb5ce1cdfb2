package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"
	"time"
)

// run is a recorded run's summary for FromRuns: shard "" for a run of the
// whole input; at is its start in minutes after t0, and it takes one.
func run(t *testing.T, shard string, at int, calls int64, complete bool) []byte {
	t.Helper()
	t0 := time.Date(2026, 11, 20, 2, 0, 0, 0, time.UTC)
	s := Summary{Input: "crm.customers", Started: t0.Add(time.Duration(at) * time.Minute),
		Finished: t0.Add(time.Duration(at+1) * time.Minute)}
	s.Shard, s.CallsMade, s.RateLimited, s.RowsRead, s.Complete = shard, calls, 1, 10, complete
	s.Errors = map[string]int64{"input": 1}
	s.Tables = []TableCounts{{Table: "av", Inserted: 5}}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newestFirst yields runs as table.Runs does, counting how many were read.
func newestFirst(runs [][]byte, read *int) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		for _, r := range runs {
			*read++
			if !yield(r, nil) {
				return
			}
		}
	}
}

// TestFromRuns sums the latest run of each shard of the latest set, flags
// what is missing, failed or mixed, and reads no further than it must.
func TestFromRuns(t *testing.T) {
	for _, c := range []struct {
		name      string
		runs      func(t *testing.T) [][]byte // newest first
		calls     int64
		set       string // ShardSet as JSON; "" for none
		warning   string
		read      int
		took      time.Duration
		completed bool
	}{{
		name:  "unsharded latest: that run alone",
		runs:  func(t *testing.T) [][]byte { return [][]byte{run(t, "", 9, 7, true), run(t, "0/2", 5, 3, true)} },
		calls: 7, read: 1, took: time.Minute, completed: true,
	}, {
		name: "a set of three, an older round after it",
		runs: func(t *testing.T) [][]byte {
			return [][]byte{run(t, "1/3", 3, 20, true), run(t, "2/3", 2, 30, true), run(t, "0/3", 0, 10, true),
				run(t, "0/3", -1440, 99, true), run(t, "1/3", -1440, 99, true)}
		},
		calls: 60, read: 3, took: 4 * time.Minute, completed: true,
		set: `{"count":3,"runs":[{"shard":"0/3","started":"2026-11-20T02:00:00Z","finished":"2026-11-20T02:01:00Z","rows_read":10,"calls_made":10,"rate_limited":1,"status":"complete"},` +
			`{"shard":"1/3","started":"2026-11-20T02:03:00Z","finished":"2026-11-20T02:04:00Z","rows_read":10,"calls_made":20,"rate_limited":1,"status":"complete"},` +
			`{"shard":"2/3","started":"2026-11-20T02:02:00Z","finished":"2026-11-20T02:03:00Z","rows_read":10,"calls_made":30,"rate_limited":1,"status":"complete"}]}`,
	}, {
		name: "a shard failed, a later run of it replaces an earlier",
		runs: func(t *testing.T) [][]byte {
			return [][]byte{run(t, "1/2", 5, 4, false), run(t, "0/2", 1, 10, true), run(t, "1/2", 0, 6, true)}
		},
		calls: 14, read: 2, took: 5 * time.Minute,
		warning: "Incomplete set: shard 1/2 did not finish.",
	}, {
		name: "shards never ran, down to a run of the whole table",
		runs: func(t *testing.T) [][]byte {
			return [][]byte{run(t, "3/4", 5, 4, true), run(t, "1/4", 4, 6, true), run(t, "", 0, 50, true), run(t, "0/4", -9, 1, true)}
		},
		calls: 10, read: 3, took: 2 * time.Minute,
		warning: "Incomplete set: shards 0/4, 2/4 never ran; the table may also hold rows of other runs (--shard none (the whole table)).",
	}, {
		name: "mixed: a run of another N among the set's",
		runs: func(t *testing.T) [][]byte {
			return [][]byte{run(t, "1/2", 5, 4, true), run(t, "2/3", 4, 100, true), run(t, "0/2", 3, 6, true)}
		},
		calls: 10, read: 3, took: 3 * time.Minute, completed: true,
		warning: "Mixed set: the table may also hold rows of other runs (--shard 2/3).",
	}} {
		t.Run(c.name, func(t *testing.T) {
			read := 0
			sum, err := FromRuns(newestFirst(c.runs(t), &read))
			if err != nil {
				t.Fatal(err)
			}
			if sum.CallsMade != c.calls || read != c.read || sum.Finished.Sub(sum.Started) != c.took || sum.Complete != c.completed {
				t.Errorf("calls %d, read %d runs, took %v, complete %v; want %d, %d, %v, %v",
					sum.CallsMade, read, sum.Finished.Sub(sum.Started), sum.Complete, c.calls, c.read, c.took, c.completed)
			}
			if sum.Shards == nil {
				if c.set != "" || c.warning != "" {
					t.Fatal("no set")
				}
				return
			}
			if n := int64(len(sum.Shards.Runs)); sum.RateLimited != n || sum.Errors["input"] != n || sum.Tables[0].Inserted != 5*n {
				t.Errorf("429s %d, input errors %d, inserted %d: not summed over %d runs", sum.RateLimited, sum.Errors["input"], sum.Tables[0].Inserted, n)
			}
			if c.set != "" {
				b, _ := json.Marshal(sum.Shards)
				if string(b) != c.set {
					t.Errorf("set\n%s\nwant\n%s", b, c.set)
				}
			}
			if got := sum.Shards.warning(); !strings.HasPrefix(got, c.warning) || (c.warning == "") != (got == "") {
				t.Errorf("warning %q, want %q", got, c.warning)
			}
			if sum.ElapsedSeconds != c.took.Seconds() {
				t.Errorf("elapsed %v s, want the span %v", sum.ElapsedSeconds, c.took)
			}
		})
	}
}

// TestFromRunsErrors: no run is no summary; an error of the runs table or
// a summary that is not one is returned.
func TestFromRunsErrors(t *testing.T) {
	none := func(func([]byte, error) bool) {}
	if sum, err := FromRuns(none); sum != nil || err != nil {
		t.Errorf("no runs: %v, %v", sum, err)
	}
	boom := errors.New("boom")
	if _, err := FromRuns(func(yield func([]byte, error) bool) { yield(nil, boom) }); !errors.Is(err, boom) {
		t.Errorf("error %v, want boom", err)
	}
	bad := func(yield func([]byte, error) bool) {
		_ = yield(run(t, "0/2", 0, 1, true), nil) && yield([]byte("{"), nil)
	}
	if _, err := FromRuns(bad); !errors.Is(err, ErrNotSummary) {
		t.Errorf("error %v, want ErrNotSummary", err)
	}
}

// TestFromRunsPrice: the money is summed at one price, and left out when
// the shards were priced differently.
func TestFromRunsPrice(t *testing.T) {
	priced := func(shard, price string, calls int64) []byte {
		var s map[string]any
		_ = json.Unmarshal(run(t, shard, 0, calls, true), &s)
		s["spent"] = map[string]any{"calls": calls, "price_per_call": price}
		b, _ := json.Marshal(s)
		return b
	}
	for _, c := range []struct {
		runs [][]byte
		want string
	}{
		{[][]byte{priced("0/2", "0.002 EUR", 1000), priced("1/2", "0.002 EUR", 500)}, "3.000 EUR"},
		{[][]byte{priced("0/2", "0.002 EUR", 1000), priced("1/2", "0.003 EUR", 500)}, ""},
		{[][]byte{priced("0/2", "0.002 EUR", 1000), run(t, "1/2", 0, 500, true)}, ""},
	} {
		read := 0
		sum, err := FromRuns(newestFirst(c.runs, &read))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if sum.Spent != nil {
			got = sum.Spent.CostText
		}
		if got != c.want {
			t.Errorf("spent %q, want %q", got, c.want)
		}
	}
}

// TestShardSetPage: the page of a set says how many shards in its header,
// flags what is wrong in it, and lists the shards' runs.
func TestShardSetPage(t *testing.T) {
	read := 0
	sum, err := FromRuns(newestFirst([][]byte{run(t, "0/3", 0, 10, true), run(t, "2/3", 0, 10, false)}, &read))
	if err != nil {
		t.Fatal(err)
	}
	d := buildFixture(t)
	d.Shards = sum.Shards
	var page bytes.Buffer
	if err := d.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"errors &middot; 3 shards</p>",
		`<p class="warn" role="alert">Incomplete set: shard 1/3 never ran; shard 2/3 did not finish.`,
		"<td>2/3</td><td>2026-11-20 02:00:00</td><td>2026-11-20 02:01:00</td><td class=\"n\">10</td><td class=\"n\">10</td><td class=\"n\">1</td><td>incomplete</td>",
	} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if got := shardList([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 40, 50); got != fmt.Sprintf("shards %s and 30 more", "0/50, 1/50, 2/50, 3/50, 4/50, 5/50, 6/50, 7/50, 8/50, 9/50") {
		t.Errorf("shardList: %s", got)
	}
}
