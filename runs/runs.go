package runs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/journal"
	"github.com/addrclean/addrclean/pipeline"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/runstats"
	"github.com/addrclean/addrclean/writers"
)

// UsageError is a refusal that only another command line gets past; other
// errors of this package are fatal to the run.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, args ...any) error { return &UsageError{fmt.Errorf(format, args...)} }

// Policy is what the command line says about the journal: --journal (Mode:
// auto, on or off), --resume, --restart, --keep-journal, and whether the
// run reads stdin (which cannot be read twice) or a live service (where
// every call is paid for), and whether it writes a cache (--cache).
type Policy struct {
	Mode                  string
	Stdin, Live, Cache    bool
	Resume, Restart, Keep bool
}

// Check refuses flags that contradict each other.
func (p Policy) Check() error {
	switch {
	case p.Resume && p.Restart:
		return usagef("--resume and --restart contradict each other: pass one")
	case p.Mode != "auto" && p.Mode != "on" && p.Mode != "off":
		return usagef("--journal %q: want auto, on or off", p.Mode)
	}
	for _, f := range []struct {
		set  bool
		name string
	}{{p.Resume, "--resume"}, {p.Restart, "--restart"}, {p.Keep, "--keep-journal"}} {
		if f.set && p.Mode == "off" {
			return usagef("%s is about the journal, and --journal off keeps none: drop one of them", f.name)
		}
	}
	return nil
}

// keeps decides whether the run keeps a journal at path, and says why not.
// With --journal auto a run against the embedded service keeps one only
// when asked to resume or when one is there (it might be one to resume):
// re-verifying costs nothing but time, and journalling a tenth of the CPU.
func (p Policy) keeps(path string) (bool, string) {
	switch {
	case p.Stdin:
		return false, "stdin cannot be read twice, so a run over stdin keeps no journal"
	case p.Mode == "off":
		return false, "--journal off"
	case p.Mode == "on", p.Live, p.Resume, p.Restart, p.Keep:
		return true, ""
	}
	if _, err := os.Lstat(path); err == nil {
		return true, ""
	}
	return false, "--journal auto keeps none for the embedded service (pass --journal on for one)"
}

// MayKeep reports whether the run may keep a journal at all, and so write
// the journal's path: not over stdin, nor with --journal off. Whether it
// does is decided by Open.
func (p Policy) MayKeep() bool { return !p.Stdin && p.Mode != "off" }

// Identity is what makes two runs the same: the input's content and every
// option that changes the answers or the rows (Columns is
// readers.Mapper.Columns; Source tells the delimiter or sheet when it is a
// readers.Describer; Extra adds options by name). Output options may change
// between runs: outputs are written afresh from the journal. The embedded
// service (BaseURL "") answers from its reference's content and its build,
// wherever the reference file lies: Embedded identifies those.
type Identity struct {
	Input             journal.Input
	Columns           map[string]string
	Encoding          string
	Source            readers.Reader
	BaseURL, Embedded string
	Extra             map[string]string
}

// meta is the journal's record of id.
func (id Identity) meta() journal.Meta {
	var mapping []string
	for _, k := range slices.Sorted(maps.Keys(id.Columns)) {
		if k != "default_country" && k != "language" {
			mapping = append(mapping, k+"="+strconv.Quote(id.Columns[k]))
		}
	}
	opts := map[string]string{
		"column mapping": strings.Join(mapping, " "),
		"--country":      id.Columns["default_country"],
		"--language":     id.Columns["language"],
		"--encoding":     id.Encoding,
		"service":        "embedded, reference and build " + id.Embedded,
	}
	if d, ok := id.Source.(readers.Describer); ok {
		if info := d.Info(); info.Format == readers.FormatCSV {
			opts["--delimiter"] = string(info.Delimiter)
		} else {
			opts["--sheet"] = info.Sheet
		}
	}
	if id.BaseURL != "" {
		opts["service"] = CanonicalURL(id.BaseURL)
	}
	for k, v := range id.Extra {
		opts[k] = v
	}
	return journal.Meta{Input: id.Input, Options: opts}
}

// CanonicalURL spells a base URL one way (lower case, no user, no final /).
func CanonicalURL(s string) string {
	s = strings.TrimRight(s, "/")
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	u.User = nil
	return u.String()
}

// Open settles the run's journal before anything is started or written, so
// that a refusal leaves the last run's work as it was: a journal an earlier
// run left is changed only by this run's first row (Run.Record), so that a
// run refused by a later check, or by the service (a key it refuses),
// leaves it as it was, finished or one to resume. id is called only
// for a journal (hashing the input costs a read of it). Open refuses (a
// UsageError) to resume a journal written for another run, and to start
// afresh over an unfinished journal without --resume, since that would pay
// again for the rows it holds. Then it removes a killed run's temporary
// outputs: a live run holds a lock on its own. dir, when not "", is the
// journal's directory (endpoint.Plan.JournalDir), created with the
// journal and not before, so that a refused run leaves no directory.
func (p Policy) Open(ctx context.Context, path, dir string, id func() (Identity, error), outputs []string, log zerolog.Logger) (_ *Run, err error) {
	var j *journal.Journal
	defer func() {
		if err != nil && j != nil {
			_ = j.Close()
		}
		for i := 0; err == nil && i < len(outputs); i++ {
			for _, f := range writers.RemoveStaleTemps(outputs[i]) {
				log.Debug().Str("file", f).Msg("removed a temporary output left by an earlier run")
			}
		}
	}()
	switch keep, why := p.keeps(path); {
	case !keep && (p.Resume || p.Mode == "on" || p.Keep):
		log.Warn().Msg("no journal: " + why + "; starting from the first row")
		return &Run{log: log}, nil
	case !keep:
		log.Debug().Msg("no journal: " + why)
		return &Run{log: log}, nil
	}
	who, err := id()
	if err != nil {
		return nil, err
	}
	meta := who.meta()
	if j, err = journal.Open(ctx, path); errors.Is(err, fs.ErrNotExist) {
		if p.Resume {
			log.Warn().Str("journal", path).Msg("--resume: no journal of an earlier run: starting from the first row")
		}
		var made journalDir
		if made, err = makeJournalDir(dir); err == nil {
			j, err = journal.Create(ctx, path, meta)
		}
		if errors.Is(err, fs.ErrNotExist) && dir != "" {
			// Another run refused at this moment removed the directory it
			// had made, as this one was about to use it: make it again.
			if made, err = makeJournalDir(dir); err == nil {
				j, err = journal.Create(ctx, path, meta)
			}
		}
		if err != nil {
			made.remove() // no Run to Abandon: the directories made go here
			return nil, journalError(err)
		}
		return &Run{j: j, keep: p.Keep, log: log, made: made, free: p.free()}, nil
	}
	var afresh bool
	if err == nil {
		afresh, err = p.reuse(j, meta, log)
	}
	if err != nil {
		return nil, journalError(err)
	}
	r := &Run{j: j, keep: p.Keep, log: log, afresh: afresh, begin: j.Continue, free: p.free()}
	if afresh {
		r.begin = func() error { return j.Start(meta) }
	}
	return r, nil
}

// free reports that a row's record need not be committed before the row
// goes on: against the embedded service its answer cost no call. Not with
// a cache, which the pipeline writes after the journal so that a row a
// kill catches in between is verified again, not answered from the cache
// (its av_cached and the cache hits would differ from an uninterrupted
// run's): a queued record let the cache's commit come first.
func (p Policy) free() bool { return !p.Live && !p.Cache }

// journalDir is the directories a run made for its journal: dir and its
// parents up to root, the outermost of those that did not exist.
type journalDir struct{ dir, root string }

// makeJournalDir creates dir (mode 0700) and its missing parents; "" makes
// nothing. It returns what it made.
func makeJournalDir(dir string) (journalDir, error) {
	if dir == "" {
		return journalDir{}, nil
	}
	dir = filepath.Clean(dir)
	var made journalDir
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		made = journalDir{dir: dir, root: d}
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return journalDir{}, fmt.Errorf("journal directory: %w", err)
	}
	return made, nil
}

// remove removes the directories made, innermost first, as long as they
// are empty: another run's journal keeps its directory.
func (m journalDir) remove() {
	if m.dir == "" {
		return
	}
	for d := m.dir; ; d = filepath.Dir(d) {
		if os.Remove(d) != nil || d == m.root {
			return
		}
	}
}

// startOver decides whether a run starts afresh over the journal an earlier
// run left, or continues it; it refuses an unfinished journal without
// --resume, and a journal of another run.
func (p Policy) startOver(info journal.Info, meta journal.Meta) (bool, error) {
	switch {
	case info.Headless || p.Restart || (!p.Resume && (info.Complete || info.Rows == 0)):
		return true, nil
	case !p.Resume:
		return false, usagef("%s holds %d finished rows of an interrupted run (last written %s): "+
			"run the same command with --resume to continue it without paying for them again, or with --restart to discard them and start afresh",
			info.Path, info.Rows, info.Updated.Format("2006-01-02 15:04:05"))
	}
	if diff := info.Meta.Diff(meta); len(diff) > 0 {
		return false, usagef("--resume: %s was written for a different run: %s. "+
			"Resume with the same input and options, or pass --restart instead of --resume to discard it and start afresh",
			info.Path, strings.Join(diff, "; "))
	}
	return false, nil
}

// reuse decides whether the run starts afresh over the journal an earlier
// run left (afresh) or continues it, or refuses it.
func (p Policy) reuse(j *journal.Journal, meta journal.Meta, log zerolog.Logger) (afresh bool, _ error) {
	info, path := j.Info(), j.Path()
	startOver, err := p.startOver(info, meta)
	if err != nil {
		return false, err
	}
	switch {
	case info.Headless:
		log.Warn().Str("journal", path).Msg("the journal has no intact header (a run was killed while it created it); it holds no rows: starting afresh")
	case p.Restart:
		if !info.Complete && info.Rows > 0 {
			log.Warn().Str("journal", path).Int64("rows", info.Rows).
				Msgf("--restart: discarding the journal of an interrupted run (%d finished rows); starting from the first row", info.Rows)
		}
	case startOver:
		log.Info().Str("journal", path).Msg("replacing the journal of a finished run")
	}
	if startOver {
		return true, nil
	}
	if info.Damaged > 0 {
		log.Warn().Str("journal", path).Int64("damaged", info.Damaged).
			Msgf("journal: %d damaged records skipped; their rows are verified again", info.Damaged)
	}
	log.Info().Str("journal", path).Int64("rows", info.Rows).Bool("complete", info.Complete).
		Msgf("--resume: the journal holds %d verified rows; they and their duplicates are not sent again", info.Rows)
	return false, nil
}

func journalError(err error) error {
	switch {
	case errors.Is(err, journal.ErrLocked):
		return fmt.Errorf("%w: another run is writing the same outputs", err)
	case errors.Is(err, journal.ErrOldFormat):
		return fmt.Errorf("%w; or delete it to start afresh (its rows are then verified again)", err)
	case errors.Is(err, journal.ErrCorrupt):
		return fmt.Errorf("%w: delete it to start afresh", err)
	}
	return err
}

// Run is a run's journal (or none) from Open to the run's end.
type Run struct {
	j    *journal.Journal
	keep bool
	log  zerolog.Logger
	// made are the directories made for the journal: a run abandoned
	// before it started (refused) removes them with its journal.
	made journalDir
	// begin takes over the journal an earlier run left (Start, afresh, or
	// Continue), at the run's first Record: nil once done, and for a
	// journal this run created. Until then the file is as that run left
	// it, and a run that ends before (refused) leaves it so.
	begin    func() error
	afresh   bool
	refused  bool // ended by Abandon
	free     bool // records need not wait for their commit: Policy.free
	once     sync.Once
	beginErr error
}

// Journal is for pipeline.Config.Journal: an untyped nil without one.
func (r *Run) Journal() pipeline.Journal {
	if r.j == nil {
		return nil
	}
	return r
}

// Lookup is the journal's, but that a run starting afresh over an earlier
// run's journal finds none of that run's rows.
func (r *Run) Lookup(row int, key uint64) (journal.Entry, bool, error) {
	if r.afresh {
		return journal.Entry{}, false, nil
	}
	return r.j.Lookup(row, key)
}

// Record records e, the first one after taking over the journal. Against
// the embedded service without a cache it does not wait for the commit
// (journal.Entry.Free).
func (r *Run) Record(e journal.Entry) error {
	if err := r.takeOver(); err != nil {
		return err
	}
	e.Free = e.Free || r.free
	return r.j.Record(e)
}

// takeOver starts afresh or continues the journal an earlier run left, once.
func (r *Run) takeOver() error {
	r.once.Do(func() {
		if r.begin != nil {
			if r.beginErr = r.begin(); r.beginErr == nil {
				r.begin = nil // kept after a failure: its transaction left the file as it was
			}
		}
	})
	return r.beginErr
}

// Abandon, deferred, ends the journal of a run that stopped before it ran:
// one it created is removed, with the directories made for it, so that a
// run refused after its journal was created (a flag of the service, the
// output tables' DDL) leaves nothing; one an earlier run left is left as
// it was. After Settle it does nothing.
func (r *Run) Abandon() {
	if r.j == nil {
		return
	}
	path := r.j.Path()
	r.refused = true
	r.finish(runstats.Stats{}, false)
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		r.made.remove() // the journal was removed: leave nothing of it
	}
}

// End is how a run ended. A service never reached (Unreachable) and a
// fatal error abort the outputs: they must not replace the last run's.
// OutputsFailed: one could not be finished (Outcome.Err); the rest aborted.
type End int

const (
	Finished End = iota // every row written, some perhaps as Error
	Interrupted
	Unavailable   // the circuit breaker stopped the run
	TooManyErrors // --max-errors stopped it
	Unreachable
	Failed
	OutputsFailed
)

// Outcome is how a run ended, whether a journal to resume is left, and why
// an output was not finished.
type Outcome struct {
	End       End
	Resumable bool
	Err       error
}

// Written reports that the outputs hold the rows written, in input order.
func (o Outcome) Written() bool { return o.End <= TooManyErrors }

// Settle finishes or aborts the outputs of a run that pipeline.Run returned
// st and runErr for, and sets st.Duplicates from them. A finished run
// removes its journal (--keep-journal marks it complete); a stopped one
// keeps it for --resume unless it holds nothing; a fatal error never drops
// it, even after the last row: the journal is what is paid for.
func (r *Run) Settle(outs []writers.Writer, st *runstats.Stats, runErr error) Outcome {
	if r.j != nil && r.j.Changed() > 0 {
		r.log.Warn().Int64("rows", r.j.Changed()).Msg("the journal held other addresses for some rows; they were verified again")
	}
	if r.j != nil && r.afresh && r.begin != nil {
		// --restart over an interrupted run's rows, stopped before its first
		// row (Ctrl-C, the service down): the rows are discarded as asked, so
		// that the next run starts from the first row as Outcome says (only a
		// refusal, through Abandon, leaves them).
		if info := r.j.Info(); !info.Complete && info.Rows > 0 {
			if err := r.takeOver(); err != nil {
				r.log.Error().Err(err).Msg("starting the journal afresh")
			}
		}
	}
	var end End // Finished
	unreachable := errors.Is(runErr, pipeline.ErrServiceUnreachable)
	switch {
	case st.Interrupted || errors.Is(runErr, context.Canceled):
		end = Interrupted
	case errors.Is(runErr, pipeline.ErrServiceUnavailable) && !unreachable:
		end = Unavailable
	case errors.Is(runErr, pipeline.ErrTooManyErrors):
		end = TooManyErrors
	case unreachable:
		end = Unreachable
	case runErr != nil:
		end = Failed
	}
	fatal := end == Unreachable || end == Failed
	var err error
	for _, w := range outs {
		if fatal || err != nil {
			_ = w.Abort() // no temporary file left behind
			continue
		}
		err = w.Close()
		if dr, ok := w.(writers.DuplicateReporter); ok && err == nil && st.Duplicates == nil {
			d := dr.Duplicates()
			st.Duplicates = &d
		}
	}
	switch {
	case fatal:
		return Outcome{End: end, Resumable: r.finish(runstats.Stats{}, false)}
	case err != nil: // keep the journal: the outputs are not there
		return Outcome{End: OutputsFailed, Resumable: r.finish(runstats.Stats{}, r.keep), Err: err}
	}
	return Outcome{End: end, Resumable: r.finish(*st, r.keep)}
}

// finish keeps or removes the journal once; kept: one to resume is left.
func (r *Run) finish(st runstats.Stats, keep bool) (kept bool) {
	j := r.j
	if j == nil {
		return false
	}
	r.j = nil
	path := j.Path()
	var err error
	if lost := r.lost(j); lost {
		return false
	}
	if r.begin != nil && !st.Complete {
		// No row recorded, so the journal is as the last run left it:
		// finished, or one to resume.
		if err := j.Close(); err != nil {
			r.log.Error().Err(err).Msg("closing the journal")
		}
		if r.afresh || j.Info().Rows == 0 {
			return false
		}
		if r.refused { // the same command would be refused again
			return true
		}
		r.log.Info().Str("journal", path).Int64("rows", j.Info().Rows).
			Msg("the journal keeps the finished rows: run the same command with --resume to continue")
		return true
	}
	switch {
	case st.Complete && keep:
		if r.begin != nil {
			err = r.begin()
		}
		if err == nil {
			err = j.Complete(st.RowsWritten)
		}
		if cerr := j.Close(); err == nil { // closed either way: its lock and timer
			err = cerr
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
		if !r.sound(path) {
			return false
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

// lost ends a journal whose file was damaged, deleted or replaced during
// the run: its rows can no longer be found or trusted, so no --resume can
// use them. A damaged one is removed (a resume would only be refused);
// another file now at its path is left alone. Either way the next run,
// with --resume or not, starts from the first row.
func (r *Run) lost(j *journal.Journal) bool {
	path := j.Path()
	switch broken := j.Broken(); {
	case j.Replaced():
		_ = j.Close()
		r.log.Warn().Str("journal", path).
			Msg("the journal was deleted or replaced during the run: its rows are lost; the next run starts from the first row")
		return true
	case broken != nil:
		err := j.Remove()
		r.log.Warn().Str("journal", path).AnErr("damage", broken).AnErr("removing", err).
			Msg("the journal was damaged during the run (changed or cut short by something else): removed it; the next run starts from the first row")
		return true
	}
	return false
}

// sound checks a journal kept for --resume as the resume will: one cut or
// overwritten under the run without the run meeting the damage (its pages
// were in memory) would only be refused then. Such a journal is removed,
// saying so, so that the next run starts cleanly from the first row.
func (r *Run) sound(path string) bool {
	// Not the run's ctx: a run stopped by Ctrl-C keeps its journal for
	// --resume, and this check must still run then.
	j, err := journal.Open(context.Background(), path)
	if err == nil {
		_ = j.Close()
		return true
	}
	if !errors.Is(err, journal.ErrCorrupt) {
		return true // locked or gone: the next run says so
	}
	rmErr := journal.Delete(path)
	r.log.Warn().Str("journal", path).AnErr("damage", err).AnErr("removing", rmErr).
		Msg("the journal was damaged during the run (changed or cut short by something else): removed it; the next run starts from the first row")
	return false
}
