package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/journal"
	"github.com/addrclean/addrclean/runstats"
	"github.com/addrclean/addrclean/writers"
)

// outcome is what a row's slot receives: the result to write, or skipped
// when the row did not finish because the run stopped.
type outcome struct {
	res     writers.Result
	kind    string // runstats.ErrKind* of an Error row
	skipped bool
}

// slot carries one row's outcome to the writer; capacity 1, filled once.
type slot chan outcome

// runner is the state of one Run.
type runner struct {
	cfg Config

	runCtx    context.Context // intake and waits; cancelled to stop the run
	cancelRun context.CancelCauseFunc
	callCtx   context.Context // calls in flight; outlives runCtx by the grace
	cancelCal context.CancelFunc

	dedup   *dedup
	breaker *breaker
	start   time.Time

	rowsRead    atomic.Int64
	otherShards atomic.Int64 // rows of other shards, passed over
	callsMade   atomic.Int64
	callsSaved  atomic.Int64
	cacheHits   atomic.Int64
	retries     atomic.Int64
	rateLimited atomic.Int64
	resumed     atomic.Int64

	followers sync.WaitGroup // rows waiting for their address's flight

	stopOnce sync.Once
	stopErr  error // the fatal cause, set once before runCtx is cancelled
}

// Run verifies every row of cfg.Source and writes the results to every
// output in input order. It returns when the input is done, or the run
// stopped: on a fatal verifier or writer error it stops at once and returns
// an error wrapping the cause; when ctx is cancelled it stops reading, gives
// calls in flight up to cfg.Timeout to finish, writes the finished rows up to
// the first unfinished one, and returns an error wrapping ctx's error with
// runstats.Stats.Interrupted set. A reader error stops intake, the rows read
// before it are finished and written, and the error is returned wrapped. Rows
// that could not be verified are not errors of Run: they are written as Error
// rows.
// Run neither closes the source nor the outputs.
func Run(ctx context.Context, cfg Config) (runstats.Stats, error) {
	switch {
	case cfg.Source == nil:
		return runstats.Stats{}, errors.New("pipeline: no source")
	case cfg.Mapper == nil:
		return runstats.Stats{}, errors.New("pipeline: no mapper")
	case cfg.Verifier == nil:
		return runstats.Stats{}, errors.New("pipeline: no verifier")
	}
	cfg = cfg.withDefaults()
	// A flight must not be evicted while under way, or which row leads next
	// would depend on timing: every entry younger than a flight under way
	// came from the window read since, so a cache larger than the window
	// never evicts one.
	dedupSize := cfg.DedupCache
	if dedupSize > 0 {
		dedupSize = max(dedupSize, cfg.Window+8)
	}
	r := &runner{cfg: cfg, dedup: newDedup(dedupSize, cfg.SpillDir), start: time.Now(),
		breaker: newBreaker(cfg.BreakerRows, DefaultBreakerWindow, cfg.BreakerShare)}
	defer func() {
		if err := r.dedup.close(); err != nil {
			cfg.Logger.Warn().Err(err).Msg("closing the dedup spill")
		}
	}()
	r.runCtx, r.cancelRun = context.WithCancelCause(ctx)
	defer r.cancelRun(nil)
	// Calls in flight must not die with ctx: an interrupt lets them finish
	// within the grace, so they get a context of their own.
	r.callCtx, r.cancelCal = context.WithCancel(context.WithoutCancel(ctx))
	defer r.cancelCal()
	// Once the run stops, they get the grace; the timer goes with them.
	stopGrace := context.AfterFunc(r.runCtx, func() {
		grace := time.AfterFunc(cfg.Timeout, r.cancelCal)
		context.AfterFunc(r.callCtx, func() { grace.Stop() })
	})
	defer stopGrace()

	cfg.Logger.Debug().Int("workers", cfg.Workers).Int("window", cfg.Window).Int("retries", cfg.Retries).
		Dur("timeout", cfg.Timeout).Dur("max_wait", cfg.MaxWait).Float64("rate", cfg.Limiter.Configured()).
		Msg("pipeline starting")
	queue := make(chan slot, cfg.Window)
	// The workers live as long as the run: a goroutine per row would grow
	// a new stack for every call (the client's and SQLite's frames are
	// deep), a tenth of a live run's CPU.
	jobs := make(chan job)
	var g errgroup.Group
	for range cfg.Workers {
		g.Go(func() error {
			for j := range jobs {
				j.s <- r.lead(j.base, j.addr, j.key, j.f)
			}
			return nil
		})
	}
	var (
		all     bool // the input (or Limit) was exhausted
		readErr error
	)
	// A local cache is asked by a stage of its own between the feeder and
	// the workers, about the leading rows that come together at once: a
	// hit needs no worker, and one query serves many rows. (A shared
	// cache's lookup may wait for another runner: the workers ask it.)
	out := jobs
	looked := make(chan struct{})
	if _, shared := cfg.Cache.(SharedCache); cfg.Cache != nil && !shared {
		looks := make(chan job, lookBatch)
		out = looks
		go func() {
			defer close(looked)
			defer close(jobs)
			r.look(looks, jobs)
		}()
	} else {
		close(looked)
	}
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		defer close(out)
		all, readErr = r.feed(queue, out)
	}()

	st, gap := r.drain(ctx, queue)
	<-fed
	<-looked
	_ = g.Wait() // workers return nil: row failures are data
	r.followers.Wait()

	st.RowsRead = r.rowsRead.Load()
	st.Shard = cfg.Shard.String()
	st.RowsOtherShards = r.otherShards.Load()
	st.CallsMade = r.callsMade.Load()
	st.CallsSaved = r.callsSaved.Load()
	st.CacheHits = r.cacheHits.Load()
	st.Retries = r.retries.Load()
	st.RateLimited = r.rateLimited.Load()
	st.RowsResumed = r.resumed.Load()
	st.RateLimit = cfg.Limiter.Rate()
	st.Elapsed = time.Since(r.start)
	if s := st.Elapsed.Seconds(); s > 0 {
		st.ElapsedSeconds = s
		st.EffectiveRate = float64(st.CallsMade) / s
		st.RowsPerSecond = float64(st.RowsWritten) / s
	}
	if cfg.Progress != nil {
		cfg.Progress(r.progress(&st, r.start.Add(st.Elapsed)))
	}

	allWritten := all && readErr == nil && st.RowsWritten == st.RowsRead
	if r.stopErr == nil && allWritten {
		// The share of Error rows is judged on the whole file too: a small
		// file never reaches DefaultMinRowsForShare.
		if err := r.tooManyErrors(st.Errors, st.RowsWritten, true); err != nil {
			r.stopErr = err
		}
	}
	if no, why := r.breaker.unreached(); no && ctx.Err() == nil && st.CacheHits == 0 && st.RowsResumed == 0 &&
		(r.stopErr == nil || !isFatal(r.stopErr)) {
		// Nothing but Error rows: the outputs must not replace good ones.
		r.stopErr = fmt.Errorf("%w (%w; first, %s)", ErrServiceUnreachable, ErrServiceUnavailable, why)
	}
	// A fatal error is never complete, even after the last row: the caller
	// must keep what it needs to resume.
	st.Complete = allWritten && (r.stopErr == nil || errors.Is(r.stopErr, ErrTooManyErrors))
	if r.stopErr != nil && ctx.Err() != nil && !allWritten && !isFatal(r.stopErr) {
		// The user's interrupt came first; the breaker or the error limit
		// saw the rows it cut short.
		r.stopErr = nil
	}
	if r.stopErr != nil {
		switch {
		case errors.Is(r.stopErr, ErrServiceUnreachable):
			st.Stopped = "service_unreachable"
		case errors.Is(r.stopErr, ErrServiceUnavailable):
			st.Stopped = "service_unavailable"
		case errors.Is(r.stopErr, ErrTooManyErrors):
			st.Stopped = "max_errors"
		default:
			st.Stopped = "fatal"
		}
		return st, r.stopErr
	}
	// A cancellation that came after the last row was done interrupted
	// nothing.
	if err := ctx.Err(); err != nil && (gap || !all) {
		st.Interrupted = true
		return st, fmt.Errorf("pipeline: interrupted after %d rows: %w", st.RowsWritten, err)
	}
	if readErr != nil {
		return st, fmt.Errorf("pipeline: reading input after %d rows: %w", st.RowsRead, readErr)
	}
	return st, nil
}

// stop ends the run at once because of err: intake stops and calls in flight
// are cancelled without grace, since every further call would fail too.
// Intake first: with the calls' context cancelled first, a worker could
// still start rows, each failing at once on the cancelled context, for as
// long as the stopping goroutine was descheduled in between (hundreds of
// rows under load).
func (r *runner) stop(err error) {
	r.stopOnce.Do(func() {
		r.stopErr = err
		r.cancelRun(err)
		r.cancelCal()
	})
}

// halt ends the run like an interrupt, because of err: intake stops, calls in
// flight get the grace to finish, and Run returns err.
func (r *runner) halt(err error) {
	r.stopOnce.Do(func() {
		r.stopErr = err
		r.cancelRun(err)
	})
}

// isFatal reports a stop that is neither the breaker nor the error limit.
func isFatal(err error) bool {
	return !errors.Is(err, ErrServiceUnavailable) && !errors.Is(err, ErrTooManyErrors)
}

// tooManyErrors returns the error that stops a run whose Error rows (kinds:
// runstats.Stats.Errors) passed MaxErrors or MaxErrorShare, or nil.
func (r *runner) tooManyErrors(kinds map[string]int64, written int64, final bool) error {
	c := &r.cfg
	var errs int64
	for _, n := range kinds {
		errs += n
	}
	var why string
	switch {
	case c.LimitErrors && errs > c.MaxErrors:
		why = fmt.Sprintf("%d, more than the limit of %d", errs, c.MaxErrors)
	case c.MaxErrorShare > 0 && written > 0 && (final || written >= DefaultMinRowsForShare) &&
		float64(errs) > c.MaxErrorShare*float64(written):
		why = fmt.Sprintf("%d of %d rows (%.1f%%), more than the limit of %g%%",
			errs, written, 100*float64(errs)/float64(written), 100*c.MaxErrorShare)
	default:
		return nil
	}
	return fmt.Errorf("%w: %s (%s)", ErrTooManyErrors, why, errorKinds(kinds))
}

// errorKinds says what the Error rows are, for people.
func errorKinds(kinds map[string]int64) string {
	var parts []string
	for _, k := range []struct{ kind, text string }{
		{runstats.ErrKindInput, "not sent (no address or country)"},
		{runstats.ErrKindPermanent, "refused by the service"},
		{runstats.ErrKindTransient, "failed after retries"},
		{runstats.ErrKindRateLimited, "rate limited past the maximum wait"},
	} {
		if n := kinds[k.kind]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k.text))
		}
	}
	return strings.Join(parts, ", ")
}

// feed reads rows, queues one slot per row in input order and hands each
// leading row on to jobs (the cache stage, or the workers). It runs outside
// the workers so that it never takes a worker's place, and checks the
// context on every send. It closes queue. all reports that every row was
// queued (the input or Limit ran out).
func (r *runner) feed(queue chan<- slot, jobs chan<- job) (all bool, err error) {
	defer close(queue)
	ctx := r.runCtx
	for {
		if ctx.Err() != nil {
			return false, nil
		}
		if r.cfg.Limit > 0 && r.rowsRead.Load()+r.otherShards.Load() >= r.cfg.Limit {
			return true, nil
		}
		row, err := r.cfg.Source.Next(ctx)
		if errors.Is(err, io.EOF) {
			return true, nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return false, nil // the reader saw the cancellation
			}
			return false, err
		}
		m := r.cfg.Mapper.Map(row)
		key := dedupKey(m.Address)
		if !r.cfg.Shard.hasKey(key) {
			r.otherShards.Add(1)
			continue
		}
		r.rowsRead.Add(1)
		s := make(slot, 1)
		select {
		case queue <- s:
		case <-ctx.Done():
			return false, nil
		}
		base := writers.Result{Row: row.Num, ID: row.ID, Cells: row.Cells, Types: row.Types, InputLabel: m.Label}
		if m.Err != nil {
			base.Err = reasonText(m.Err.Error())
			s <- outcome{res: base, kind: runstats.ErrKindInput}
			continue
		}
		addr := m.Address
		// Deduplication is decided here, in input order (see dedup).
		rl, f, hit, err := r.dedup.acquire(key)
		if err != nil {
			err = fmt.Errorf("pipeline: row %d: %w", row.Num, err)
			r.stop(err)
			s <- outcome{skipped: true}
			return false, nil
		}
		switch rl {
		case roleHit:
			r.callsSaved.Add(1)
			s <- r.finishRow(base, key, hit, true, false)
		case roleFollower:
			// A follower only waits: it takes no worker's place.
			r.followers.Add(1)
			go func() {
				defer r.followers.Done()
				var v verdict
				select {
				case <-f.done:
					v = f.v
				case <-r.callCtx.Done():
					v = verdict{skipped: true}
				}
				if !v.skipped {
					r.callsSaved.Add(1)
				}
				s <- r.finishRow(base, key, v, true, false)
			}()
		default:
			// A leader the journal answers needs no call; its duplicates
			// follow it as they would have. Only leaders are journalled: a
			// duplicate's verdict is its leader's, in every run.
			if v, ok, err := r.replay(row.Num, key); err != nil || ok {
				if err != nil {
					v = verdict{skipped: true}
				}
				r.dedup.finish(key, f, v)
				s <- r.finishRow(base, key, v, v.fromCache, false)
				if err != nil {
					return false, nil
				}
				continue
			}
			// The send blocks while every worker is busy; that, with the
			// queue's capacity, is the backpressure that bounds memory.
			select {
			case jobs <- job{s: s, base: base, addr: addr, key: key, f: f}:
			case <-ctx.Done():
				// Stopped while every worker was busy: lead finishes the
				// row as not started, as a worker would.
				s <- r.lead(base, addr, key, f)
			}
		}
	}
}

// lookBatch is how many leading rows the cache stage holds, and asks a
// BatchCache about at most at once.
const lookBatch = 128

// look asks the local cache about the leading rows from in, as many at
// once as are waiting (never waiting for more: a lone row is asked about at
// once), finishes those it answers and hands the others to the workers.
func (r *runner) look(in <-chan job, jobs chan<- job) {
	batch := make([]job, 0, lookBatch)
	for j := range in {
		batch = append(batch[:0], j)
	more:
		for len(batch) < lookBatch {
			select {
			case j, ok := <-in:
				if !ok {
					break more
				}
				batch = append(batch, j)
			default:
				break more
			}
		}
		vs := r.fromCacheMany(batch)
		for i, j := range batch {
			if v := vs[i]; v.resp != nil || v.skipped {
				r.dedup.finish(j.key, j.f, v)
				j.s <- r.finishRow(j.base, j.key, v, v.fromCache, true)
				continue
			}
			select {
			case jobs <- j:
			case <-r.runCtx.Done():
				// Stopped while every worker was busy: lead finishes the
				// row as not started, as a worker would.
				j.s <- r.lead(j.base, j.addr, j.key, j.f)
			}
		}
	}
}

// BatchCache is an EncodedCache that looks many keys up at once
// (cache.Store): fn is called for each key found, with its position in
// keys.
type BatchCache interface {
	EncodedCache
	GetMany(ctx context.Context, keys []string, fn func(i int, resp *api.VerifyResponse, answer []byte, at time.Time)) error
}

// fromCacheMany is fromCache for the leading rows of batch: a hit's
// verdict, a skipped one when the run stopped or the cache failed, or a
// zero verdict for a miss.
func (r *runner) fromCacheMany(batch []job) []verdict {
	vs := make([]verdict, len(batch))
	if r.runCtx.Err() != nil {
		for i := range vs {
			vs[i].skipped = true
		}
		return vs
	}
	bc, ok := r.cfg.Cache.(BatchCache)
	if !ok {
		for i, j := range batch {
			if v, done := r.fromCache(j.key, j.base.Row); done {
				vs[i] = v
			}
		}
		return vs
	}
	keys := make([]string, len(batch))
	for i, j := range batch {
		keys[i] = j.key
	}
	hits := 0
	err := bc.GetMany(r.callCtx, keys, func(i int, resp *api.VerifyResponse, answer []byte, at time.Time) {
		vs[i] = verdict{resp: resp, fromCache: true, at: at, answer: answer}
		hits++
	})
	if err != nil {
		// A broken cache must not silently become a second bill.
		r.stop(fmt.Errorf("pipeline: row %d: reading the cache: %w", batch[0].base.Row, err))
		for i := range vs {
			vs[i] = verdict{skipped: true}
		}
		return vs
	}
	r.cacheHits.Add(int64(hits))
	return vs
}

// job is a leading row for a worker: verify its address, and put its
// outcome in its slot.
type job struct {
	s    slot
	base writers.Result
	addr api.Address
	key  string
	f    *flight
}

// drain writes outcomes in input order until the queue is closed. After the
// first unfinished row nothing more is written (the output stays an
// unbroken prefix of the input), but slots are still drained so that every
// worker can finish. gap reports that some row was not written.
func (r *runner) drain(ctx context.Context, queue <-chan slot) (st runstats.Stats, gap bool) {
	// Every action and error kind is present, zero or not, so that scripts
	// reading the summary find the same keys every time.
	st = runstats.Stats{
		Actions: map[string]int64{
			string(api.ActionAccept): 0, string(api.ActionSuggest): 0, string(api.ActionConfirm): 0,
			string(api.ActionReject): 0, ActionError: 0,
		},
		MatchLevels: map[string]int64{},
		Errors:      map[string]int64{runstats.ErrKindInput: 0, runstats.ErrKindPermanent: 0, runstats.ErrKindTransient: 0, runstats.ErrKindRateLimited: 0},
	}
	// Writes go on after an interrupt: what is done is kept.
	wctx := context.WithoutCancel(ctx)
	log := r.cfg.Logger
	stopped := false
	var last time.Time
	for s := range queue {
		o := <-s
		if stopped {
			continue
		}
		if o.skipped {
			stopped = true
			continue
		}
		for _, w := range r.cfg.Outputs {
			if err := w.Write(wctx, o.res); err != nil {
				r.stop(fmt.Errorf("pipeline: writing row %d: %w", o.res.Row, err))
				stopped = true
				break
			}
		}
		if stopped {
			continue
		}
		st.RowsWritten++
		action := ActionError
		if o.res.Err != "" {
			st.Errors[o.kind]++
			ev := log.Warn().Int("row", o.res.Row)
			if o.res.ID != "" {
				ev = ev.Str("id", o.res.ID)
			}
			ev.Str("reason", o.res.Err).Str("kind", o.kind).Msg("row not verified")
		} else if o.res.Response != nil {
			action = string(o.res.Response.Action)
			st.MatchLevels[cmp.Or(o.res.Response.Information.MatchLevel, "unknown")]++
		}
		st.Actions[action]++
		if action == ActionError {
			if err := r.tooManyErrors(st.Errors, st.RowsWritten, false); err != nil {
				// The outputs end at the row that passed the limit, whatever
				// has finished behind it (it is journalled all the same).
				r.halt(err)
				stopped = true
			}
		}
		if r.cfg.Progress != nil {
			now := time.Now()
			if r.cfg.ProgressInterval < 0 || now.Sub(last) >= r.cfg.ProgressInterval {
				last = now
				r.cfg.Progress(r.progress(&st, now))
			}
		}
	}
	return st, stopped
}

// progress builds a snapshot; it runs on the writer goroutine.
func (r *runner) progress(st *runstats.Stats, now time.Time) Progress {
	a := st.Actions
	p := Progress{
		RowsRead:        r.rowsRead.Load(),
		RowsDone:        st.RowsWritten,
		RowsOtherShards: r.otherShards.Load(),
		Actions: Counts{Accept: a[string(api.ActionAccept)], Suggest: a[string(api.ActionSuggest)],
			Confirm: a[string(api.ActionConfirm)], Reject: a[string(api.ActionReject)], Error: a[ActionError]},
		CallsMade:   r.callsMade.Load(),
		CallsSaved:  r.callsSaved.Load(),
		Retries:     r.retries.Load(),
		RateLimited: r.rateLimited.Load(),
		RateLimit:   r.cfg.Limiter.Rate(),
		Elapsed:     now.Sub(r.start),
	}
	if s := p.Elapsed.Seconds(); s > 0 {
		p.CallsPerSecond = float64(p.CallsMade) / s
	}
	return p
}

// replay returns the journalled verdict of a leading row, if any. A journal
// error stops the run.
func (r *runner) replay(row int, key string) (verdict, bool, error) {
	if r.cfg.Journal == nil {
		return verdict{}, false, nil
	}
	e, ok, err := r.cfg.Journal.Lookup(row, keyHash(key))
	if err != nil {
		err = fmt.Errorf("pipeline: row %d: reading the journal: %w", row, err)
		r.stop(err)
		return verdict{}, false, err
	}
	if !ok {
		return verdict{}, false, nil
	}
	r.resumed.Add(1)
	v := verdict{resp: e.Response, reason: e.Err, kind: e.Kind, fromCache: e.FromCache}
	// The interrupted run may have been killed after journalling this
	// answer and before caching it: cache it now, or a later duplicate
	// would miss the cache where an uninterrupted run finds it.
	if c := r.cfg.Cache; c != nil && v.resp != nil && !v.fromCache {
		_, ok, err := c.Get(r.callCtx, key)
		if err == nil && !ok {
			err = c.Put(r.callCtx, key, v.resp)
		}
		if err != nil {
			err = fmt.Errorf("pipeline: row %d: the cache: %w", row, err)
			r.stop(err)
			return verdict{}, false, err
		}
	}
	return v, true, nil
}

// lead verifies the address of a row that leads its flight, and shares the
// verdict with its duplicates.
func (r *runner) lead(base writers.Result, addr api.Address, key string, f *flight) outcome {
	v := verdict{skipped: true}
	if r.runCtx.Err() == nil {
		v = r.encode(r.lookup(key, addr, base.Row, base.ID))
	}
	if !v.fromCache && !v.skipped {
		serviceFault := v.kind == runstats.ErrKindTransient || v.kind == runstats.ErrKindRateLimited
		if err := r.breaker.observe(serviceFault, base.Row, v.reason); err != nil {
			r.halt(err)
		}
	}
	r.dedup.finish(key, f, v)
	o := r.finishRow(base, key, v, v.fromCache, true)
	// The cache is written after the journal: a row that a kill catches in
	// between is verified again by the resumed run, not answered from the
	// cache, so that its av_cached stays what an uninterrupted run writes.
	if c := r.cfg.Cache; c != nil && v.resp != nil && !v.fromCache {
		var err error
		if ec, ok := c.(EncodedCache); ok && v.answer != nil {
			err = ec.PutEncoded(r.callCtx, key, v.answer)
		} else {
			err = c.Put(r.callCtx, key, v.resp)
		}
		if err != nil {
			r.stop(fmt.Errorf("pipeline: row %d: writing the cache: %w", base.Row, err))
		}
	} else if sc, ok := c.(SharedCache); ok && !v.fromCache {
		// No answer to share: the claim taken by the cache's miss (if the
		// run got that far) is given up. Without a deadline of the calls:
		// a stopped run must still let the others take the key.
		if err := sc.Release(context.WithoutCancel(r.callCtx), key); err != nil {
			r.stop(fmt.Errorf("pipeline: row %d: releasing the cache's claim: %w", base.Row, err))
		}
	}
	return o
}

// finishRow builds a row's outcome from its verdict and, for a leading row
// (record), journals it when it is final: an answer or a refusal.
func (r *runner) finishRow(base writers.Result, key string, v verdict, cached, record bool) outcome {
	o := outcome{res: base, kind: v.kind, skipped: v.skipped}
	o.res.Response, o.res.Err = v.resp, v.reason
	o.res.Cached, o.res.FromCache = cached, v.fromCache
	if v.resp != nil {
		o.res.VerifiedAt = v.at
	}
	if record && r.cfg.Journal != nil && !v.skipped && (v.resp != nil || v.kind == runstats.ErrKindPermanent) {
		err := r.cfg.Journal.Record(journal.Entry{Row: base.Row, Key: keyHash(key), Response: v.resp, Answer: v.answer,
			Err: v.reason, Kind: v.kind, FromCache: v.fromCache})
		if err != nil {
			// Every row recording after a failed write gets the error: name
			// none of them.
			r.stop(fmt.Errorf("pipeline: writing the journal: %w", err))
		}
	}
	return o
}

// stores reports whether something stores answers as JSON: the journal,
// the cache or the dedup's spill.
func (r *runner) stores() bool {
	return r.cfg.Journal != nil || r.cfg.Cache != nil || r.dedup.spill != nil
}

// encode sets v.answer, once, when something will store the answer and the
// service's bytes (AnswerVerifier) or the cache's did not come with it.
func (r *runner) encode(v verdict) verdict {
	if v.resp != nil && v.answer == nil && r.stores() {
		v.answer = api.AppendVerifyResponse(nil, v.resp)
	}
	return v
}

// lookup answers a distinct address from a shared cache, or verifies it (a
// local cache was asked by the cache stage, look).
func (r *runner) lookup(key string, addr api.Address, row int, id string) verdict {
	if _, shared := r.cfg.Cache.(SharedCache); shared {
		if v, done := r.fromCache(key, row); done {
			return v
		}
	}
	return r.verify(addr, row, id)
}

// fromCache looks a leading row's address up in the cross-run cache: done
// with its answer, or done with a skipped verdict when the cache failed (a
// broken cache must not silently become a second bill: the run stops), or
// not done (a miss).
func (r *runner) fromCache(key string, row int) (v verdict, done bool) {
	c := r.cfg.Cache
	var (
		resp   *api.VerifyResponse
		answer []byte
		at     time.Time
		ok     bool
		err    error
	)
	// A shared cache's Get may wait for another runner's answer: that wait
	// ends with the run, not with the grace of the calls in flight; the row
	// is then not finished, as if never started.
	gctx := r.callCtx
	_, shared := c.(SharedCache)
	if shared {
		gctx = r.runCtx
	}
	switch tc := c.(type) {
	case EncodedCache:
		resp, answer, at, ok, err = tc.GetEncoded(gctx, key)
	case TimedCache:
		resp, at, ok, err = tc.GetAt(gctx, key)
	default:
		resp, ok, err = c.Get(gctx, key)
	}
	if err != nil && shared && gctx.Err() != nil {
		return verdict{skipped: true}, true
	}
	if err != nil {
		r.stop(fmt.Errorf("pipeline: row %d: reading the cache: %w", row, err))
		return verdict{skipped: true}, true
	}
	if ok && resp != nil {
		r.cacheHits.Add(1)
		return verdict{resp: resp, fromCache: true, at: at, answer: answer}, true
	}
	return verdict{}, false
}
