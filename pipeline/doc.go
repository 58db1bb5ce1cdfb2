// Package pipeline is the run: a bounded worker pool that verifies rows under
// the rate limit, retries, deduplicates, keeps input order, and collects
// progress and statistics. It does not parse flags.
//
// Run reads rows from a readers.Reader, maps each to an address, and hands
// it to one of Config.Workers workers (goroutines that last the run, taking
// rows from an unbuffered channel). Every row
// gets a capacity-1 result channel queued, in input order, on a channel of
// Config.Window capacity; the writer drains that queue in order, so a row
// stuck in retries holds the reader back and memory is bounded by the
// window, never by the input.
//
// Each attempt waits on the shared ratelimit.Limiter. Failures are sorted by
// api.Classify: transient ones are retried with exponential backoff and full
// jitter; 429 answers slow the limiter, are waited out and do not use up
// retries; permanent ones make the row an Error row at once; fatal ones
// (a refused key) stop the whole run. Rows with the same address, after
// normalising case and white space, are verified once per run. With
// Config.Cache, each distinct address is first looked up across runs (a
// local cache by a stage before the workers, many addresses at a time when
// it is a BatchCache; a SharedCache by the workers), and every successful
// answer is stored, encoded once for the cache, the journal and the dedup
// spill; a Cache error stops the run rather
// than being read as a miss. With Config.Journal, rows a journal holds are
// not sent again (resume) and every finished row is recorded.
//
// A circuit breaker stops the run with ErrServiceUnavailable when rows keep
// failing after their retries (DefaultBreakerRows in a row, or more than
// DefaultBreakerShare of the last DefaultBreakerWindow), rather than writing
// the rest of the input as Error rows.
//
// Cancelling the context stops intake; calls in flight get Config.Timeout
// to finish, and the rows done up to the first unfinished one are written.
package pipeline
