package runs

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/ratelimit"
	"github.com/addrclean/addrclean/ratelimit/pgpace"
	"github.com/addrclean/addrclean/table"
)

// openPacer opens the timeline of --rate-shared: the service and key's
// row in the database of the postgres:// --cache, shared with every runner
// of the same service and key that passes --rate-shared. It is opened
// (connected and checked, creating nothing) with the cache, before the
// outputs are set up; its table is created by Prepare once no check can
// refuse the run. It is nil without RateShared.
func (j *Job) openPacer(ctx context.Context, log zerolog.Logger) (*pgpace.Pacer, error) {
	if !j.RateShared {
		return nil, nil
	}
	ns, err := j.Service.Namespace()
	if err != nil {
		return nil, err
	}
	u, err := table.ParseURL(j.Cache)
	if err != nil {
		return nil, &UsageError{fmt.Errorf("--cache: %w", err)}
	}
	p, err := pgpace.Open(ctx, u.Raw, u.Display, ns.ID, int32(min(max(j.Tuning.Workers, 1), 8)), log)
	if err != nil {
		return nil, err
	}
	log.Info().Str("pacing", u.Display).Str("namespace", ns.Label).Float64("set_rate", j.Rate).
		Msgf("--rate-shared: %g requests/s between every runner of this service and key", j.Rate)
	return p, nil
}

// limiter is the run's limiter, pacing on p's timeline as well when p is
// not nil.
func (j *Job) limiter(embedded bool, p *pgpace.Pacer) *ratelimit.Limiter {
	l := ratelimit.New(j.rate(embedded), j.Burst)
	if p != nil {
		l.Share(p)
	}
	return l
}
