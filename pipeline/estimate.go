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
// nothing is journalled or cached. It is not safe for concurrent use.
type Estimator struct {
	cfg   Config
	dedup *dedup
	e     runstats.Estimate
}

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

// Estimate is the count so far.
func (x *Estimator) Estimate() runstats.Estimate { return x.e }

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
	return x.e, nil
}

type answeredBy int

const (
	byCall answeredBy = iota
	byJournal
	byCache
)

// estimateAnswered says what answers a leading row in Run: the journal
// (replay), else the cache (lookup), else a call.
func estimateAnswered(ctx context.Context, cfg Config, row int, key string) (answeredBy, error) {
	if cfg.Journal != nil {
		_, ok, err := cfg.Journal.Lookup(row, keyHash(key))
		if err != nil {
			return 0, fmt.Errorf("pipeline: estimate: row %d: reading the journal: %w", row, err)
		}
		if ok {
			return byJournal, nil
		}
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
