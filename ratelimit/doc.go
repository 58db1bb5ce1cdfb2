// Package ratelimit paces requests: one limiter shared by every worker, an
// x/time/rate token bucket whose limit adapts to a service quota below the
// configured rate, and a shared pause that honours Retry-After.
//
// Every attempt, retries included, calls Acquire; a 429 answer, reported
// with the request's Sent, pauses every waiter and cuts the limit to just
// under the rate at which 429s began; the limit holds there, then probes
// slowly upwards (see Limiter). No one-second window holds more than the
// configured rate plus burst requests. Rate reports the limit in force.
package ratelimit
