// Package ratelimit paces requests on golang.org/x/time/rate: one limiter
// shared by every worker, slowed on 429 answers and honouring Retry-After.
//
// Every attempt, retries included, calls Wait. OnRateLimited halves the limit
// (down to a floor) and sets a pause that every waiter honours, waking the
// ones already asleep because rate.Limiter.SetLimit does not; OnSuccess lets
// a cut limit climb back towards the configured rate. Rate reports the limit
// in force, for progress displays and summaries.
package ratelimit
