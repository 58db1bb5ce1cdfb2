package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Estimate is what a run would do with its input, counted without a call:
// the figures of --dry-run. Each is the value the run's Stats would show
// when nothing changes in between and no call fails: CallsToPay is then
// Stats.CallsMade, CacheAnswers Stats.CacheHits, JournalAnswers
// Stats.RowsResumed.
type Estimate struct {
	// Rows is the number of data rows the run reads (Limit applied).
	Rows int64 `json:"rows"`
	// NotSent counts rows that are Error without a call (no address, no
	// country).
	NotSent int64 `json:"not_sent"`
	// DistinctRequests counts the requests left after folding case and
	// white space: the rows that lead their address in the run.
	DistinctRequests int64 `json:"distinct_requests"`
	// JournalAnswers counts the distinct requests a --resume journal
	// answers.
	JournalAnswers int64 `json:"journal_answers"`
	// CacheAnswers counts the distinct requests the cache answers, of
	// those the journal does not.
	CacheAnswers int64 `json:"cache_answers"`
	// CallsToPay is DistinctRequests less the answers of the journal and
	// the cache: one call each when none fails.
	CallsToPay int64 `json:"calls_to_pay"`
}

// EstimateRun reads cfg.Source to the end (or cfg.Limit) and counts what Run
// would do with it, without a call: it decides every row as Run's feeder
// does, through the same dedup (so the same folding, and memory bounded by
// DedupCache and the spill's fixed index whatever the input's size), then
// asks the journal and the cache, in Run's order, about each distinct
// request. It only reads them: Verifier, Limiter and Outputs are not used,
// nothing is journalled or cached.
func EstimateRun(ctx context.Context, cfg Config) (Estimate, error) {
	if cfg.Source == nil || cfg.Mapper == nil {
		return Estimate{}, errors.New("pipeline: estimate: no source or mapper")
	}
	cfg = cfg.withDefaults()
	size := cfg.DedupCache
	if size <= 0 {
		// The run shares flights without keeping verdicts only when asked
		// to; counting distinct requests needs them kept.
		size = DefaultDedupCache
	}
	d := newDedup(size, cfg.SpillDir)
	defer func() { _ = d.close() }()
	var e Estimate
	for cfg.Limit <= 0 || e.Rows < cfg.Limit {
		if err := ctx.Err(); err != nil {
			return e, err
		}
		row, err := cfg.Source.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return e, fmt.Errorf("pipeline: estimate: reading input after %d rows: %w", e.Rows, err)
		}
		e.Rows++
		m := cfg.Mapper.Map(row)
		if m.Err != nil {
			e.NotSent++
			continue
		}
		key := dedupKey(m.Address)
		rl, f, _, err := d.acquire(key)
		if err != nil {
			return e, fmt.Errorf("pipeline: estimate: row %d: %w", row.Num, err)
		}
		if rl != roleLeader {
			continue
		}
		// A finished, cacheable verdict: later duplicates are hits, as the
		// leader's answer makes them in the run.
		d.finish(key, f, verdict{})
		e.DistinctRequests++
		switch answered, err := estimateAnswered(ctx, cfg, row.Num, key); {
		case err != nil:
			return e, err
		case answered == byJournal:
			e.JournalAnswers++
		case answered == byCache:
			e.CacheAnswers++
		default:
			e.CallsToPay++
		}
	}
	return e, nil
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
