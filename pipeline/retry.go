package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/ratelimit"
	"github.com/addrclean/addrclean/runstats"
)

// verify calls the service for one address until it answers, the row is
// given up, or the run stops. Transient failures are retried with backoff
// up to Retries; 429s are waited out without using up retries until the
// row's total wait passes MaxWait; permanent failures end the row at once;
// fatal ones stop the run.
func (r *runner) verify(addr api.Address, row int, id string) verdict {
	cfg := &r.cfg
	log := cfg.Logger
	if id != "" {
		log = log.With().Str("id", id).Logger() // a table's rows are known by their id
	}
	var (
		failures int           // transient failures so far
		waited   time.Duration // 429 wait so far
	)
	for {
		// After an interrupt no new attempt starts; only calls already in
		// flight are given the grace.
		if r.runCtx.Err() != nil {
			return verdict{skipped: true}
		}
		sent, err := cfg.Limiter.Acquire(r.runCtx)
		if err != nil {
			return verdict{skipped: true}
		}
		actx, cancel := context.WithTimeout(r.callCtx, cfg.Timeout)
		var (
			resp   *api.VerifyResponse
			answer []byte
		)
		if av, ok := cfg.Verifier.(AnswerVerifier); ok && r.stores() {
			resp, answer, err = av.VerifyAnswer(actx, addr)
		} else {
			resp, err = cfg.Verifier.Verify(actx, addr)
		}
		timedOut := errors.Is(actx.Err(), context.DeadlineExceeded)
		cancel()
		r.callsMade.Add(1)
		if err == nil && resp == nil {
			err = errors.New("service returned no answer")
		}
		if err == nil {
			return verdict{resp: resp, at: time.Now(), answer: answer}
		}
		if r.callCtx.Err() != nil {
			return verdict{skipped: true} // cancelled in flight, not the row's fault
		}
		kind := api.Classify(err)
		if timedOut {
			kind = api.KindTransient
		}
		switch kind {
		case api.KindRateLimited:
			r.rateLimited.Add(1)
			ra := retryAfter(err)
			before := cfg.Limiter.Rate()
			sent.RateLimited(ra) // a 429 of a request sent before the last cut does not cut again
			if after := cfg.Limiter.Rate(); after < before {
				log.Info().Int("row", row).Float64("rate", after).Dur("retry_after", ra).
					Msg("the service is rate limiting: slowing down")
			}
			if ra <= 0 {
				ra = ratelimit.DefaultPause
			}
			if ra > cfg.MaxWait-waited {
				return verdict{kind: runstats.ErrKindRateLimited,
					reason: fmt.Sprintf("rate limited for longer than the maximum wait (%s)", cfg.MaxWait)}
			}
			waited += ra
			log.Debug().Int("row", row).Dur("retry_after", ra).Msg("rate limited; waiting")
			if cfg.Limiter == nil {
				// A limiter would hold every worker back itself.
				if sleep(r.runCtx, ra) != nil {
					return verdict{skipped: true}
				}
			}
		case api.KindPermanent:
			return verdict{kind: runstats.ErrKindPermanent, reason: reason(err)}
		case api.KindFatal:
			r.stop(fmt.Errorf("pipeline: row %d: %w", row, err))
			return verdict{skipped: true}
		default: // transient, and anything unknown
			why := reason(err)
			if timedOut {
				why = "timed out after " + cfg.Timeout.String()
			}
			if failures >= cfg.Retries {
				return verdict{kind: runstats.ErrKindTransient,
					reason: reasonText(fmt.Sprintf("gave up after %s: %s", attempts(failures+1), why))}
			}
			d := max(cfg.backoff(failures), retryAfter(err)) // a 503 may say when to come back
			failures++
			r.retries.Add(1)
			log.Debug().Int("row", row).Int("attempt", failures).Dur("backoff", d).Str("reason", why).Msg("retrying")
			if sleep(r.runCtx, d) != nil {
				return verdict{skipped: true}
			}
		}
	}
}

func retryAfter(err error) time.Duration {
	if rl, ok := errors.AsType[*api.RateLimitedError](err); ok {
		return rl.RetryAfter
	}
	if se, ok := errors.AsType[*api.StatusError](err); ok {
		return se.RetryAfter
	}
	return 0
}

// maxReason bounds av_error: it is read by people in a spreadsheet cell.
const maxReason = 300

// reason turns an error into a short reason for av_error. A service refusal
// reads "service answered 400: <message>". URLs are never quoted from
// transport errors, since a GET request's URL carries the token.
func reason(err error) string {
	if se, ok := errors.AsType[*api.StatusError](err); ok {
		msg := cmp.Or(se.Message, http.StatusText(se.StatusCode))
		s := "service answered " + strconv.Itoa(se.StatusCode)
		if msg != "" {
			s += ": " + msg
		}
		return reasonText(s)
	}
	return reasonText(errorText(err))
}

// errorText is err's message with any *url.Error reduced to its operation and
// cause, so a request URL never reaches a message.
func errorText(err error) string {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err.Error()
	}
	full, inner := err.Error(), ue.Error()
	safe := ue.Op + ": " + errorText(ue.Err)
	if i := strings.Index(full, inner); i >= 0 {
		return full[:i] + safe + full[i+len(inner):]
	}
	return safe
}

// reasonText tidies a reason: one line, no "api: " prefix, bounded length.
func reasonText(s string) string {
	s = strings.TrimPrefix(strings.TrimSpace(s), "api: ")
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "unknown error"
	}
	if len(s) > maxReason {
		cut := maxReason
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func attempts(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return strconv.Itoa(n) + " attempts"
}
