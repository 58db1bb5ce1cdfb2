// Package ratelimit paces requests: one limiter shared by every worker, a
// token bucket slowed on 429 answers and honouring Retry-After.
//
// Every attempt, retries included, calls Wait. OnRateLimited halves the limit
// (down to a floor) and sets a pause that every waiter honours; OnSuccess lets
// a cut limit climb back towards the configured rate. Waiters go in the order
// they came, each at its slot; the bucket is charged when a request goes, at
// the time it goes, so a change of the limit or the pause moves only the
// slots of requests still waiting. Whatever the cuts, climbs and late
// wake-ups, no one-second window holds more than the configured rate plus
// burst requests, and at burst 1 each request goes at least 1/limit after the
// one before. Rate reports the limit in force, for progress displays and
// summaries.
package ratelimit
