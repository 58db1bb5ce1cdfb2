package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/schollz/progressbar/v3"

	"github.com/addrclean/addrclean/pipeline"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/runstats"
)

// Writer is stderr while a progress bar may be drawn on it: a log line
// first clears the bar's line, so that it is not printed onto the bar, and
// the bar is drawn again below it at its next update. Bar updates take the
// same lock (Bar.Update), so neither cuts into the other.
type Writer struct {
	mu    sync.Mutex
	w     io.Writer
	clear func() // clears the bar's line; nil while no bar shows
}

// NewWriter is w shared by log lines and a bar.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

func (b *Writer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.clear != nil {
		b.clear()
	}
	return b.w.Write(p)
}

// logEvery is how often a run that is not on a terminal (cron) logs
// where it is.
const logEvery = 10 * time.Second

// Bar shows a run's progress: a bar on a terminal, a log line every
// logEvery otherwise. Its methods are called from the pipeline's one
// progress goroutine.
type Bar struct {
	bar   *progressbar.ProgressBar
	src   readers.Reader
	log   zerolog.Logger
	bytes bool
	// out is stderr as the logger writes it: the bar is drawn on out.w.
	out *Writer

	// Without a bar, a ticker logs the latest snapshot, so that a run whose
	// first rows are stuck (a slow or failing service) still says where it is.
	mu    sync.Mutex
	last  pipeline.Progress
	start time.Time
	stop  chan struct{}
	done  chan struct{}
}

// New draws a bar below the log lines of out unless disabled
// (--no-progress, or stderr is not a terminal): then it logs instead.
func New(out *Writer, src readers.Reader, log zerolog.Logger, disabled bool) *Bar {
	p := &Bar{src: src, log: log, start: time.Now(), out: out}
	if disabled {
		p.stop, p.done = make(chan struct{}), make(chan struct{})
		go p.logEvery(logEvery)
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

func (p *Bar) logEvery(d time.Duration) {
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

// Update shows the snapshot s: on the bar at once, in the next log line
// without one.
func (p *Bar) Update(s pipeline.Progress) {
	if p.bar == nil {
		p.mu.Lock()
		p.last = s
		p.mu.Unlock()
		return
	}
	p.out.mu.Lock()
	defer p.out.mu.Unlock()
	p.bar.Describe(fmt.Sprintf("%d rows %.0f/s rate %s A%d S%d C%d R%d E%d", s.RowsDone, rowsPerSecond(s), runstats.RateText(s.RateLimit),
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

// Finish clears the bar, or stops the log ticker, before the summary.
func (p *Bar) Finish() {
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
