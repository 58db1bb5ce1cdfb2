package pipeline

import (
	"cmp"
	"context"
	"math/rand/v2"
	"time"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/journal"
	"github.com/addrclean/addrclean/ratelimit"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/record"
	"github.com/addrclean/addrclean/writers"
)

// Defaults applied by Run to zero fields of Config, and the settings of the
// backoff, the breaker's window and the error share, which are fixed.
const (
	// DefaultWorkers is the number of concurrent verify calls.
	DefaultWorkers = 8
	// DefaultRetries is how many times a transient failure is retried.
	DefaultRetries = 3
	// DefaultTimeout bounds one verify attempt, and the grace given to calls
	// in flight when the run is interrupted.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxWait is the total time one row may spend waiting out 429s.
	DefaultMaxWait = 10 * time.Minute
	// DefaultBackoffBase is the first retry's backoff ceiling.
	DefaultBackoffBase = 500 * time.Millisecond
	// DefaultBackoffMax caps the backoff ceiling of later retries.
	DefaultBackoffMax = 30 * time.Second
	// DefaultWindow is the reorder window: rows read but not yet written.
	// It bounds memory (a row and its answer are a few kilobytes, so about
	// 1 MB) and lets the other workers run on for about 12 seconds at 20
	// requests per second while one row sits in a backoff, before the
	// reader is held back. It is raised to 4×Workers when that is larger.
	DefaultWindow = 256
	// DefaultDedupCache is how many distinct verdicts are kept in memory
	// for reuse by later duplicate rows; the others wait on disk. Each
	// holds its answer decoded and as JSON (some 3.5 KB): a thousand of
	// them were a third of a live run's heap, and a verdict read back from
	// the spill costs one read and one decode, not a call.
	DefaultDedupCache = 256
	// DefaultProgressInterval is how often Progress is called at most.
	DefaultProgressInterval = 200 * time.Millisecond
	// DefaultBreakerRows is how many rows in a row may fail with the
	// service's fault (retries spent, or 429s past MaxWait) before the run
	// stops with ErrServiceUnavailable.
	DefaultBreakerRows = 20
	// DefaultBreakerWindow and DefaultBreakerShare: the run also stops when
	// more than that share of the last that many verified rows failed.
	DefaultBreakerWindow = 200
	DefaultBreakerShare  = 0.5
	// DefaultMinRowsForShare is how many rows must be written before
	// MaxErrorShare is applied mid-run (the end of the run checks it too).
	DefaultMinRowsForShare = 100
)

// ReorderWindow is the reorder window a run uses for window and workers (the
// Config fields): rows finish at most this far out of input order.
func ReorderWindow(window, workers int) int {
	if workers < 1 {
		workers = DefaultWorkers
	}
	if window < 1 {
		window = DefaultWindow
	}
	return max(window, 4*workers)
}

// Mapper turns an input row into the address to verify.
type Mapper interface {
	// Map maps one row; Mapped.Err marks a row that is not sent.
	Map(record.Row) readers.Mapped
}

// Verifier verifies one address; *api.Client satisfies it.
type Verifier interface {
	// Verify returns the service's answer, or an error that api.Classify
	// sorts into a kind.
	Verify(ctx context.Context, a api.Address) (*api.VerifyResponse, error)
}

// AnswerVerifier is a Verifier that also returns the answer's JSON as the
// service sent it, when that decodes to the answer unchanged (nil
// otherwise); *api.Client satisfies it. The run then stores those bytes
// (journal, cache, dedup spill) instead of encoding the answer again.
type AnswerVerifier interface {
	Verifier
	VerifyAnswer(ctx context.Context, a api.Address) (*api.VerifyResponse, []byte, error)
}

// Cache keeps answers across runs (--cache); cache.Store satisfies it. Keys
// are opaque strings that may hold any bytes (hash them for storage); equal
// keys mean the same address after normalising case and white space.
// Implementations must be safe for concurrent use and decide expiry
// themselves. An error from either method stops the run (the cache is
// broken, and treating it as a miss would pay again for stored answers).
type Cache interface {
	// Get returns the answer stored for key, if any; a missing or expired
	// answer is (nil, false, nil).
	Get(ctx context.Context, key string) (*api.VerifyResponse, bool, error)
	// Put stores the answer for key; it returns once the answer is kept.
	Put(ctx context.Context, key string, resp *api.VerifyResponse) error
}

// TimedCache is a Cache that also says when a stored answer was obtained;
// rows it answers carry that time (writers.Result.VerifiedAt).
type TimedCache interface {
	Cache
	// GetAt is Get, with the time the answer was stored.
	GetAt(ctx context.Context, key string) (*api.VerifyResponse, time.Time, bool, error)
}

// EncodedCache is a TimedCache that gives and takes answers with their JSON
// (what api.DecodeVerifyResponse decodes to the answer: the service's body,
// or api.AppendVerifyResponse's encoding); cache.Store and cache.PGStore
// satisfy it. A run
// then encodes each answer at most once for the cache, the journal and the
// dedup's spill, and not at all for one the cache gives.
type EncodedCache interface {
	TimedCache
	// GetEncoded is GetAt, with the answer's JSON, or nil when the cache
	// does not have it at hand (the caller then encodes the answer).
	GetEncoded(ctx context.Context, key string) (resp *api.VerifyResponse, answer []byte, at time.Time, ok bool, err error)
	// PutEncoded is Put of the answer's JSON; it keeps answer.
	PutEncoded(ctx context.Context, key string, answer []byte) error
}

// SharedCache is a Cache shared by concurrent runners (cache.PGStore):
// they pay once for a request between them. Its Get may wait while another
// runner pays for the key, and returns that runner's answer; a miss is a
// claim on the key, which the caller ends with Put (it has an answer) or
// Release (none: the call failed or was refused, or the run stopped), so
// that a runner waiting for the key takes it up at once rather than after
// the claim's lease. Run does both.
type SharedCache interface {
	Cache
	// Release ends the caller's claim on key without an answer; a key not
	// claimed is left alone.
	Release(ctx context.Context, key string) error
}

// Journal keeps finished rows for a later run to resume from;
// *journal.Journal satisfies it.
type Journal interface {
	// Lookup returns the journalled result of row if there is one for the
	// same address key. It is called from one goroutine, for rows in
	// increasing order.
	Lookup(row int, key uint64) (journal.Entry, bool, error)
	// Record keeps a finished row; it is called concurrently, as rows
	// finish.
	Record(journal.Entry) error
}

// Config is everything one run needs. Zero numeric fields take the defaults
// above; Source, Mapper and Verifier are required.
type Config struct {
	// Source streams the input rows. Run reads it but does not close it.
	Source readers.Reader
	// Mapper maps each row to an address.
	Mapper Mapper
	// Verifier is called for every distinct address. It must not pace
	// itself: Run waits on Limiter before every attempt, outside the
	// attempt's timeout.
	Verifier Verifier
	// Limiter paces every attempt, retries included; nil means no pacing.
	Limiter *ratelimit.Limiter
	// Cache, when set, is asked before a call and given every successful
	// answer (refusals and failures are not stored); rows answered from it
	// are marked Cached and FromCache, and the distinct addresses it
	// answered are counted in runstats.Stats.CacheHits. A Cache error stops the run.
	// A Cache decides which stored answers it cannot trust: cache.Store
	// returns a miss for an entry that fails its checksum, so that address
	// is verified (and paid for) again, and counts it.
	Cache Cache
	// Journal, when set, answers the rows a previous run finished (they are
	// counted in runstats.Stats.RowsResumed and not sent), and records every row
	// this run finishes with an answer or a refusal. Rows that failed
	// (retries spent) are not recorded, so that a resumed run tries them
	// again. A Journal error stops the run.
	Journal Journal
	// Outputs receive every result in input order. Run writes but does not
	// close them: the caller closes (or aborts) them after Run returns.
	Outputs []writers.Writer

	// Limit, when positive, stops the run after that many data rows, as if
	// the input ended there (--limit). Rows of other shards count: each
	// shard of a limited input takes its part of the same first rows.
	Limit int64
	// Shard, when not Whole, restricts the run to one part of the input
	// (--shard I/N): the rows of the other parts are read, counted in
	// runstats.Stats.RowsOtherShards and passed over, written nowhere and never
	// sent. Row numbers stay those of the whole input.
	Shard Shard

	// Workers is the number of concurrent calls (default 8).
	Workers int
	// Retries is how many times a transient failure is retried (default 3);
	// negative means no retries.
	Retries int
	// Timeout bounds each attempt and the grace for calls in flight after
	// an interrupt (default 30s).
	Timeout time.Duration
	// MaxWait is the total 429 wait one row may spend before it becomes an
	// Error row (default 10m).
	MaxWait time.Duration
	// Window is the reorder window (default 256, at least 4×Workers).
	Window int
	// DedupCache is how many verdicts are kept in memory for later
	// duplicates (default 256, and at least the window and 8); older ones go to a
	// temporary file in SpillDir, so every distinct address is verified once
	// per run, at any distance. Negative keeps none (concurrent duplicates
	// still share a call, and which rows do then depends on timing).
	DedupCache int
	// SpillDir is where the verdicts the memory does not hold are kept
	// during the run (default: the system's temporary directory). The file
	// is removed from the directory as soon as it is open.
	SpillDir string

	// BreakerRows stops the run with ErrServiceUnavailable after that many
	// rows in a row failed with the service's fault (default 20; negative:
	// never). BreakerShare does the same when more than that share of the
	// last DefaultBreakerWindow verified rows failed (default 0.5;
	// negative: never). Intake stops, calls in flight finish within
	// Timeout, and the rows not reached are not written: they are not
	// Error rows, a resumed run verifies them.
	BreakerRows  int
	BreakerShare float64
	// With LimitErrors, the run stops with ErrTooManyErrors once more than
	// MaxErrors rows are Error (0: at the first). MaxErrorShare, when positive,
	// does the same once more than that share (0 to 1) of the rows written
	// are Error, checked after DefaultMinRowsForShare rows and at the end.
	LimitErrors   bool
	MaxErrors     int64
	MaxErrorShare float64

	// Logger receives row-level problems (once per row, with its number)
	// and debug lines about retries. The zero Logger logs nothing.
	Logger zerolog.Logger
	// Progress, when set, is called from a single goroutine at most every
	// ProgressInterval while rows are written, and once at the end.
	Progress func(Progress)
	// ProgressInterval throttles Progress (default 200ms); negative calls it
	// after every row.
	ProgressInterval time.Duration

	// Jitter returns a random duration in [0, max]; tests inject a fixed one.
	Jitter func(max time.Duration) time.Duration
}

func (c Config) withDefaults() Config {
	if c.Workers < 1 {
		c.Workers = DefaultWorkers
	}
	switch {
	case c.Retries == 0:
		c.Retries = DefaultRetries
	case c.Retries < 0:
		c.Retries = 0
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxWait <= 0 {
		c.MaxWait = DefaultMaxWait
	}
	c.Window = ReorderWindow(c.Window, c.Workers)
	// Negative values of these mean "none" or "never": only zero defaults.
	c.BreakerRows = cmp.Or(c.BreakerRows, DefaultBreakerRows)
	c.BreakerShare = cmp.Or(c.BreakerShare, DefaultBreakerShare)
	c.DedupCache = cmp.Or(c.DedupCache, DefaultDedupCache)
	c.ProgressInterval = cmp.Or(c.ProgressInterval, DefaultProgressInterval)
	if c.Jitter == nil {
		c.Jitter = jitter
	}
	return c
}

// sleep waits d or until ctx is done: backoffs, and 429 waits when there is
// no Limiter (a Limiter holds every worker back until Retry-After itself).
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func jitter(max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(max) + 1))
}

// backoff returns the wait before retry n (0-based): full jitter over an
// exponentially growing ceiling, min(DefaultBackoffMax,
// DefaultBackoffBase·2ⁿ).
func (c *Config) backoff(n int) time.Duration {
	ceil := DefaultBackoffBase
	for i := 0; i < n && ceil < DefaultBackoffMax; i++ {
		ceil *= 2
	}
	return c.Jitter(min(ceil, DefaultBackoffMax))
}
