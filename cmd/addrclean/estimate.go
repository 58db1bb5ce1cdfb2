package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/cache"
	"github.com/addrclean/addrclean/estimate"
	"github.com/addrclean/addrclean/journal"
	"github.com/addrclean/addrclean/pipeline"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/record"
	"github.com/addrclean/addrclean/report"
	"github.com/addrclean/addrclean/runs"
)

// dryRunSummary is the --summary of run --dry-run: what would be paid.
type dryRunSummary struct {
	Input     string           `json:"input"`
	Version   string           `json:"version,omitempty"`
	Reference string           `json:"reference,omitempty"`
	DryRun    bool             `json:"dry_run"`
	At        time.Time        `json:"at"`
	Estimate  estimate.Figures `json:"estimate"`
}

// parsePrice reads --price-per-call, or ADDRCLEAN_PRICE_PER_CALL when the
// flag is not given; nil when neither is.
func (o *runOptions) parsePrice() (*estimate.Price, error) {
	s, from := o.pricePerCall, "--price-per-call"
	if !o.priceSet {
		s, from = os.Getenv("ADDRCLEAN_PRICE_PER_CALL"), "ADDRCLEAN_PRICE_PER_CALL"
	}
	if strings.TrimSpace(s) == "" {
		if o.priceSet {
			return nil, usageErrorf("--price-per-call: %w", estimate.ErrPrice)
		}
		return nil, nil
	}
	p, err := estimate.ParsePrice(s)
	if err != nil {
		return nil, usageErrorf("%s %w", from, err)
	}
	return &p, nil
}

// estimateRun is --dry-run over a file or a table: the mapping preview, and the
// estimate of the same command without --dry-run, counted in one pass over
// the input with the run's own dedup and read-only lookups in its journal
// (--resume) and cache. Nothing is called, written, journalled or cached.
func (o *runOptions) estimateRun(ctx context.Context, ropts readers.Options, spec readers.MappingSpec, s streams, log zerolog.Logger) error {
	price := o.price // checked by validate
	// A dry run writes no file: a workbook unpacks where the next run finds
	// it if this one is killed. Deferred before the input's Close, so
	// removed after it.
	removeTemp, err := o.workbookTempDir(&ropts)
	if err != nil {
		return err
	}
	defer removeTemp()
	defer o.closeTables()
	src, err := o.openSource(ctx, ropts, spec, zerolog.Nop(), false) // read only: no output is opened
	if err != nil {
		return err
	}
	defer src.Close()
	mapper, err := readers.MapperFor(src, spec)
	if err != nil {
		return inputError(fmt.Errorf("%s: %w", o.input, err))
	}
	embedded := o.baseURL == ""
	cfg := pipeline.Config{Limit: int64(o.limit), Shard: o.shard, SpillDir: ropts.TmpDir}
	cstore, closeCache, err := o.dryRunCache(ctx, embedded, log)
	if err != nil {
		return err
	}
	defer closeCache()
	if cstore != nil {
		cfg.Cache = cstore
	}
	j, err := o.peekJournal(ctx, src, mapper, log)
	if err != nil {
		return err // as the run refuses
	}
	if j != nil {
		defer func() { _ = j.Close() }()
		cfg.Journal = j
		log.Info().Str("journal", j.Path()).Int64("rows", j.Info().Rows).Msg("--resume: the journal's rows are counted as answered")
	}
	x := pipeline.NewEstimator(cfg)
	defer func() { _ = x.Close() }()
	each := func(row record.Row, m readers.Mapped) error { return x.Add(ctx, row, m) }
	rep, err := readers.InspectEach(ctx, o.input, src, spec, 5, each)
	if err != nil {
		if o.isTableSource() {
			return readError(ctx, err)
		}
		return inputError(err)
	}
	rate := o.rate
	if embedded && !o.rateSet {
		rate = 0 // as the run: the embedded service has no quota
	}
	est, err := x.Estimate(ctx)
	if err != nil {
		return withCode(exitFatal, err)
	}
	fig := estimate.New(est, rate, o.burst, price)
	if err := rep.Print(s.out); err != nil {
		return err
	}
	if err := fig.Print(s.out); err != nil {
		return err
	}
	if err := o.writeDryRunSummary(fig); err != nil {
		return err
	}
	if o.report == "" {
		return nil
	}
	page := &report.EstimatePage{Title: o.input, At: time.Now().UTC(), Estimate: fig,
		Run: report.RunInfo{Input: o.input, Version: version, Reference: o.referenceText()}}
	if err := page.WriteFile(o.report); err != nil {
		return withCode(exitFatal, err)
	}
	log.Info().Str("report", o.report).Msg("estimate report written")
	return nil
}

// peekJournal is the journal the run would continue, read only (nil if
// none). A dry run does not check the outputs (stdin needs none named, for
// one): where they do not name a journal, none answers.
func (o *runOptions) peekJournal(ctx context.Context, src readers.Reader, mapper *readers.Mapper, log zerolog.Logger) (*journal.Journal, error) {
	if !o.policy.MayKeep() {
		return nil, nil
	}
	outPath, reviewPath, err := o.resolveOutputs()
	if err != nil {
		log.Debug().Err(err).Msg("no journal: the outputs are not settled")
		return nil, nil
	}
	return o.policy.Peek(o.journalPathFor(outPath, reviewPath), func() (runs.Identity, error) {
		return runIdentity(ctx, *o, src, mapper)
	})
}

// dryRunCache is --cache's namespace, read only: a cache that does not exist
// yet answers nothing and is not created; a shared one is only looked at
// (no claim taken, no wait for another runner).
func (o *runOptions) dryRunCache(ctx context.Context, embedded bool, log zerolog.Logger) (pipeline.Cache, func(), error) {
	none := func() {}
	if o.cache == "" {
		return nil, none, nil
	}
	cdb, err := openCache(ctx, o.cache, 0, true, log)
	if errors.Is(err, cache.ErrNotExist) {
		log.Info().Str("cache", o.cache).Msg("the cache does not exist yet: it answers nothing")
		return nil, none, nil
	}
	if errors.Is(err, cache.ErrCorrupt) && !errors.Is(err, cache.ErrNotCache) {
		// The run moves a damaged cache aside and starts an empty one.
		log.Warn().Err(err).Str("cache", o.cache).
			Msg("the cache is damaged: the run will move it aside and start an empty one, so it is counted as answering nothing")
		return nil, none, nil
	}
	if err != nil {
		return nil, none, err
	}
	closeCache := func() { _ = cdb.Close() }
	ns, err := cacheNamespace(*o, embedded)
	if err == nil {
		switch d := cdb.(type) {
		case *cache.DB:
			var st *cache.Store
			if st, err = d.Store(ns, o.cacheTTL); err == nil {
				return st, closeCache, nil
			}
		case *cache.PG:
			var st *cache.PGStore
			if st, err = d.Store(ns, o.cacheTTL); err == nil {
				return st.ReadOnly(), closeCache, nil
			}
		default:
			err = fmt.Errorf("--cache %s: a cache of an unknown kind", cdb.Path())
		}
		err = withCode(exitFatal, err)
	}
	closeCache()
	return nil, none, err
}

// writeDryRunSummary writes --summary, if asked for: the estimate.
func (o *runOptions) writeDryRunSummary(fig estimate.Figures) error {
	if o.summary == "" {
		return nil
	}
	sum := dryRunSummary{Input: o.input, Version: version, Reference: o.referenceText(), DryRun: true,
		At: time.Now().UTC().Truncate(time.Second), Estimate: fig}
	if err := writeSummaryJSON(o.summary, sum); err != nil {
		return withCode(exitFatal, err)
	}
	return nil
}
