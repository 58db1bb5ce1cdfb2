package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/record"
	"github.com/addrclean/addrclean/runstats"
)

// Estimator counts what Run would do with the rows it is given, without a
// call: it decides every row as Run's feeder does (the same folding of a
// request, dedupKey), keeping each distinct request as an 8-byte digest in
// a set (see digestSet and docs/estimate.md for the memory and the odds of
// two requests sharing a digest), then asks the journal and the cache, in
// Run's order, about each distinct request. It only reads them: nothing is
// journalled or cached. A cache that is a SetCountingCache is asked once,
// at the end, about the whole set; one that is a CountingCache about
// estimateBatch requests at a time; any other one request by request. It
// is not safe for concurrent use.
type Estimator struct {
	cfg Config
	e   runstats.Estimate
	// distinct are the digests of the distinct requests met; journalled
	// those of them the journal answers, which the cache is not asked about.
	distinct, journalled digestSet
	// asking are the distinct requests the journal does not answer, for
	// the next question to a CountingCache.
	asking []string
	// counted is set once a SetCountingCache has counted its answers.
	counted bool
}

// SetCountingCache is a Cache that counts, among many requests known by
// their digests (requestDigest: the first 8 bytes of the SHA-256 of the
// request's key, under which the cache files its answer), how many it
// holds an answer for as Get would find it. n is the number of digests,
// has tells whether a digest is one of them, all yields them: a cache may
// walk its own index and ask has, or look each digest up, whichever reads
// less. cache.Store satisfies it.
type SetCountingCache interface {
	CountAnswered(ctx context.Context, n int, has func(digest uint64) bool, all iter.Seq[uint64]) (int64, error)
}

// CountingCache is a Cache that tells which of many keys it holds an answer
// for (as Get would find it), without decoding them; cache.PGPeek satisfies
// it. The estimate asks it estimateBatch keys at a time.
type CountingCache interface {
	Has(ctx context.Context, keys []string) ([]bool, error)
}

// estimateBatch is how many requests the estimate asks a CountingCache
// about at once: one query (a round trip to PostgreSQL) per 256 of them
// in cache.PGPeek.Has, 16,384 strings held at a time.
const estimateBatch = 16384

// NewEstimator counts for cfg's Journal, Cache, Limit and Shard; Source,
// Mapper, Verifier, Limiter, Outputs, DedupCache and SpillDir are not used.
// Close it.
func NewEstimator(cfg Config) *Estimator {
	return &Estimator{cfg: cfg.withDefaults()}
}

// Add counts the next row in input order, mapped as m. Rows past
// Config.Limit are not counted: the run does not read them.
func (x *Estimator) Add(ctx context.Context, row record.Row, m readers.Mapped) error {
	if x.cfg.Limit > 0 && x.e.Rows+x.e.RowsOtherShards >= x.cfg.Limit {
		return nil
	}
	key := dedupKey(m.Address)
	if !x.cfg.Shard.hasKey(key) {
		x.e.RowsOtherShards++
		return nil
	}
	x.e.Rows++
	if m.Err != nil {
		x.e.NotSent++
		return nil
	}
	d := requestDigest(key)
	if !x.distinct.add(d) {
		return nil // a later duplicate: the leader's verdict serves it
	}
	x.e.DistinctRequests++
	_, set := x.cfg.Cache.(SetCountingCache)
	_, batched := x.cfg.Cache.(CountingCache)
	if set || batched {
		switch by, err := journalAnswers(x.cfg, row.Num, key); {
		case err != nil:
			return err
		case by == byJournal:
			x.e.JournalAnswers++
			if set {
				x.journalled.add(d) // not asked about in Estimate
			}
			return nil
		case set:
			return nil // the cache is asked in Estimate
		}
		if x.asking = append(x.asking, key); len(x.asking) >= estimateBatch {
			return x.ask(ctx)
		}
		return nil
	}
	switch by, err := estimateAnswered(ctx, x.cfg, row.Num, key); {
	case err != nil:
		return err
	case by == byJournal:
		x.e.JournalAnswers++
	case by == byCache:
		x.e.CacheAnswers++
	default:
		x.e.CallsToPay++
	}
	return nil
}

// ask counts the requests waiting for the CountingCache's answer.
func (x *Estimator) ask(ctx context.Context) error {
	if len(x.asking) == 0 {
		return nil
	}
	found, err := x.cfg.Cache.(CountingCache).Has(ctx, x.asking)
	if err != nil {
		return fmt.Errorf("pipeline: estimate: reading the cache: %w", err)
	}
	for _, ok := range found {
		if ok {
			x.e.CacheAnswers++
		} else {
			x.e.CallsToPay++
		}
	}
	clear(x.asking)
	x.asking = x.asking[:0]
	return nil
}

// Estimate is the count of the rows added: it asks the cache about the
// requests still waiting first. Call it once, after the last row.
func (x *Estimator) Estimate(ctx context.Context) (runstats.Estimate, error) {
	if err := x.ask(ctx); err != nil {
		return x.e, err
	}
	if err := x.countSet(ctx); err != nil {
		return x.e, err
	}
	return x.e, nil
}

// countSet asks a SetCountingCache, once, about the distinct requests the
// journal does not answer.
func (x *Estimator) countSet(ctx context.Context) error {
	c, ok := x.cfg.Cache.(SetCountingCache)
	if !ok || x.counted {
		return nil
	}
	x.counted = true
	asking := func(d uint64) bool { return x.distinct.has(d) && !x.journalled.has(d) }
	all := func(yield func(uint64) bool) {
		for d := range x.distinct.all() {
			if !x.journalled.has(d) && !yield(d) {
				return
			}
		}
	}
	n := x.distinct.len() - x.journalled.len()
	found, err := c.CountAnswered(ctx, n, asking, all)
	if err != nil {
		return fmt.Errorf("pipeline: estimate: reading the cache: %w", err)
	}
	x.e.CacheAnswers += found
	x.e.CallsToPay += int64(n) - found
	return nil
}

// Close releases the set of distinct requests.
func (x *Estimator) Close() error {
	x.distinct.release()
	x.journalled.release()
	return nil
}

// EstimateRun counts what Run would do with cfg.Source, read to its end (or
// cfg.Limit): see Estimator.
func EstimateRun(ctx context.Context, cfg Config) (runstats.Estimate, error) {
	if cfg.Source == nil || cfg.Mapper == nil {
		return runstats.Estimate{}, errors.New("pipeline: estimate: no source or mapper")
	}
	x := NewEstimator(cfg)
	defer func() { _ = x.Close() }()
	for cfg.Limit <= 0 || x.e.Rows < cfg.Limit {
		row, err := cfg.Source.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return x.e, fmt.Errorf("pipeline: estimate: reading input after %d rows: %w", x.e.Rows, err)
		}
		if err := x.Add(ctx, row, cfg.Mapper.Map(row)); err != nil {
			return x.e, err
		}
	}
	return x.Estimate(ctx)
}

type answeredBy int

const (
	byCall answeredBy = iota
	byJournal
	byCache
)

// journalAnswers says whether the journal answers a leading row in Run
// (byJournal) or not (byCall).
func journalAnswers(cfg Config, row int, key string) (answeredBy, error) {
	if cfg.Journal == nil {
		return byCall, nil
	}
	_, ok, err := cfg.Journal.Lookup(row, keyHash(key))
	if err != nil {
		return 0, fmt.Errorf("pipeline: estimate: row %d: reading the journal: %w", row, err)
	}
	if ok {
		return byJournal, nil
	}
	return byCall, nil
}

// estimateAnswered says what answers a leading row in Run: the journal
// (replay), else the cache (lookup), else a call.
func estimateAnswered(ctx context.Context, cfg Config, row int, key string) (answeredBy, error) {
	if by, err := journalAnswers(cfg, row, key); err != nil || by == byJournal {
		return by, err
	}
	if cfg.Cache != nil {
		resp, ok, err := cfg.Cache.Get(ctx, key)
		if err != nil {
			return 0, fmt.Errorf("pipeline: estimate: row %d: reading the cache: %w", row, err)
		}
		if ok && resp != nil {
			return byCache, nil
		}
	}
	return byCall, nil
}
