package main

import (
	"cmp"
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/internal/cliflag"
	"github.com/addrclean/addrclean/internal/logfmt"
	"github.com/addrclean/addrclean/internal/progress"
	"github.com/addrclean/addrclean/internal/samefile"
	"github.com/addrclean/addrclean/pipeline"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/record"
	"github.com/addrclean/addrclean/runs"
	"github.com/addrclean/addrclean/runstats"
	"github.com/addrclean/addrclean/writers"
)

// cmdRun is 'addrclean run': parse the flags into a runs.Job, run it (or
// estimate it: --dry-run), then tell how it ended (the summary, --summary,
// --report) and map the end to an exit code.
func cmdRun(ctx context.Context, args []string, s streams) (err error) {
	o, err := parseRun(args, s)
	if o == nil {
		return err
	}
	// Log lines and the progress bar share stderr: progress.Writer keeps them
	// off each other's line.
	errw := progress.NewWriter(s.err)
	log, err := logfmt.New(errw, s.tty, o.logFormat, o.logLevel)
	if err != nil {
		return usageErrorf("%w", err)
	}
	repeats := logfmt.NewRepeatGuard()
	log = log.Hook(repeats)
	asJSON := logfmt.JSON(o.logFormat, s.tty)
	if asJSON {
		// Every stderr line must stay one JSON object: the final error too,
		// which main would otherwise print as text.
		defer func() {
			if err != nil && !isSilent(err) && err.Error() != "" {
				code := exitCode(err)
				log.Error().Int("exit_code", code).Msg("addrclean: " + err.Error())
				err = withCode(code, nil)
			}
		}()
	}
	defer repeats.Report(log)
	o.plan.WarnPassword(log)
	delim, err := parseDelimiter(o.delimiter)
	if err != nil {
		return usageErrorf("%w", err)
	}
	ropts := readers.Options{Delimiter: delim, Encoding: o.encoding, Sheet: o.sheet, HeaderRow: o.headerRow, Stdin: s.in, Logger: log}
	spec := readers.MappingSpec{
		LineCols: append(splitList(o.lineCols), o.lineCol...),
		City:     o.cityCol, Region: o.regionCol, Postcode: o.postcodeCol, Country: o.countryCol, ID: o.idCol,
		DefaultCountry: o.country, Language: o.language, Prefix: o.prefix,
	}
	if o.report != "" {
		if err := checkReportPath(o.report); err != nil {
			return err
		}
		if err := o.plan.CheckReport(); err != nil {
			return err
		}
	}
	job := o.job(ropts, spec, s, log)
	defer o.plan.Close()
	if err := checkDirs(job.Writes...); err != nil {
		return err
	}
	if o.dryRun {
		return o.estimateRun(ctx, job, s, log)
	}
	job.Progress = func(src readers.Reader) (func(pipeline.Progress), func()) {
		prog := progress.New(errw, src, log, o.noProgress || !s.tty)
		return prog.Update, func() {
			prog.Finish()
			repeats.Report(log) // before the summary, which is the last word
		}
	}
	res, err := job.Run(ctx)
	if err != nil {
		return err
	}
	if res.Outcome.End == runs.OutputsFailed {
		return o.exitError(res.Outcome, res.Stats, res.Err, res.Review, res.Embedded)
	}
	written := res.Outcome.Written()
	printSummary(s.err, asJSON, log, *o, res.Stats, res.Out, res.Review, written)
	// A monitor reading --summary learns of a fatal error too.
	if err := o.writeSummary(res.Stats, res.Out, res.Review); err != nil && written {
		return withCode(exitFatal, err)
	} else if err != nil {
		log.Error().Err(err).Msg("writing the summary")
	}
	if written {
		o.plan.Record(ctx, o.runSummary(res.Stats, res.Out, res.Review), log)
	}
	if o.report != "" && written {
		// The report reads the enriched file back, so stdout has none.
		// An interrupted run still gets its report of the rows it wrote.
		if err := o.writeRunReport(context.WithoutCancel(ctx), &res.Stats); err != nil {
			return err
		}
		log.Info().Str("report", o.report).Msg("report written")
	}
	return o.exitError(res.Outcome, res.Stats, res.Err, res.Review, res.Embedded)
}

// job is the run the options ask for (runs.Job).
func (o *runOptions) job(ropts readers.Options, spec readers.MappingSpec, s streams, log zerolog.Logger) *runs.Job {
	copts := cacheOptions(false, log)
	copts.Lease = o.cacheLease
	return &runs.Job{
		Plan: o.plan, Read: ropts, Mapping: spec, Policy: o.policy, Service: o.service(),
		Write:   writers.Options{RawCells: o.rawCells, MarkCached: o.markCached, Stdout: s.out, BOM: o.bom, Encoding: o.outEncoding},
		Connect: runs.ConnectOptions{TokenTTL: o.tokenTTL, Method: o.method, Workers: o.workers},
		Cache:   o.cache, CacheTTL: o.cacheTTL, CacheOptions: copts,
		Tuning: pipeline.Config{Limit: int64(o.limit), Shard: o.shard, Workers: o.workers,
			Retries: cmp.Or(o.retries, -1), // the pipeline reads 0 as "the default"
			Timeout: o.timeout, MaxWait: o.maxWait,
			LimitErrors: o.errorLimit.set, MaxErrors: o.errorLimit.rows, MaxErrorShare: o.errorLimit.share},
		Rate: o.rate, RateSet: o.rateSet, Burst: o.burst, RateShared: o.rateShared,
		Reads:  []samefile.Use{pathRead("--reference", o.reference), pathRead("--api-key-file", o.apiKeyFile)},
		Writes: []samefile.Use{pathWritten("--summary", o.summary), pathWritten("--report", o.report)},
		Logger: log,
	}
}

// parseRun parses and checks the command line; nil options end the command
// (--help, or an error).
func parseRun(args []string, s streams) (*runOptions, error) {
	o := &runOptions{}
	fs := newRunFlags(o, s.err)
	pos, err := cliflag.Parse(fs, args, runUsage, s.out, true)
	if err != nil {
		return nil, flagError(err)
	}
	if len(pos) != 1 {
		// The error and where help is, not pages of usage above it.
		return nil, usageErrorf("run takes exactly one INPUT, got %d (run 'addrclean run --help' for the flags and examples)", len(pos))
	}
	o.input = pos[0]
	if err := o.setupTables(); err != nil { // before anything can print a DBURL
		return nil, err
	}
	o.rateSet = cliflag.WasSet(fs, "rate")
	o.cacheTTLSet = cliflag.WasSet(fs, "cache-ttl")
	o.priceSet = cliflag.WasSet(fs, "price-per-call")
	o.cacheLeaseSet = cliflag.WasSet(fs, "cache-lease")
	if err := o.validate(); err != nil {
		return nil, err
	}
	if err := o.parseShard(); err != nil {
		return nil, err
	}
	if o.errorLimit, err = parseMaxErrors(o.maxErrors); err != nil {
		return nil, err
	}
	o.policy = runs.Policy{Mode: o.journal, Stdin: o.plan.Info().Stdin, Live: o.baseURL != "",
		Cache: o.cache != "", Resume: o.resume, Restart: o.restart, Keep: o.keepJournal}
	if err := o.policy.Check(); err != nil {
		return nil, err
	}
	return o, nil
}

// exitError is the exit code of how a run ended, and what to do next.
func (o *runOptions) exitError(end runs.Outcome, st runstats.Stats, runErr error, review string, embedded bool) error {
	n := st.RowsWritten
	journalled := map[bool]string{true: "; the finished rows are journalled: fix the cause and run again with --resume"}[end.Resumable]
	switch end.End {
	case runs.OutputsFailed:
		return withCode(exitFatal, fmt.Errorf("finishing outputs: %w%s", end.Err, journalled))
	case runs.Unreachable:
		where := "the embedded service"
		if o.baseURL != "" {
			where = runs.CanonicalURL(o.baseURL)
		}
		return withCode(exitFatal, fmt.Errorf("could not reach %s: %w; the outputs were left as they were%s", where, runErr, journalled))
	case runs.Failed:
		return withCode(exitFatal, describeFatal(runErr, journalled))
	case runs.Interrupted:
		next := "; run the same command with --resume to continue"
		if !end.Resumable {
			next = ". " + noJournalHint(o, embedded)
		}
		return withCode(exitInterrupted, fmt.Errorf("interrupted after %d rows; the outputs hold rows 1 to %d%s", n, n, next))
	case runs.Unavailable:
		again := map[bool]string{false: "run again once it is back", true: "resume with --resume once it is back"}[end.Resumable]
		return withCode(exitFatal, fmt.Errorf("service unavailable: %s (%w); the outputs hold the first %d rows", again, runErr, n))
	case runs.TooManyErrors:
		more := map[bool]string{true: ". To go on, raise --max-errors and run again with --resume: the rows done are journalled, " +
			"and rows that failed after retries are tried again; after fixing the input instead, run it with --restart"}[end.Resumable]
		return withCode(exitFatal, fmt.Errorf("%w (--max-errors %s); the review file %s lists them%s", runErr, o.maxErrors, review, more))
	}
	if st.Actions[writers.ActionError] > 0 {
		return withCode(exitRowErrors, nil)
	}
	return nil
}

// noJournalHint says how to go on after an interrupted run that kept no
// journal: --resume would start from the first row again.
func noJournalHint(o *runOptions, embedded bool) string {
	switch {
	case o.journal == "off":
		return "No journal was kept (--journal off): run the command again to start from the first row"
	case embedded:
		return "No journal is kept against the embedded service (its calls cost nothing): run the command again " +
			"to start from the first row, or pass --journal on to make the run resumable with --resume"
	}
	return "No journal was kept: run the command again to start from the first row"
}

// validate checks flag values that need no I/O.
func (o *runOptions) validate() error {
	switch {
	case o.workers < 1:
		return usageErrorf("--workers %d: want 1 or more", o.workers)
	case o.rate < 0:
		return usageErrorf("--rate %g: want 0 (unlimited) or more", o.rate)
	case o.burst < 1:
		return usageErrorf("--burst %d: want 1 or more", o.burst)
	case o.retries < 0:
		return usageErrorf("--retries %d: want 0 or more", o.retries)
	case o.timeout <= 0:
		return usageErrorf("--timeout %v: want a positive duration such as 30s", o.timeout)
	case o.maxWait < 0:
		return usageErrorf("--max-wait %v: want a duration such as 10m", o.maxWait)
	case o.limit < 0:
		return usageErrorf("--limit %d: want 0 (all rows) or more", o.limit)
	case o.headerRow < 0:
		return usageErrorf("--header-row %d: want the row number of the header, 1 or more", o.headerRow)
	case o.summary == "-": // not a file named "-"
		return usageErrorf("--summary cannot be stdout; give it a path")
	}
	var err error
	if o.price, err = o.parsePrice(); err != nil {
		return err
	}
	if _, err := record.NormaliseEncoding(o.encoding); err != nil {
		return usageErrorf("--encoding: %w", err)
	}
	enc, err := record.NormaliseEncoding(o.outEncoding)
	if err != nil {
		return usageErrorf("--out-encoding: %w", err)
	}
	if o.bom && enc != record.EncodingUTF8 {
		return usageErrorf("--bom is a UTF-8 byte-order mark: it goes with --out-encoding utf-8, not %s", enc)
	}
	return o.cacheFlagsError()
}
