// Package ratelimit paces requests: one limiter shared by every worker, a
// token bucket that adapts to a service quota below the configured rate and
// honours Retry-After.
//
// Every attempt, retries included, calls Acquire (or Wait). A 429 answer,
// reported with the request's Sent, sets a pause that every waiter honours
// and cuts the limit to just under the rate at which 429s began; the limit
// holds there, then probes slowly upwards (see Limiter). 429s of requests
// sent before the last cut do not cut again. Waiters go in the order they
// came, each at its slot; the bucket is charged when a request goes, at the
// time it goes, so a change of the limit or the pause moves only the slots
// of requests still waiting. Whatever the cuts, climbs and late wake-ups, no
// one-second window holds more than the configured rate plus burst
// requests, and at burst 1 each request goes at least 1/limit after the one
// before. Rate reports the limit in force, for progress displays and
// summaries.
package ratelimit
