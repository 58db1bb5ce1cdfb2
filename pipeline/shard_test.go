package pipeline

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/runstats"
	"github.com/addrclean/addrclean/writers"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		err  bool
	}{
		{"0/3", Shard{0, 3}, false},
		{"2/3", Shard{2, 3}, false},
		{" 1 / 2 ", Shard{1, 2}, false},
		{"0/1", Shard{0, 1}, false},
		{"3/3", Shard{}, true}, // I counts from 0, as JOB_COMPLETION_INDEX
		{"-1/3", Shard{}, true},
		{"1/0", Shard{}, true},
		{"1", Shard{}, true},
		{"a/3", Shard{}, true},
		{"1/3/4", Shard{}, true},
		{"", Shard{}, true},
	} {
		got, err := ParseShard(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
		if err != nil && !errors.Is(err, ErrShardSpec) {
			t.Errorf("ParseShard(%q): %v is not ErrShardSpec", tc.in, err)
		}
	}
	if s := (Shard{1, 3}).String(); s != "1/3" {
		t.Errorf("String %q", s)
	}
	if s := (Shard{0, 1}).String(); s != "" {
		t.Errorf("a whole input's String %q, want empty", s)
	}
}

// TestShardPartition: N runs over one input, each with its shard, write
// every row exactly once between them, with the verdict the whole run
// writes, and pay once per distinct request between them: case and space
// variants of an address, however far apart, land in one shard. Limit
// counts the rows of every shard.
func TestShardPartition(t *testing.T) {
	// 600 rows over 150 addresses, each written four ways; some rows have
	// no address (mapped to Error without a call).
	cells := func(i int) []string {
		if i%37 == 0 {
			return []string{"", "IE"}
		}
		a := i % 150
		switch i % 4 {
		case 1:
			return []string{fmt.Sprintf("%d MAIN  STREET", a), "ie"}
		case 2:
			return []string{fmt.Sprintf(" %d main street ", a), "IE"}
		}
		return []string{fmt.Sprintf("%d Main Street", a), "IE"}
	}
	const rows = 600
	for _, tc := range []struct {
		n     int
		limit int64
	}{{1, 0}, {2, 0}, {3, 0}, {7, 0}, {3, 250}} {
		t.Run(fmt.Sprintf("N=%d,limit=%d", tc.n, tc.limit), func(t *testing.T) {
			whole, wholeCalls := runShard(t, cells, rows, tc.limit, Shard{})
			var union []writers.Result
			var calls, other int64
			for i := range tc.n {
				res, st := runShardStats(t, cells, rows, tc.limit, Shard{I: i, N: tc.n})
				calls += st.CallsMade
				other += st.RowsOtherShards
				if !st.Complete {
					t.Errorf("shard %d not complete: %+v", i, st)
				}
				if tc.n > 1 && (st.Shard != fmt.Sprintf("%d/%d", i, tc.n) || st.RowsRead == 0) {
					t.Errorf("shard %d: Shard %q, %d rows read", i, st.Shard, st.RowsRead)
				}
				if st.RowsRead+st.RowsOtherShards != int64(len(whole)) {
					t.Errorf("shard %d: %d rows + %d of other shards, want %d", i, st.RowsRead, st.RowsOtherShards, len(whole))
				}
				union = append(union, res...)
			}
			if calls != wholeCalls {
				t.Errorf("%d calls over %d shards, the whole run made %d", calls, tc.n, wholeCalls)
			}
			if want := int64(len(whole) * (tc.n - 1)); other != want {
				t.Errorf("%d rows passed over, want %d", other, want)
			}
			slices.SortFunc(union, func(a, b writers.Result) int { return a.Row - b.Row })
			if len(union) != len(whole) {
				t.Fatalf("%d rows over the shards, the whole run wrote %d", len(union), len(whole))
			}
			for i := range whole {
				if got, want := show(union[i]), show(whole[i]); got != want {
					t.Errorf("row %d: %s over the shards, %s in the whole run", whole[i].Row, got, want)
				}
			}
		})
	}
}

// show is what a row's output says, for comparison.
func show(r writers.Result) string {
	s := fmt.Sprintf("%d %q err=%q cached=%v", r.Row, r.InputLabel, r.Err, r.Cached)
	if r.Response != nil {
		s += " " + strings.Join(r.Response.Address.Label, "|")
	}
	return s
}

func runShard(t *testing.T, cells func(int) []string, n int, limit int64, s Shard) ([]writers.Result, int64) {
	t.Helper()
	res, st := runShardStats(t, cells, n, limit, s)
	return res, st.CallsMade
}

func runShardStats(t *testing.T, cells func(int) []string, n int, limit int64, s Shard) ([]writers.Result, runstats.Stats) {
	t.Helper()
	v := &fakeVerifier{}
	w := &memWriter{}
	var last Progress
	st, err := Run(testCtx(t), Config{Source: &genSource{n: n, cells: cells}, Mapper: cellMapper, Verifier: v,
		Outputs: []writers.Writer{w}, Workers: 4, Shard: s, Limit: limit, Jitter: noJitter,
		Progress: func(p Progress) { last = p }})
	if err != nil {
		t.Fatal(err)
	}
	// A progress bar over the whole input's rows ends at its end.
	if got := last.RowsDone + last.RowsOtherShards; got != st.RowsRead+st.RowsOtherShards || last.RowsOtherShards != st.RowsOtherShards {
		t.Errorf("shard %v: the last progress reaches row %d (%d passed over), the run read %d", s, got, last.RowsOtherShards,
			st.RowsRead+st.RowsOtherShards)
	}
	if st.CallsMade != v.calls.Load() {
		t.Fatalf("%d calls counted, %d made", st.CallsMade, v.calls.Load())
	}
	res := w.rows()
	for i := 1; i < len(res); i++ {
		if res[i].Row <= res[i-1].Row {
			t.Fatalf("shard %v: row %d after row %d", s, res[i].Row, res[i-1].Row)
		}
	}
	return res, st
}

// TestShardHasSpreads: the parts are near even, and Has agrees with the
// key of the folded request.
func TestShardHasSpreads(t *testing.T) {
	const n, rows = 4, 40000
	var count [n]int
	for i := range rows {
		a := api.Address{Lines: []string{fmt.Sprintf("%d Main Street", i)}, Country: "IE"}
		in := 0
		for p := range n {
			if (Shard{I: p, N: n}).Has(a) {
				count[p]++
				in++
			}
		}
		if in != 1 {
			t.Fatalf("row %d is in %d shards", i, in)
		}
		up := api.Address{Lines: []string{fmt.Sprintf("  %d MAIN street", i)}, Country: "ie"}
		for p := range n {
			if (Shard{I: p, N: n}).Has(a) != (Shard{I: p, N: n}).Has(up) {
				t.Fatalf("row %d: a case variant is in another shard", i)
			}
		}
	}
	for p, c := range count {
		// 10,000 expected; 5 standard deviations is about 430.
		if c < rows/n-500 || c > rows/n+500 {
			t.Errorf("shard %d/%d holds %d of %d rows", p, n, c, rows)
		}
	}
}
