// Package ratelimit paces requests: one Limiter shared by every worker, an
// x/time/rate token bucket whose limit adapts to a service quota below the
// configured rate, with a shared pause that honours Retry-After.
//
// Waiters queue in arrival order and only the head of the queue holds a
// reservation, so a change of limit or a pause re-prices one reservation and
// never releases a burst. On 429 answers the limit settles just under the
// rate at which the 429s began, holds there, then probes upwards.
package ratelimit
