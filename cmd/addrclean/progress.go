package main

import (
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/schollz/progressbar/v3"

	"github.com/addrclean/addrclean/pipeline"
	"github.com/addrclean/addrclean/readers"
)

// progressLogEvery is how often a run that is not on a terminal (cron) logs
// where it is.
const progressLogEvery = 10 * time.Second

// progress shows a run's progress: a bar on a terminal, a log line every
// progressLogEvery otherwise. Its methods are called from the pipeline's one
// progress goroutine.
type progress struct {
	bar   *progressbar.ProgressBar
	src   readers.Reader
	log   zerolog.Logger
	bytes bool
	// out is stderr as the logger writes it: the bar is drawn on out.w.
	out *barWriter

	// Without a bar, a ticker logs the latest snapshot, so that a run whose
	// first rows are stuck (a slow or failing service) still says where it is.
	mu    sync.Mutex
	last  pipeline.Progress
	start time.Time
	stop  chan struct{}
	done  chan struct{}
}

// newProgress draws a bar below the log lines of out unless disabled
// (--no-progress, or stderr is not a terminal).
func newProgress(out *barWriter, src readers.Reader, log zerolog.Logger, disabled bool) *progress {
	p := &progress{src: src, log: log, start: time.Now(), out: out}
	if disabled {
		p.stop, p.done = make(chan struct{}), make(chan struct{})
		go p.logEvery(progressLogEvery)
		return p
	}
	total := int64(-1)
	if pr, ok := src.(readers.ProgressReporter); ok {
		_, total = pr.Progress()
		p.bytes = total > 0
	} else if rc, ok := src.(readers.RowCounter); ok {
		total = rc.RowCount()
	}
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(out.w),
		progressbar.OptionThrottle(200 * time.Millisecond),
		progressbar.OptionSetWidth(24),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionClearOnFinish(),
	}
	if p.bytes {
		opts = append(opts, progressbar.OptionShowBytes(true))
	} else {
		opts = append(opts, progressbar.OptionSetItsString("rows"), progressbar.OptionShowIts(), progressbar.OptionShowCount())
	}
	p.bar = progressbar.NewOptions64(total, opts...)
	out.mu.Lock()
	out.clear = func() { _ = p.bar.Clear() }
	out.mu.Unlock()
	return p
}

func (p *progress) logEvery(d time.Duration) {
	defer close(p.done)
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			s := p.last
			p.mu.Unlock()
			s.Elapsed = time.Since(p.start)
			// Rates are numbers, named as in the summary: rate_limit 0 is
			// unlimited.
			p.log.Info().Int64("rows", s.RowsDone).Float64("rows_per_s", rowsPerSecond(s)).
				Interface("actions", s.Actions).Int64("calls", s.CallsMade).Int64("calls_saved", s.CallsSaved).
				Int64("retries", s.Retries).Int64("rate_limited", s.RateLimited).
				Float64("effective_rate", s.CallsPerSecond).Float64("rate_limit", s.RateLimit).
				Msg("progress")
		}
	}
}

func (p *progress) update(s pipeline.Progress) {
	if p.bar == nil {
		p.mu.Lock()
		p.last = s
		p.mu.Unlock()
		return
	}
	p.out.mu.Lock()
	defer p.out.mu.Unlock()
	p.bar.Describe(fmt.Sprintf("%d rows %.0f/s rate %s A%d S%d C%d R%d E%d", s.RowsDone, rowsPerSecond(s), rateString(s.RateLimit),
		s.Actions.Accept, s.Actions.Suggest, s.Actions.Confirm, s.Actions.Reject, s.Actions.Error))
	if p.bytes {
		done, _ := p.src.(readers.ProgressReporter).Progress()
		_ = p.bar.Set64(writtenBytes(done, s))
	} else {
		_ = p.bar.Set64(rowsThrough(s))
	}
}

// rowsThrough is how far into the input the rows written reach, in rows:
// a shard's bar counts against the whole table's rows, so the rows of the
// other shards passed over count too, or it would end at 1/N.
func rowsThrough(s pipeline.Progress) int64 { return s.RowsDone + s.RowsOtherShards }

// writtenBytes estimates how far into the input the rows written reach:
// the reader is ahead of the writer by the rows in flight (and its read
// buffer), and a bar following it would show a percent and ETA of rows
// read, not done.
func writtenBytes(read int64, s pipeline.Progress) int64 {
	if s.RowsRead <= 0 || s.RowsDone >= s.RowsRead {
		if s.RowsDone == 0 {
			return 0
		}
		return read
	}
	return int64(float64(read) * float64(s.RowsDone) / float64(s.RowsRead))
}

func (p *progress) finish() {
	if p.bar != nil {
		p.out.mu.Lock()
		defer p.out.mu.Unlock()
		p.out.clear = nil
		_ = p.bar.Finish()
		return
	}
	close(p.stop)
	<-p.done
}

func rowsPerSecond(s pipeline.Progress) float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.RowsDone) / s.Elapsed.Seconds()
}

func rateString(r float64) string {
	if r <= 0 {
		return "unlimited"
	}
	return fmt.Sprintf("%.3g/s", r)
}
