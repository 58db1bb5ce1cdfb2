// Package ratelimit paces requests on golang.org/x/time/rate: one limiter
// shared by every worker, slowed on 429 answers and honouring Retry-After.
package ratelimit
