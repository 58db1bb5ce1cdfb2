package writers

import (
	"context"
	"time"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/record"
)

// Result is one input row with its verdict, handed to the writers in input
// order.
type Result struct {
	// Row is the 1-based data record number in the input.
	Row int
	// ID is the row's id as its source knows it (record.Row.ID), for log
	// lines; "" when rows are known by number only.
	ID string
	// Cells are the input cells exactly as read.
	Cells []string
	// Types tells which input cells of a workbook were numbers or dates
	// (record.Row.Types); an XLSX output writes those as numbers in the
	// input's number format. Nil for text-only rows and CSV inputs; other
	// formats ignore it.
	Types []record.CellType
	// InputLabel is the row's own mapped address values joined with ", ".
	InputLabel string
	// Response is the verify answer; nil when the row could not be verified.
	Response *api.VerifyResponse
	// Err is the reason a row could not be verified (av_error); when it is
	// non-empty the row's action is Error.
	Err string
	// Cached is true when the verdict came from a cache instead of a call:
	// an earlier identical address of the same run, or the persistent cache.
	Cached bool
	// FromCache is true when the verdict came from the persistent cache
	// (--cache), for this row or an identical one earlier in the run; it is
	// the av_cached column of Options.MarkCached.
	FromCache bool
	// VerifiedAt is when the service gave the verdict: the time of the
	// call, or, for an answer from the persistent cache, the time it was
	// stored; a duplicate answered from the dedup's spill keeps its
	// leader's. Zero when unknown (no answer, or one replayed from a
	// journal); table outputs then use the run's time.
	VerifiedAt time.Time
}

// Writer writes results to one output.
type Writer interface {
	// Write appends one result. Results arrive in input order.
	Write(ctx context.Context, r Result) error
	// Close completes the output and moves it into place under its final name.
	Close() error
	// Abort discards the output, leaving nothing under the final name. It is
	// safe to call after Close (it then does nothing).
	Abort() error
}
