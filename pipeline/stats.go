package pipeline

import (
	"time"

	"github.com/addrclean/addrclean/writers"
)

// ActionError is the action of a row that could not be verified.
const ActionError = writers.ActionError

// Kinds of Error rows, the keys of Stats.Errors.
const (
	// ErrKindInput is a row the mapper refused ("no address").
	ErrKindInput = "input"
	// ErrKindPermanent is a row the service refused (400 and the like).
	ErrKindPermanent = "permanent"
	// ErrKindTransient is a row whose retries ran out (5xx, timeouts, resets).
	ErrKindTransient = "transient"
	// ErrKindRateLimited is a row whose 429 waits passed MaxWait.
	ErrKindRateLimited = "rate_limited"
)

// Counts are the written rows per action.
type Counts struct {
	Accept  int64 `json:"Accept"`
	Suggest int64 `json:"Suggest"`
	Confirm int64 `json:"Confirm"`
	Reject  int64 `json:"Reject"`
	Error   int64 `json:"Error"`
}

// Progress is a snapshot of a run for a progress display.
type Progress struct {
	// RowsRead is the number of rows taken from the Source.
	RowsRead int64
	// RowsDone is the number of rows written, in order.
	RowsDone int64
	// RowsOtherShards counts the rows read and passed over because they
	// belong to another shard (Config.Shard).
	RowsOtherShards int64
	// Actions counts the written rows per action.
	Actions Counts
	// CallsMade counts verify attempts, retries included.
	CallsMade int64
	// CallsSaved counts rows answered by an earlier identical address.
	CallsSaved int64
	// Retries counts attempts after a transient failure.
	Retries int64
	// RateLimited counts 429 answers.
	RateLimited int64
	// RateLimit is the limiter's current limit in requests per second; 0
	// means unlimited (or no limiter).
	RateLimit float64
	// CallsPerSecond is the achieved call rate since the start.
	CallsPerSecond float64
	// Elapsed is the time since the run started.
	Elapsed time.Duration
}

// Stats summarises a run; it is the body of --summary.
type Stats struct {
	// RowsRead is the number of rows taken from the Source (of the run's
	// shard, with Config.Shard).
	RowsRead int64 `json:"rows_read"`
	// Shard is Config.Shard as "I/N"; empty for the whole input.
	Shard string `json:"shard,omitempty"`
	// RowsOtherShards counts the rows read and passed over because they
	// belong to another shard.
	RowsOtherShards int64 `json:"rows_other_shards,omitempty"`
	// RowsWritten is the number of rows written to the outputs, in order.
	RowsWritten int64 `json:"rows_written"`
	// Actions counts written rows per action (Accept, Suggest, Confirm,
	// Reject, Error, and any other action the service answered).
	Actions map[string]int64 `json:"actions"`
	// MatchLevels counts written, verified rows per information.matchLevel.
	MatchLevels map[string]int64 `json:"match_levels"`
	// Errors counts Error rows per kind (the ErrKind constants).
	Errors map[string]int64 `json:"errors"`
	// CallsMade counts verify attempts, retries included.
	CallsMade int64 `json:"calls_made"`
	// CallsSaved counts rows answered by an earlier identical address
	// within the run.
	CallsSaved int64 `json:"calls_saved"`
	// CacheHits counts distinct addresses answered by Config.Cache.
	CacheHits int64 `json:"cache_hits"`
	// Retries counts attempts after a transient failure.
	Retries int64 `json:"retries"`
	// RateLimited counts 429 answers.
	RateLimited int64 `json:"rate_limited"`
	// TokenRefreshes is left for the caller, which reads it from the api
	// client.
	TokenRefreshes int64 `json:"token_refreshes"`
	// EffectiveRate is the achieved verify calls per second.
	EffectiveRate float64 `json:"effective_rate"`
	// RateLimit is the limiter's limit at the end in requests per second
	// (lower than configured after 429s); 0 means unlimited.
	RateLimit float64 `json:"rate_limit"`
	// Elapsed is the run's wall time.
	Elapsed time.Duration `json:"-"`
	// ElapsedSeconds is Elapsed in seconds, for JSON.
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	// RowsPerSecond is RowsWritten over Elapsed.
	RowsPerSecond float64 `json:"rows_per_second"`
	// RowsResumed counts rows answered from the journal of an earlier run.
	RowsResumed int64 `json:"rows_resumed"`
	// Complete is true when every input row (up to Limit) was written.
	Complete bool `json:"complete"`
	// Stopped says why the run stopped early: "service_unavailable" (the
	// circuit breaker), "service_unreachable" (no row was answered: see
	// ErrServiceUnreachable), "max_errors" or "fatal"; empty otherwise.
	Stopped string `json:"stopped,omitempty"`
	// Interrupted is true when the context was cancelled before the input
	// was finished.
	Interrupted bool `json:"interrupted"`
	// Duplicates are the rows that resolved to the same address id. The
	// enriched writer finds them when it is closed, so Run leaves this for
	// the caller (see writers.DuplicateReporter).
	Duplicates *writers.Duplicates `json:"duplicates,omitempty"`
}
