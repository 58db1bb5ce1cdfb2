package pipeline

import (
	"bytes"
	"context"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/journal"
	"github.com/addrclean/addrclean/record"
	"github.com/addrclean/addrclean/writers"
)

// encodedCache is an EncodedCache in memory whose stored JSON ends with a
// space (still the same answer), so that a test can tell its bytes from an
// encoding of the answer made again.
type encodedCache struct {
	mu    sync.Mutex
	m     map[string][]byte
	onGet func(key string)
	puts  map[string][]byte
}

func (c *encodedCache) GetEncoded(_ context.Context, key string) (*api.VerifyResponse, []byte, time.Time, bool, error) {
	if c.onGet != nil {
		c.onGet(key)
	}
	c.mu.Lock()
	b, ok := c.m[key]
	c.mu.Unlock()
	if !ok {
		return nil, nil, time.Time{}, false, nil
	}
	resp, err := api.DecodeVerifyResponse(b)
	return resp, b, time.Unix(1, 0), err == nil, err
}

func (c *encodedCache) GetAt(ctx context.Context, key string) (*api.VerifyResponse, time.Time, bool, error) {
	resp, _, at, ok, err := c.GetEncoded(ctx, key)
	return resp, at, ok, err
}

func (c *encodedCache) Get(ctx context.Context, key string) (*api.VerifyResponse, bool, error) {
	resp, _, _, ok, err := c.GetEncoded(ctx, key)
	return resp, ok, err
}

func (c *encodedCache) Put(ctx context.Context, key string, resp *api.VerifyResponse) error {
	return c.PutEncoded(ctx, key, api.AppendVerifyResponse(nil, resp))
}

func (c *encodedCache) PutEncoded(_ context.Context, key string, answer []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.puts[key] = answer
	return nil
}

// recJournal is a Journal that keeps what is recorded.
type recJournal struct {
	mu      sync.Mutex
	entries map[int]journal.Entry
}

func (j *recJournal) Lookup(int, uint64) (journal.Entry, bool, error) {
	return journal.Entry{}, false, nil
}

func (j *recJournal) Record(e journal.Entry) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.entries[e.Row] = e
	return nil
}

// storedCache fills an encodedCache with answers for the rows for which
// stored is true.
func storedCache(n int, stored func(row int) bool) *encodedCache {
	c := &encodedCache{m: map[string][]byte{}, puts: map[string][]byte{}}
	for i := 1; i <= n; i++ {
		if stored(i) {
			a := cellMapper.Map(record.Row{Num: i, Cells: distinct(i)}).Address
			c.m[dedupKey(a)] = append(api.AppendVerifyResponse(nil, answer(a, api.ActionAccept)), ' ')
		}
	}
	return c
}

// TestAnswersEncodedOnce: an answer is encoded once for the journal, the
// cache and the dedup's spill, and one from the cache not at all: the
// journal records the cache's own bytes, and an answer of the service goes
// to the journal and the cache as the same bytes.
func TestAnswersEncodedOnce(t *testing.T) {
	const n = 40
	c := storedCache(n, func(row int) bool { return row%2 == 0 })
	j := &recJournal{entries: map[int]journal.Entry{}}
	cfg := Config{Source: &genSource{n: n, cells: distinct}, Mapper: cellMapper, Verifier: &fakeVerifier{},
		Cache: c, Journal: j, DedupCache: 1, SpillDir: t.TempDir(), Workers: 2}.with(&memWriter{})
	st, err := Run(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st.CacheHits != n/2 || st.CallsMade != n/2 || len(j.entries) != n {
		t.Fatalf("hits %d, calls %d, journalled %d", st.CacheHits, st.CallsMade, len(j.entries))
	}
	for row, e := range j.entries {
		key := dedupKey(cellMapper.Map(record.Row{Num: row, Cells: distinct(row)}).Address)
		if e.FromCache {
			if !bytes.Equal(e.Answer, c.m[key]) {
				t.Errorf("row %d: journalled %q, the cache gave %q", row, e.Answer, c.m[key])
			}
			continue
		}
		if p := c.puts[key]; len(p) == 0 || len(e.Answer) == 0 || &p[0] != &e.Answer[0] {
			t.Errorf("row %d: the journal and the cache were not given one encoding", row)
		}
	}
}

// TestCacheHitsTakeNoWorker: a stage before the workers asks a local
// cache, so its hits are answered while every worker waits for the
// service. The one worker here waits, for row 1, until the cache has been
// asked about the last row: with the lookups in the workers, that never
// happens.
func TestCacheHitsTakeNoWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 20
		c := storedCache(n, func(row int) bool { return row > 1 })
		last := dedupKey(cellMapper.Map(record.Row{Num: n, Cells: distinct(n)}).Address)
		asked := make(chan struct{})
		c.onGet = func(key string) {
			if key == last {
				close(asked)
			}
		}
		v := &fakeVerifier{fn: func(_ context.Context, a api.Address, _ int64) (*api.VerifyResponse, error) {
			<-asked
			return answer(a, api.ActionAccept), nil
		}}
		w := &memWriter{}
		st, err := Run(context.Background(), Config{Source: &genSource{n: n, cells: distinct}, Mapper: cellMapper,
			Verifier: v, Cache: c, Workers: 1}.with(w))
		if err != nil {
			t.Fatal(err)
		}
		if st.CacheHits != n-1 || st.CallsMade != 1 || len(w.results) != n {
			t.Fatalf("hits %d, calls %d, rows %d", st.CacheHits, st.CallsMade, len(w.results))
		}
	})
}

// TestWorkersLiveAsLongAsTheRun: the calls are made by Workers goroutines,
// not by a new goroutine per row (whose stack grows again each time).
func TestWorkersLiveAsLongAsTheRun(t *testing.T) {
	var (
		mu   sync.Mutex
		seen = map[string]bool{}
	)
	v := &fakeVerifier{fn: func(_ context.Context, a api.Address, _ int64) (*api.VerifyResponse, error) {
		buf := make([]byte, 64)
		id, _, _ := bytes.Cut(buf[:runtime.Stack(buf, false)], []byte(" ["))
		mu.Lock()
		seen[string(id)] = true
		mu.Unlock()
		return answer(a, api.ActionAccept), nil
	}}
	st, err := Run(testCtx(t), Config{Source: &genSource{n: 200, cells: distinct}, Mapper: cellMapper,
		Verifier: v, Workers: 3}.with(&memWriter{}))
	if err != nil || st.CallsMade != 200 {
		t.Fatalf("%d calls, %v", st.CallsMade, err)
	}
	if len(seen) > 3 {
		t.Errorf("the calls were made by %d goroutines, want at most the 3 workers", len(seen))
	}
}

// batchCache is an encodedCache that is a BatchCache, keeping the size of
// each GetMany; before the first returns, it waits for release.
type batchCache struct {
	*encodedCache
	release chan struct{}
	sizes   []int
}

func (c *batchCache) GetMany(ctx context.Context, keys []string, fn func(int, *api.VerifyResponse, []byte, time.Time)) error {
	if len(c.sizes) == 0 {
		<-c.release
	}
	c.sizes = append(c.sizes, len(keys))
	for i, k := range keys {
		if resp, answer, at, ok, err := c.GetEncoded(ctx, k); err != nil {
			return err
		} else if ok {
			fn(i, resp, answer, at)
		}
	}
	return nil
}

// TestCacheLookupsBatched: the leading rows that wait for the cache while
// it answers are asked about together, lookBatch at most; the misses among
// them go to the workers. The first lookup is held until the feeder has
// read the row after those that fill the cache stage's channel.
func TestCacheLookupsBatched(t *testing.T) {
	const n = 300
	c := &batchCache{encodedCache: storedCache(n, func(row int) bool { return row%10 != 0 }), release: make(chan struct{})}
	cells := func(i int) []string {
		if i == lookBatch+2 {
			close(c.release)
		}
		return distinct(i)
	}
	w := &memWriter{}
	st, err := Run(testCtx(t), Config{Source: &genSource{n: n, cells: cells}, Mapper: cellMapper,
		Verifier: &fakeVerifier{}, Cache: c, Workers: 2}.with(w))
	if err != nil {
		t.Fatal(err)
	}
	if st.CacheHits != n-n/10 || st.CallsMade != n/10 || len(w.results) != n {
		t.Fatalf("hits %d, calls %d, rows %d", st.CacheHits, st.CallsMade, len(w.results))
	}
	// When the first lookup returns, rows 1 to lookBatch+1 have been
	// handed to the stage: the first two lookups take them all.
	sum, most := 0, 0
	for _, s := range c.sizes {
		sum, most = sum+s, max(most, s)
	}
	if len(c.sizes) < 2 || c.sizes[0]+c.sizes[1] < lookBatch+1 || most > lookBatch || sum != n {
		t.Errorf("GetMany asked about %v keys (%d in all), want the first two %d or more, none over %d, %d in all", c.sizes, sum, lookBatch+1, lookBatch, n)
	}
}

// answerVerifier is an AnswerVerifier whose answer's JSON ends with a
// space, so that a test can tell its bytes from an encoding made again.
type answerVerifier struct{ fakeVerifier }

func (v *answerVerifier) VerifyAnswer(ctx context.Context, a api.Address) (*api.VerifyResponse, []byte, error) {
	resp, err := v.Verify(ctx, a)
	if err != nil {
		return nil, nil, err
	}
	return resp, append(api.AppendVerifyResponse(nil, resp), ' '), nil
}

// TestServiceBytesStored: the answer's JSON an AnswerVerifier returns goes
// as it is to the journal and the cache (no encoding made again), and a
// duplicate answered from the dedup's spill gets the same answer as with a
// plain Verifier.
func TestServiceBytesStored(t *testing.T) {
	// Rows n/2 apart share an address: more distinct addresses between
	// them than the dedup keeps in memory, so the spill answers.
	const n = 2 * (DefaultWindow + 8 + 50)
	cells := func(i int) []string { return distinct((i-1)%(n/2) + 1) }
	run := func(v Verifier) (*recJournal, *encodedCache, []writers.Result) {
		c := storedCache(n, func(int) bool { return false })
		j := &recJournal{entries: map[int]journal.Entry{}}
		w := &memWriter{}
		cfg := Config{Source: &genSource{n: n, cells: cells}, Mapper: cellMapper, Verifier: v,
			Cache: c, Journal: j, DedupCache: 1, SpillDir: t.TempDir(), Workers: 2}.with(w)
		st, err := Run(testCtx(t), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if st.CallsMade != n/2 {
			t.Fatalf("%d calls for %d distinct addresses", st.CallsMade, n/2)
		}
		return j, c, w.rows()
	}
	j, c, rows := run(&answerVerifier{})
	if len(j.entries) != n/2 {
		t.Fatalf("journalled %d rows, want %d", len(j.entries), n/2)
	}
	for row, e := range j.entries {
		key := dedupKey(cellMapper.Map(record.Row{Num: row, Cells: cells(row)}).Address)
		if !bytes.HasSuffix(e.Answer, []byte(" ")) {
			t.Errorf("row %d: journalled %q, not the verifier's bytes", row, e.Answer)
		}
		if p := c.puts[key]; len(p) == 0 || &p[0] != &e.Answer[0] {
			t.Errorf("row %d: the journal and the cache were not given the verifier's bytes", row)
		}
	}
	_, _, plain := run(&fakeVerifier{})
	for i := range rows {
		if !reflect.DeepEqual(rows[i].Response, plain[i].Response) || rows[i].Cached != plain[i].Cached {
			t.Errorf("row %d: %+v, with a plain verifier %+v", rows[i].Row, rows[i], plain[i])
		}
	}
}

// TestSpilledDuplicateKeepsItsTime: a duplicate answered from the spill
// has its answer's time (VerifiedAt), as one answered from memory has, so
// that the outputs do not depend on how many verdicts memory holds.
func TestSpilledDuplicateKeepsItsTime(t *testing.T) {
	const n = 2 * (DefaultWindow + 8 + 50) // duplicates n/2 apart: from the spill
	cells := func(i int) []string { return distinct((i-1)%(n/2) + 1) }
	w := &memWriter{}
	cfg := Config{Source: &genSource{n: n, cells: cells}, Mapper: cellMapper, Verifier: &fakeVerifier{},
		SpillDir: t.TempDir(), Workers: 2}.with(w)
	st, err := Run(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	rows := w.rows()
	if st.CallsMade != n/2 || len(rows) != n {
		t.Fatalf("%d calls, %d rows", st.CallsMade, len(rows))
	}
	for i := range n / 2 {
		lead, dup := rows[i], rows[i+n/2]
		if lead.VerifiedAt.IsZero() || !dup.VerifiedAt.Equal(lead.VerifiedAt) {
			t.Fatalf("row %d verified at %v, its duplicate row %d at %v", lead.Row, lead.VerifiedAt, dup.Row, dup.VerifiedAt)
		}
	}
}
