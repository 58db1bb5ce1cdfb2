package main

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/estimate"
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

// estimateRun is --dry-run over a file or a table (runs.Job.Estimate):
// the preview and the estimate on stdout, then --summary and --report.
func (o *runOptions) estimateRun(ctx context.Context, job *runs.Job, s streams, log zerolog.Logger) error {
	fig, err := job.Estimate(ctx, o.price, s.out) // the price is checked by validate
	if err != nil {
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
