package pipeline

import (
	"time"

	"github.com/addrclean/addrclean/writers"
)

// ActionError is the action of a row that could not be verified.
const ActionError = writers.ActionError

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
