package main

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/ratelimit"
	"github.com/addrclean/addrclean/ratelimit/pgpace"
	"github.com/addrclean/addrclean/table"
)

// rateSharedError refuses --rate-shared without what it needs: the
// database of a postgres:// --cache, where the runners meet, and a rate
// to share.
func (o *runOptions) rateSharedError() error {
	switch {
	case !o.rateShared:
	case !isPostgresURL(o.cache):
		return usageErrorf("--rate-shared paces the runners together through the database of a shared cache: give --cache postgres://... (the same for every runner)")
	case o.rate == 0 || (o.baseURL == "" && !o.rateSet):
		return usageErrorf("--rate-shared shares --rate between the runners: give --rate, the requests per second of the whole set")
	}
	return nil
}

// openPacer opens the timeline of --rate-shared: the service and key's
// row in the database of the postgres:// --cache, shared with every runner
// of the same service and key that passes --rate-shared. It is opened
// with the cache, before the outputs are set up or a call is paid, and is
// nil without --rate-shared.
func (o *runOptions) openPacer(ctx context.Context, log zerolog.Logger) (*pgpace.Pacer, error) {
	if !o.rateShared {
		return nil, nil
	}
	// The service is the embedded one without --base-url (connect).
	ns, err := cacheNamespace(*o, o.baseURL == "")
	if err != nil {
		return nil, err
	}
	u, err := table.ParseURL(o.cache)
	if err != nil {
		return nil, usageErrorf("--cache: %v", err)
	}
	p, err := pgpace.Open(ctx, u.Raw, u.Display, ns.ID, int32(min(o.workers, 8)), log)
	if err != nil {
		return nil, withCode(exitFatal, err)
	}
	log.Info().Str("pacing", u.Display).Str("namespace", ns.Label).Float64("set_rate", o.rate).
		Msgf("--rate-shared: %g requests/s between every runner of this service and key", o.rate)
	return p, nil
}

// newLimiter is the run's limiter at rate (0: unlimited), pacing on p's
// timeline as well when p is not nil.
func newLimiter(rate float64, burst int, p *pgpace.Pacer) *ratelimit.Limiter {
	l := ratelimit.New(rate, burst)
	if p != nil {
		l.Share(p)
	}
	return l
}
