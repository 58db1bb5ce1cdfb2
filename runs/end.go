package runs

import (
	"context"
	"errors"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/journal"
	"github.com/addrclean/addrclean/pipeline"
	"github.com/addrclean/addrclean/writers"
)

// Run is a run's journal from Open to the run's end. A run that keeps no
// journal has a Run too, so that callers need not ask.
type Run struct {
	j    *journal.Journal
	keep bool
	log  zerolog.Logger
}

// Journal is the journal for pipeline.Config.Journal: nil (an untyped nil,
// which the pipeline tests for) when the run keeps none.
func (r *Run) Journal() pipeline.Journal {
	if r.j == nil {
		return nil
	}
	return r.j
}

// Abandon leaves the journal of a run that stopped before it ran, and is
// meant to be deferred: a journal holding no rows is removed, so that a
// refused run leaves none behind. After Settle it does nothing.
func (r *Run) Abandon() { r.finish(pipeline.Stats{}, false) }

// End is how a run ended.
type End int

const (
	// Finished: every row was written, some perhaps as Error.
	Finished End = iota
	// Interrupted by a signal: the outputs hold the rows finished before it.
	Interrupted
	// Unavailable: the circuit breaker stopped the run; the outputs hold
	// the rows written before.
	Unavailable
	// TooManyErrors: --max-errors stopped the run; the outputs hold the rows
	// written before.
	TooManyErrors
	// Unreachable: the service was never reached; the outputs were
	// aborted, since they would hold nothing but Error rows and must not
	// replace the last run's.
	Unreachable
	// Failed: a fatal error; the outputs were aborted.
	Failed
	// OutputsFailed: an output could not be finished (Outcome.Err says
	// why); the others were aborted.
	OutputsFailed
)

// Outcome is what Settle made of a run.
type Outcome struct {
	End End
	// Resumable is true when a journal to resume from is left.
	Resumable bool
	// Err is the error that finishing an output returned.
	Err error
}

// Settle ends a run that pipeline.Run returned from with st and runErr: it
// finishes or aborts the outputs, and keeps or removes the journal. A run
// that finished removes its journal (unless --keep-journal, when it is
// marked complete); a run that stopped keeps it for --resume unless it
// holds nothing; a fatal error never drops it, even after the last row,
// since the outputs were aborted and the journal is what is paid for. It
// sets st.Duplicates from the outputs.
func (r *Run) Settle(outs []writers.Writer, st *pipeline.Stats, runErr error) Outcome {
	if r.j != nil && r.j.Changed() > 0 {
		r.log.Warn().Int64("rows", r.j.Changed()).Msg("the journal held other addresses for some rows; they were verified again")
	}
	end := classify(runErr, st.Interrupted)
	if end == Unreachable || end == Failed {
		for _, w := range outs {
			_ = w.Abort()
		}
		return Outcome{End: end, Resumable: r.finish(pipeline.Stats{}, false)}
	}
	for i, w := range outs {
		if err := w.Close(); err != nil {
			// Leave no temporary file behind for the outputs not finished
			// yet, and keep the journal: the outputs are not there.
			for _, rest := range outs[i+1:] {
				_ = rest.Abort()
			}
			return Outcome{End: OutputsFailed, Resumable: r.finish(pipeline.Stats{}, r.keep), Err: err}
		}
	}
	for _, w := range outs {
		if dr, ok := w.(writers.DuplicateReporter); ok {
			d := dr.Duplicates()
			st.Duplicates = &d
			break
		}
	}
	return Outcome{End: end, Resumable: r.finish(*st, r.keep)}
}

func classify(err error, interrupted bool) End {
	unreachable := errors.Is(err, pipeline.ErrServiceUnreachable)
	switch {
	case interrupted || errors.Is(err, context.Canceled):
		return Interrupted
	case errors.Is(err, pipeline.ErrServiceUnavailable) && !unreachable:
		return Unavailable
	case errors.Is(err, pipeline.ErrTooManyErrors):
		return TooManyErrors
	case unreachable:
		return Unreachable
	case err != nil:
		return Failed
	}
	return Finished
}

// finish keeps or removes the journal once, and reports whether a journal
// to resume from is left.
func (r *Run) finish(st pipeline.Stats, keep bool) (kept bool) {
	j := r.j
	if j == nil {
		return false
	}
	r.j = nil
	path := j.Path()
	var err error
	switch {
	case st.Complete && keep:
		if err = j.Complete(st.RowsWritten); err == nil {
			err = j.Close()
		}
		if err == nil {
			r.log.Info().Str("journal", path).Msg("--keep-journal: the journal of the finished run is kept")
		}
	case st.Complete || (j.Info().Rows == 0 && !j.Failed()):
		err = j.Remove()
	default:
		// A journal whose last write failed (a full disk) is still good up
		// to that record: a resume drops the torn rest.
		if err := j.Close(); err != nil {
			r.log.Warn().Str("journal", path).Err(err).Msg("the journal was not closed cleanly; a resume drops any torn last record")
		}
		r.log.Info().Str("journal", path).Int64("rows", j.Info().Rows).
			Msg("the journal keeps the finished rows: run the same command with --resume to continue")
		return true
	}
	if err != nil {
		r.log.Error().Err(err).Msg("finishing the journal")
	}
	return false
}
