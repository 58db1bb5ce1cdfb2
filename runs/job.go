package runs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/estimate"
	"github.com/addrclean/addrclean/internal/samefile"
	"github.com/addrclean/addrclean/journal"
	"github.com/addrclean/addrclean/pipeline"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/record"
	"github.com/addrclean/addrclean/runfile"
	"github.com/addrclean/addrclean/runs/endpoint"
	"github.com/addrclean/addrclean/runstats"
	"github.com/addrclean/addrclean/writers"
)

// Job is one 'addrclean run': its input and outputs (Plan), how it reads
// and writes them, what answers it, and what it keeps. Run runs it;
// Estimate is its --dry-run.
type Job struct {
	Plan    *endpoint.Plan
	Read    readers.Options
	Mapping readers.MappingSpec
	// Write are the outputs' options; the job sets the id column.
	Write  writers.Options
	Policy Policy
	// Service answers the rows; Connect says how to reach it.
	Service Service
	Connect ConnectOptions
	// Cache is --cache ("" for none), reusing answers younger than
	// CacheTTL.
	Cache        string
	CacheTTL     time.Duration
	CacheOptions CacheOptions
	// Tuning is the pipeline's tuning (Limit, Shard, Workers, Retries,
	// Timeout, MaxWait, the error limits); the job fills in the rest.
	Tuning pipeline.Config
	// Rate and Burst pace a live service; the embedded one has no quota,
	// so it is unlimited unless RateSet.
	Rate    float64
	RateSet bool
	Burst   int
	// RateShared makes Rate the rate of every runner of the same service
	// and key together, paced through the database of the postgres://
	// Cache (--rate-shared).
	RateShared bool
	// Reads and Writes are the caller's other files (the reference and the
	// key; the summary and the report), for the clash checks.
	Reads, Writes []samefile.Use
	// Progress shows the run's progress over src: update is called by the
	// pipeline, finish once it is done. Nil shows none.
	Progress func(src readers.Reader) (update func(pipeline.Progress), finish func())
	Logger   zerolog.Logger
}

// Result is how a run ended.
type Result struct {
	Stats   runstats.Stats
	Outcome Outcome
	// Err is the pipeline's error, if any.
	Err error
	// Out and Review name the outputs as the summary shows them (files
	// and tables); both are empty when nothing was written.
	Out, Review string
	// Embedded reports a run against the embedded service.
	Embedded bool
}

// Run checks everything, then changes anything: the outputs, the clash of
// every file, the cache, the input and its mapping, the output tables, the
// journal and the service flags are settled before the first call is paid.
// The cache, the --rate-shared timeline and the output tables are looked at
// first and created last, once no check can refuse the run, so that a
// refused run leaves none of them in the user's database or directory. The
// caller closes the Plan (after recording the run's summary with it).
func (j *Job) Run(ctx context.Context) (res Result, err error) {
	log := j.Logger
	out, review, err := j.Plan.Outputs(&j.Read)
	if err != nil {
		return res, err
	}
	if err := samefile.Check(j.uses(out, review)...); err != nil {
		return res, &UsageError{err}
	}
	if err := keepDecisions(ctx, review); err != nil {
		return res, &UsageError{err}
	}
	// The cache is looked at first, creating nothing: a locked one, one
	// that is not addrclean's or a database that cannot be reached stops
	// the run before anything is read or started.
	var c Cache
	defer func() {
		if c == nil {
			return
		}
		if err := c.Close(); err != nil {
			log.Error().Err(err).Msg("closing the cache")
		}
	}()
	if j.Cache != "" {
		if c, _, err = openExisting(ctx, j.Cache, j.CacheOptions); err != nil {
			return res, err
		}
	}
	pacer, err := j.openPacer(ctx, log)
	if err != nil {
		return res, err
	}
	defer pacer.Close()
	src, err := j.Plan.Open(ctx, j.Read, j.Mapping, log, true, out, review)
	if err != nil {
		return res, err
	}
	mapper, err := readers.MapperFor(src, j.Mapping)
	if err != nil {
		return res, endpoint.InputError(fmt.Errorf("%s: %w", j.Plan.Info().Name, err))
	}
	logReading(log, j.Plan.Info().Name, src, mapper)
	idName := mapper.Columns()["id"]
	// The output tables are checked before the journal is touched; their
	// DDL waits until nothing else can refuse the run.
	if err := j.Plan.CheckTables(ctx, idName); err != nil {
		return res, err
	}
	run, err := j.Policy.Open(ctx, j.journalPath(out, review), j.Plan.JournalDir(out, review), func() (Identity, error) {
		return j.identity(ctx, src, mapper)
	}, []string{out, review}, log)
	if err != nil {
		return res, err
	}
	defer run.Abandon()
	conn, err := Connect(ctx, j.Service, j.Connect, log)
	if err != nil {
		return res, err
	}
	res.Embedded = conn.Embedded
	// Nothing can refuse the run from here on: what it keeps in the
	// cache's database or directory may be created.
	if j.Cache != "" && c == nil {
		made, err := OpenCache(ctx, j.Cache, j.CacheOptions)
		if err != nil {
			return res, err // made may be a nil *cache.DB in a non-nil Cache
		}
		c = made
	}
	if err := pacer.Prepare(ctx); err != nil {
		return res, err
	}
	pcache, logCached, err := CacheStore(c, j.Service, j.CacheTTL, log)
	if err != nil {
		return res, err
	}
	// Last, the output tables: a run refused for any reason above leaves
	// the user's database as it was.
	if err := j.Plan.CreateTables(ctx, log); err != nil {
		return res, err
	}
	wopts := j.Write
	wopts.Logger, wopts.IDColumn = log, idName // the review shows the id beside row
	outs, err := j.Plan.OpenOutputs(ctx, src, idName, wopts, log)
	if err != nil {
		return res, err
	}
	res.Out, res.Review = j.Plan.Shown(out, review)

	cfg := j.Tuning
	cfg.Source, cfg.Mapper, cfg.Verifier, cfg.Outputs = src, mapper, conn.Client, outs
	cfg.Limiter = j.limiter(conn.Embedded, pacer)
	cfg.Cache, cfg.Logger, cfg.Journal = pcache, log, run.Journal()
	finish := func() {}
	if j.Progress != nil {
		cfg.Progress, finish = j.Progress(src)
	}
	res.Stats, res.Err = pipeline.Run(ctx, cfg)
	finish()
	res.Stats.TokenRefreshes = conn.Client.Stats().TokenRefreshes
	logCached(res.Stats.CacheHits)
	res.Outcome = run.Settle(outs, &res.Stats, res.Err)
	if res.Outcome.End != OutputsFailed && !res.Outcome.Written() {
		res.Out, res.Review = "", "" // none was written, so none is named
	}
	return res, nil
}

// rate is the limiter's rate: the embedded service has no quota to
// respect.
func (j *Job) rate(embedded bool) float64 {
	if embedded && !j.RateSet {
		return 0
	}
	return j.Rate
}

// uses are the files of the run with outputs out and review, for the
// clash checks: what it reads first, then the cache it reads and writes,
// then what it writes. The journal is listed unless the run can keep none.
func (j *Job) uses(out, review string) []samefile.Use {
	uses := append(append(j.Plan.InputUses(), j.Reads...), CacheUse(j.Cache))
	uses = append(append(uses, j.Plan.OutputUses(out, review)...), j.Writes...)
	if j.Policy.MayKeep() {
		uses = append(uses, samefile.Use{Name: "the journal", Path: j.journalPath(out, review), Role: samefile.Write})
	}
	return uses
}

func (j *Job) journalPath(out, review string) string {
	return j.Plan.JournalPath(out, review, j.Tuning.Shard.String())
}

// identity is what the run's journal is written for.
func (j *Job) identity(ctx context.Context, src readers.Reader, mapper *readers.Mapper) (Identity, error) {
	in, extra, err := j.Plan.Identity(ctx)
	if err != nil {
		return Identity{}, err
	}
	id := Identity{Input: in, Columns: mapper.Columns(), Source: src, BaseURL: j.Service.BaseURL, Extra: map[string]string{}}
	maps.Copy(id.Extra, extra)
	id.Encoding, _ = record.NormaliseEncoding(j.Read.Encoding) // checked with the flags
	if j.Service.BaseURL == "" {
		ns, err := j.Service.Namespace()
		if err != nil {
			return Identity{}, err
		}
		id.Embedded = strings.TrimPrefix(ns.ID, "embedded-")
	}
	if sh := j.Tuning.Shard.String(); sh != "" {
		// A shard resumes its own rows only.
		id.Extra["--shard"] = sh
	}
	return id, nil
}

// logReading logs what is read, and how it is mapped.
func logReading(log zerolog.Logger, input string, src readers.Reader, mapper *readers.Mapper) {
	ev := log.Info().Str("input", input).Object("mapping", mapper)
	if d, ok := src.(readers.Describer); ok {
		info := d.Info()
		ev = ev.Str("format", info.Format)
		if info.Format == readers.FormatCSV {
			ev = ev.Str("delimiter", string(info.Delimiter))
		} else {
			ev = ev.Str("sheet", info.Sheet)
		}
		if info.HeaderRow > 1 {
			ev = ev.Int("header_row", info.HeaderRow)
		}
	}
	ev.Msg("reading")
	for _, n := range mapper.Notes() {
		log.Warn().Msg(n)
	}
}

// Estimate is the job's --dry-run: the mapping preview and the estimate
// of the same command without --dry-run, printed to w, counted in one pass
// over the input with the run's own dedup and read-only lookups in its
// journal (--resume) and cache, at price per call (nil: no cost). Nothing
// is called, written, journalled or cached; a workbook unpacks where the
// next run finds it if this one is killed. The caller closes the Plan.
func (j *Job) Estimate(ctx context.Context, price *estimate.Price, w io.Writer) (estimate.Figures, error) {
	log := j.Logger
	src, err := j.Plan.Open(ctx, j.Read, j.Mapping, zerolog.Nop(), false) // read only: no output is opened
	if err != nil {
		return estimate.Figures{}, err
	}
	mapper, err := readers.MapperFor(src, j.Mapping)
	if err != nil {
		return estimate.Figures{}, endpoint.InputError(fmt.Errorf("%s: %w", j.Plan.Info().Name, err))
	}
	cfg := pipeline.Config{Limit: j.Tuning.Limit, Shard: j.Tuning.Shard, SpillDir: j.Plan.TmpDir()}
	rctx, stopReading := context.WithCancelCause(ctx)
	defer stopReading(nil)
	if j.Cache != "" && !IsSharedCache(j.Cache) {
		// A file is checked and read while the input is (both cores, as a
		// run uses); a failure to open it stops the reading.
		late := peekCacheAhead(ctx, j.Cache, j.Service, j.CacheTTL, j.CacheOptions, stopReading)
		defer late.Close()
		cfg.Cache = late
	} else if j.Cache != "" {
		cstore, closeCache, err := PeekCache(ctx, j.Cache, j.Service, j.CacheTTL, j.CacheOptions)
		if err != nil {
			return estimate.Figures{}, err
		}
		defer closeCache()
		if cstore != nil {
			cfg.Cache = cstore
		}
	}
	jr, err := j.peekJournal(ctx, src, mapper)
	if err != nil {
		return estimate.Figures{}, err // as the run refuses
	}
	if jr != nil {
		defer func() { _ = jr.Close() }()
		cfg.Journal = jr
		log.Info().Str("journal", jr.Path()).Int64("rows", jr.Info().Rows).Msg("--resume: the journal's rows are counted as answered")
	}
	x := pipeline.NewEstimator(cfg)
	defer func() { _ = x.Close() }()
	each := func(row record.Row, m readers.Mapped) error { return x.Add(ctx, row, m) }
	rep, err := readers.InspectEach(rctx, j.Plan.Info().Name, src, j.Mapping, 5, each)
	if err != nil {
		if cause := context.Cause(rctx); ctx.Err() == nil && cause != nil && !errors.Is(cause, context.Canceled) {
			return estimate.Figures{}, cause // the cache could not be opened
		}
		return estimate.Figures{}, j.Plan.ReadError(ctx, err)
	}
	est, err := x.Estimate(ctx)
	if err != nil {
		if ctx.Err() != nil { // interrupted in the cache's last lookups: exit 130, as in the reading
			return estimate.Figures{}, &InterruptedError{err}
		}
		return estimate.Figures{}, err
	}
	fig := estimate.New(est, j.rate(j.Service.BaseURL == ""), j.Burst, price)
	if err := rep.Print(w); err != nil {
		return fig, err
	}
	return fig, fig.Print(w)
}

// peekJournal is the journal the run would continue, read only (nil if
// none). A dry run does not check the outputs (stdin needs none named, for
// one): where they do not name a journal, none answers.
func (j *Job) peekJournal(ctx context.Context, src readers.Reader, mapper *readers.Mapper) (*journal.Journal, error) {
	if !j.Policy.MayKeep() {
		return nil, nil
	}
	out, review, err := j.Plan.Files()
	if err != nil {
		j.Logger.Debug().Err(err).Msg("no journal: the outputs are not settled")
		return nil, nil
	}
	return j.Policy.Peek(ctx, j.journalPath(out, review), func() (Identity, error) {
		return j.identity(ctx, src, mapper)
	})
}

// keepDecisions refuses to write the review over one in which a person has
// recorded decisions: the same command run again would lose their work.
// A file that is not a review, or cannot be read as one, holds none.
func keepDecisions(ctx context.Context, review string) error {
	if review == "" || review == writers.Stdout {
		return nil
	}
	if _, err := os.Stat(review); err != nil {
		return nil
	}
	v, err := runfile.OpenReview(ctx, review, readers.Options{})
	if err != nil {
		return nil
	}
	defer v.Close()
	for {
		r, err := v.Next(ctx)
		if err != nil {
			return nil
		}
		if d := strings.TrimSpace(r.Get(writers.DecisionColumn)); d != "" {
			return fmt.Errorf("--review %s holds decisions a person made (row %d: %q): apply them first (addrclean apply), "+
				"or move the file away or name another --review; this run would overwrite it", review, r.Row, d)
		}
	}
}
