package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/record"
	"github.com/addrclean/addrclean/runstats"
)

// Estimator counts what Run would do with the rows it is given, without a
// call: it decides every row as Run's feeder does, through the same dedup
// (so the same folding, and memory bounded by DedupCache and the spill's
// fixed index whatever the input's size), then asks the journal and the
// cache, in Run's order, about each distinct request. It only reads them:
// nothing is journalled or cached. A cache that is a CountingCache is asked
// about estimateBatch requests at a time. It is not safe for concurrent use.
type Estimator struct {
	cfg   Config
	dedup *dedup
	e     runstats.Estimate
	// asking are the distinct requests the journal does not answer, for
	// the next question to a CountingCache.
	asking []string
}

// CountingCache is a Cache that tells which of many keys it holds an answer
// for (as Get would find it), without decoding them; cache.Store and
// cache.PGPeek satisfy it. The estimate asks it a few hundred keys at a
// time: one query for many lookups.
type CountingCache interface {
	Has(ctx context.Context, keys []string) ([]bool, error)
}

// estimateBatch is how many requests the estimate asks a CountingCache
// about at once. cache.Store.Has reads the index in the keys' order and the
// rows in the file's: the more keys a call holds, the fewer pages it reads
// more than once. 16,384 keys (about 11 MB at the peak, their strings and
// the store's map) took a tenth off the dry run's CPU on 1,000,000 rows
// against 1,024; 65,536 little more for 38 MB (BENCHMARKS.md, issue 23).
const estimateBatch = 16384

// NewEstimator counts for cfg's Journal, Cache, Limit, DedupCache and
// SpillDir; Source, Mapper, Verifier, Limiter and Outputs are not used.
// Close it.
func NewEstimator(cfg Config) *Estimator {
	cfg = cfg.withDefaults()
	size := cfg.DedupCache
	if size <= 0 {
		// The run shares flights without keeping verdicts only when asked
		// to; counting distinct requests needs them kept.
		size = DefaultDedupCache
	}
	return &Estimator{cfg: cfg, dedup: newDedup(size, cfg.SpillDir)}
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
	rl, f, _, err := x.dedup.acquire(key)
	if err != nil {
		return fmt.Errorf("pipeline: estimate: row %d: %w", row.Num, err)
	}
	if rl != roleLeader {
		return nil
	}
	// A finished, cacheable verdict: later duplicates are hits, as the
	// leader's answer makes them in the run.
	x.dedup.finish(key, f, verdict{})
	x.e.DistinctRequests++
	if _, ok := x.cfg.Cache.(CountingCache); ok {
		switch by, err := journalAnswers(x.cfg, row.Num, key); {
		case err != nil:
			return err
		case by == byJournal:
			x.e.JournalAnswers++
			return nil
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
// requests still waiting first.
func (x *Estimator) Estimate(ctx context.Context) (runstats.Estimate, error) {
	if err := x.ask(ctx); err != nil {
		return x.e, err
	}
	return x.e, nil
}

// Close removes the dedup's spill.
func (x *Estimator) Close() error { return x.dedup.close() }

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
