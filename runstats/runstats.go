package runstats

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

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

// Stats summarises a run; it is the body of --summary.
type Stats struct {
	// RowsRead is the number of rows taken from the Source (of the run's
	// shard, with pipeline.Config.Shard).
	RowsRead int64 `json:"rows_read"`
	// Shard is pipeline.Config.Shard as "I/N"; empty for the whole input.
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
	// CacheHits counts distinct addresses answered by pipeline.Config.Cache.
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
	// Complete is true when every input row (up to pipeline.Config.Limit)
	// was written.
	Complete bool `json:"complete"`
	// Stopped says why the run stopped early: "service_unavailable" (the
	// circuit breaker), "service_unreachable" (no row was answered: see
	// pipeline.ErrServiceUnreachable), "max_errors" or "fatal"; empty otherwise.
	Stopped string `json:"stopped,omitempty"`
	// Interrupted is true when the context was cancelled before the input
	// was finished.
	Interrupted bool `json:"interrupted"`
	// Duplicates are the rows that resolved to the same address id. The
	// enriched writer finds them when it is closed, so pipeline.Run leaves this for
	// the caller (see writers.DuplicateReporter).
	Duplicates *Duplicates `json:"duplicates,omitempty"`
}

// Duplicates summarises the rows of an enriched output that resolved to the
// same address id (av_address_id): the same place, written more than once.
type Duplicates struct {
	// Groups is the number of address ids shared by two or more rows.
	Groups int64 `json:"groups"`
	// Rows is the number of rows in those groups.
	Rows int64 `json:"rows"`
	// Extra is Rows minus Groups: the rows a merge would fold away.
	Extra int64 `json:"extra"`
	// Largest is the number of rows in the largest group.
	Largest int64 `json:"largest"`
	// LargestID is the address id of the largest group (the first such
	// group in row order on a tie).
	LargestID string `json:"largest_id,omitempty"`
}

// Estimate is what a run would do with its input, counted without a call:
// the figures of --dry-run. Each is the value the run's Stats would show
// when nothing changes in between and no call fails: CallsToPay is then
// Stats.CallsMade, CacheAnswers Stats.CacheHits, JournalAnswers
// Stats.RowsResumed.
type Estimate struct {
	// Rows is the number of data rows the run reads (pipeline.Config.Limit
	// applied): those of its pipeline.Config.Shard.
	Rows int64 `json:"rows"`
	// RowsOtherShards counts the rows of the other shards, passed over as
	// the run passes them over (Limit counts them too).
	RowsOtherShards int64 `json:"rows_other_shards,omitempty"`
	// NotSent counts rows that are Error without a call (no address, no
	// country).
	NotSent int64 `json:"not_sent"`
	// DistinctRequests counts the requests left after folding case and
	// white space: the rows that lead their address in the run.
	DistinctRequests int64 `json:"distinct_requests"`
	// JournalAnswers counts the distinct requests a --resume journal
	// answers.
	JournalAnswers int64 `json:"journal_answers"`
	// CacheAnswers counts the distinct requests the cache answers, of
	// those the journal does not.
	CacheAnswers int64 `json:"cache_answers"`
	// CallsToPay is DistinctRequests less the answers of the journal and
	// the cache: one call each when none fails.
	CallsToPay int64 `json:"calls_to_pay"`
}

// Counts prints the non-zero counts of m as "key n, key n", the keys of
// order first in that order, then any others sorted; "-" when none.
func Counts(m map[string]int64, order []string) string {
	rank := func(k string) int {
		if i := slices.Index(order, k); i >= 0 {
			return i
		}
		return len(order)
	}
	keys := slices.Sorted(maps.Keys(m))
	slices.SortStableFunc(keys, func(a, b string) int { return rank(a) - rank(b) })
	var parts []string
	for _, k := range keys {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}
