package pipeline

import (
	"context"
	"errors"
	"iter"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/journal"
	"github.com/addrclean/addrclean/record"
	"github.com/addrclean/addrclean/runstats"
)

// TestEstimateIsTheRun checks that the estimate counts what the run then
// does: its calls, its cache answers, its resumed rows, over duplicates
// near and far (past the memory of the dedup, through the spill), case and
// space variants, rows with no address, --limit, a cache and a journal.
func TestEstimateIsTheRun(t *testing.T) {
	const n = 2000
	cells := func(i int) []string {
		switch {
		case i%89 == 0:
			return []string{"", "IE"} // no address: Error without a call
		case i%7 == 0:
			return distinct(i % 50) // far-apart duplicates of early rows
		case i%11 == 0:
			c := distinct(i - 1) // a case and white space variant of the row before
			c[0] = "  " + strings.ToUpper(c[0]) + " "
			return c
		}
		return distinct(i)
	}
	cached := map[string]*api.VerifyResponse{}
	for _, i := range []int{3, 7, 1001, 1999} {
		a := cellMapper.Map(record.Row{Num: i, Cells: cells(i)}).Address
		cached[dedupKey(a)] = answer(a, api.ActionAccept)
	}
	for _, tc := range []struct {
		name    string
		cache   bool
		set     bool // the cache is a SetCountingCache
		journal bool
		limit   int64
		dedup   int
		shard   Shard
	}{
		{name: "plain"},
		{name: "spill", dedup: 1},
		{name: "limit", limit: 700},
		{name: "cache", cache: true},
		{name: "journal", journal: true},
		{name: "journal and cache", journal: true, cache: true, dedup: 1},
		{name: "set-counting cache", cache: true, set: true},
		{name: "journal and set-counting cache", journal: true, cache: true, set: true},
		{name: "shard and set-counting cache", shard: Shard{I: 0, N: 2}, cache: true, set: true},
		{name: "shard", shard: Shard{I: 1, N: 3}},
		{name: "shard with a limit", shard: Shard{I: 2, N: 3}, limit: 700, dedup: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := func(v Verifier) Config {
				c := Config{Source: &genSource{n: n, cells: cells}, Mapper: cellMapper, Verifier: v, Limit: tc.limit,
					Shard: tc.shard, DedupCache: tc.dedup, SpillDir: t.TempDir(), Workers: 4}
				switch {
				case tc.set:
					c.Cache = &setCache{mapCache: mapCache{m: maps.Clone(cached)}}
				case tc.cache:
					c.Cache = &mapCache{m: maps.Clone(cached)}
				}
				return c.with(&memWriter{})
			}
			var j *journal.Journal
			if tc.journal {
				// A first run, interrupted, leaves a journal to resume.
				path := filepath.Join(t.TempDir(), "out.journal")
				var err error
				if j, err = journal.Create(context.Background(), path, journal.Meta{Options: map[string]string{"test": "1"}}); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(testCtx(t))
				first := cfg(&fakeVerifier{fn: func(_ context.Context, a api.Address, call int64) (*api.VerifyResponse, error) {
					if call == 600 {
						cancel()
					}
					return answer(a, api.ActionAccept), nil
				}})
				first.Journal = j
				if _, err := Run(ctx, first); !errors.Is(err, context.Canceled) {
					t.Fatalf("first run: %v", err)
				}
				if err := j.Close(); err != nil {
					t.Fatal(err)
				}
				if j, err = journal.Open(context.Background(), path); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = j.Close() })
			}
			ecfg := cfg(nil)
			if j != nil {
				ecfg.Journal = j
			}
			est, err := EstimateRun(testCtx(t), ecfg)
			if err != nil {
				t.Fatal(err)
			}
			if j != nil {
				if err := j.Continue(); err != nil {
					t.Fatal(err)
				}
			}
			v := &fakeVerifier{}
			rcfg := cfg(v)
			if j != nil {
				rcfg.Journal = j
			}
			st, err := Run(testCtx(t), rcfg)
			if err != nil {
				t.Fatal(err)
			}
			got := runstats.Estimate{Rows: st.RowsRead, RowsOtherShards: st.RowsOtherShards, NotSent: st.Errors[runstats.ErrKindInput], JournalAnswers: st.RowsResumed,
				CacheAnswers: st.CacheHits, CallsToPay: st.CallsMade}
			got.DistinctRequests = got.JournalAnswers + got.CacheAnswers + got.CallsToPay
			if est != got {
				t.Errorf("estimate %+v\n     run %+v", est, got)
			}
			if est.CallsToPay != v.calls.Load() || est.CallsToPay == 0 || est.DistinctRequests >= est.Rows-est.NotSent {
				t.Errorf("calls: estimate %d, service %d; distinct %d of %d rows", est.CallsToPay, v.calls.Load(), est.DistinctRequests, est.Rows)
			}
			if (tc.cache && est.CacheAnswers == 0) || (tc.journal && est.JournalAnswers == 0) {
				t.Errorf("the cache or the journal answered nothing: %+v", est)
			}
		})
	}
}

// setCache is a mapCache that is a SetCountingCache, asked once.
type setCache struct {
	mapCache
	asked int
}

func (c *setCache) CountAnswered(_ context.Context, n int, has func(uint64) bool, all iter.Seq[uint64]) (int64, error) {
	c.asked++
	if c.asked > 1 {
		return 0, errors.New("asked twice")
	}
	if len(slices.Collect(all)) != n {
		return 0, errors.New("all does not yield n digests")
	}
	var found int64
	for k := range c.m {
		if has(requestDigest(k)) {
			found++
		}
	}
	return found, nil
}

// countingCache is a mapCache that is a CountingCache, counting how it is
// asked.
type countingCache struct {
	mapCache
	gets, has, asked int
}

func (c *countingCache) Get(ctx context.Context, key string) (*api.VerifyResponse, bool, error) {
	c.gets++
	return c.mapCache.Get(ctx, key)
}

func (c *countingCache) Has(ctx context.Context, keys []string) ([]bool, error) {
	c.has++
	c.asked += len(keys)
	found := make([]bool, len(keys))
	for i, k := range keys {
		_, found[i], _ = c.mapCache.Get(ctx, k)
	}
	return found, nil
}

// TestEstimateAsksTheCacheInBatches: a CountingCache is asked about the
// distinct requests the journal does not answer, estimateBatch at a time,
// never one Get per request, and the count is Get's.
func TestEstimateAsksTheCacheInBatches(t *testing.T) {
	const n = 2*estimateBatch + 100
	m := map[string]*api.VerifyResponse{}
	for i := 0; i < n; i += 3 {
		a := cellMapper.Map(record.Row{Num: i, Cells: distinct(i)}).Address
		m[dedupKey(a)] = answer(a, api.ActionAccept)
	}
	c := &countingCache{mapCache: mapCache{m: m}}
	cells := func(i int) []string { return distinct(i % (n - 50)) } // 50 duplicates at the end
	est, err := EstimateRun(testCtx(t), Config{Source: &genSource{n: n, cells: cells}, Mapper: cellMapper, Cache: c, SpillDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := EstimateRun(testCtx(t), Config{Source: &genSource{n: n, cells: cells}, Mapper: cellMapper, Cache: &mapCache{m: m}, SpillDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if est != plain || est.CacheAnswers == 0 || est.CallsToPay == 0 {
		t.Errorf("batched %+v\n  by Get %+v", est, plain)
	}
	if want := (int(est.DistinctRequests) + estimateBatch - 1) / estimateBatch; c.gets != 0 || c.has != want || c.asked != int(est.DistinctRequests) {
		t.Errorf("%d Gets, %d Has of %d keys; want 0, %d of %d", c.gets, c.has, c.asked, want, est.DistinctRequests)
	}
}
