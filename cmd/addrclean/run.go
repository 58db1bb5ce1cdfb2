package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/pipeline"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/record"
	"github.com/addrclean/addrclean/runs"
	"github.com/addrclean/addrclean/runstats"
	"github.com/addrclean/addrclean/writers"
)

// cmdRun is 'addrclean run': parse, set up the pipeline.Config (input,
// journal, service, cache, outputs), run, and map the end to an exit code.
func cmdRun(ctx context.Context, args []string, s streams) (err error) {
	o, err := parseRun(args, s)
	if o == nil {
		return err
	}
	// Log lines and the progress bar share stderr: barWriter keeps them
	// off each other's line.
	errw := &barWriter{w: s.err}
	log, err := newLogger(errw, s.tty, o.logFormat, o.logLevel)
	if err != nil {
		return err
	}
	repeats := newRepeatGuard()
	log = log.Hook(repeats)
	asJSON := jsonLogs(o.logFormat, s.tty)
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
	defer repeats.report(log)
	if o.tr != nil {
		warnURLPassword(log, o.tr.src, o.tr.out)
	}
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
		if o.out == "-" && !o.reportsFromTable(o.out) {
			return usageErrorf("--report reads the enriched output back: give -o a path, not -")
		}
	}
	if o.dryRun {
		return o.estimateRun(ctx, ropts, spec, s, log)
	}
	outPath, reviewPath, err := o.outputs(&ropts)
	if err != nil {
		return err
	}
	if err := checkPaths(o.runPaths(outPath, reviewPath)...); err != nil {
		return err
	}
	// The cache is opened first: a locked or damaged one stops the run
	// before anything is read or started.
	var cdb cacheDB
	if o.cache != "" {
		if cdb, err = openCache(ctx, o.cache, o.cacheLease, false, log); err != nil {
			return err
		}
		defer func() {
			if err := cdb.Close(); err != nil {
				log.Error().Err(err).Msg("closing the cache")
			}
		}()
	}
	pacer, err := o.openPacer(ctx, log)
	if err != nil {
		return err
	}
	defer pacer.Close()

	// Deferred before the input's Close, so removed after it.
	removeTemp, err := o.workbookTempDir(&ropts, outPath, reviewPath)
	if err != nil {
		return err
	}
	defer removeTemp()
	defer o.closeTables()
	src, err := o.openInput(ctx, ropts, spec)
	if err != nil {
		return err
	}
	defer src.Close()
	mapper, err := readers.MapperFor(src, spec)
	if err != nil {
		return inputError(fmt.Errorf("%s: %w", o.input, err))
	}
	logReading(log, o.input, src, mapper)
	// Check everything, then change anything: the output tables are
	// checked and set up before the journal is touched or a call paid.
	if err := o.prepareTables(ctx, mapper.Columns()["id"], log); err != nil {
		return err
	}
	run, err := o.policy.Open(o.journalPathFor(outPath, reviewPath), func() (runs.Identity, error) {
		return runIdentity(ctx, *o, src, mapper)
	}, []string{outPath, reviewPath}, log)
	if err != nil {
		return err
	}
	defer run.Abandon()
	conn, err := connect(ctx, connectOptions{
		baseURL: o.baseURL, apiKeyFile: o.apiKeyFile, apiKeyFlag: o.apiKeyFlag, reference: o.reference,
		tokenTTL: o.tokenTTL, method: o.method, workers: o.workers,
	}, log)
	if err != nil {
		return err
	}
	pcache, logCached, err := o.cacheStore(cdb, conn.embedded, log)
	if err != nil {
		return err
	}
	rate := o.rate
	if conn.embedded && !o.rateSet {
		rate = 0 // the embedded service has no quota to respect
	}
	wopts := writers.Options{RawCells: o.rawCells, MarkCached: o.markCached, Stdout: s.out, Logger: log, BOM: o.bom, Encoding: o.outEncoding,
		IDColumn: mapper.Columns()["id"]} // the review shows the id beside row
	outs, err := o.openAllOutputs(ctx, src, mapper, outPath, reviewPath, wopts, log)
	if err != nil {
		return err
	}
	outPath, reviewPath = o.shownOutputs(outPath, reviewPath)

	prog := newProgress(errw, src, log, o.noProgress || !s.tty)
	stats, runErr := pipeline.Run(ctx, pipeline.Config{
		Source: src, Limit: int64(o.limit), Shard: o.shard, Mapper: mapper, Verifier: conn.client, Limiter: newLimiter(rate, o.burst, pacer),
		Outputs: outs, Workers: o.workers, Retries: cmp.Or(o.retries, -1), // the pipeline reads 0 as "the default"
		Timeout: o.timeout, MaxWait: o.maxWait, Cache: pcache, Logger: log, Progress: prog.update, Journal: run.Journal(),
		LimitErrors: o.errorLimit.set, MaxErrors: o.errorLimit.rows, MaxErrorShare: o.errorLimit.share,
	})
	prog.finish()
	repeats.report(log) // before the summary, which is the last word
	stats.TokenRefreshes = conn.client.Stats().TokenRefreshes
	logCached(stats.CacheHits)

	end := run.Settle(outs, &stats, runErr)
	if end.End == runs.OutputsFailed {
		return o.exitError(end, stats, runErr, reviewPath, conn.embedded)
	}
	written := end.Written()
	if !written {
		outPath, reviewPath = "", "" // none was written, so none is named
	}
	printSummary(s.err, asJSON, log, *o, stats, outPath, reviewPath, written)
	// A monitor reading --summary learns of a fatal error too.
	if err := o.writeSummary(stats, outPath, reviewPath); err != nil && written {
		return withCode(exitFatal, err)
	} else if err != nil {
		log.Error().Err(err).Msg("writing the summary")
	}
	if written {
		o.recordRun(ctx, stats, outPath, reviewPath, log)
	}
	if o.report != "" && written {
		// The report reads the enriched file back, so stdout has none.
		// An interrupted run still gets its report of the rows it wrote.
		if err := o.writeRunReport(context.WithoutCancel(ctx), &stats); err != nil {
			return err
		}
		log.Info().Str("report", o.report).Msg("report written")
	}
	return o.exitError(end, stats, runErr, reviewPath, conn.embedded)
}

// parseRun parses and checks the command line; nil options end the command
// (--help, or an error).
func parseRun(args []string, s streams) (*runOptions, error) {
	o := &runOptions{}
	fs := newRunFlags(o, s.err)
	pos, err := parseFlags(fs, args, runUsage, s.out, true)
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
	// The input is the first thing to get right: a complaint about the
	// output name derived from an .xls input would be the wrong one.
	if !o.isTableSource() {
		if err := readers.CheckPath(o.input); err != nil {
			return nil, withCode(exitUsage, err)
		}
	}
	o.rateSet = flagWasSet(fs, "rate")
	o.cacheTTLSet = flagWasSet(fs, "cache-ttl")
	o.priceSet = flagWasSet(fs, "price-per-call")
	o.cacheLeaseSet = flagWasSet(fs, "cache-lease")
	if err := o.validate(); err != nil {
		return nil, err
	}
	if err := o.parseShard(); err != nil {
		return nil, err
	}
	if o.errorLimit, err = parseMaxErrors(o.maxErrors); err != nil {
		return nil, err
	}
	o.policy = runs.Policy{Mode: o.journal, Stdin: o.input == "-", Live: o.baseURL != "",
		Resume: o.resume, Restart: o.restart, Keep: o.keepJournal}
	if err := o.policy.Check(); err != nil {
		return nil, err
	}
	return o, nil
}

// outputs are the output paths, checked, and what they ask of the reader.
func (o *runOptions) outputs(ropts *readers.Options) (out, review string, err error) {
	out, review, err = o.resolveOutputs()
	if err != nil {
		return "", "", err
	}
	for _, p := range []struct{ flag, path string }{{"--out", out}, {"--review", review}} {
		if p.path == "" || p.path == "-" {
			continue
		}
		// The writer would fail later, on a hidden temporary file in it.
		dir := filepath.Dir(p.path)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return "", "", usageErrorf("%s %s: the directory %s does not exist", p.flag, p.path, dir)
		}
		// An XLSX output keeps the input's numbers and dates typed; reading
		// the types costs a second pass over the sheet, so only then.
		if f, err := writers.FormatFromPath(p.path); err == nil && f == writers.XLSX {
			ropts.CellTypes = true
		}
	}
	if o.report != "" && out == "" && !o.reportsFromTable(out) {
		return "", "", usageErrorf("--report reads the run's enriched output back: give -o PATH or --out-table NAME")
	}
	if enc, _ := record.NormaliseEncoding(o.outEncoding); o.report != "" && enc != record.EncodingUTF8 {
		if f, _ := writers.FormatFromPath(out); f == writers.CSV {
			return "", "", usageErrorf("--report reads the enriched CSV back as UTF-8: drop --out-encoding %s (use --bom for Excel), or write -o .xlsx", o.outEncoding)
		}
	}
	return out, review, nil
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
		if msg := describeFatal(runErr); msg != "" {
			return withCode(exitFatal, fmt.Errorf("%s (%w)%s", msg, runErr, journalled))
		}
		return withCode(exitFatal, fmt.Errorf("%w%s", runErr, journalled))
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

// runIdentity is what the run's journal is written for.
func runIdentity(ctx context.Context, o runOptions, src readers.Reader, mapper *readers.Mapper) (runs.Identity, error) {
	in, err := o.inputIdentity(ctx)
	if err != nil {
		return runs.Identity{}, err
	}
	id := runs.Identity{Input: in, Columns: mapper.Columns(), Source: src, BaseURL: o.baseURL, Extra: map[string]string{}}
	id.Encoding, _ = record.NormaliseEncoding(o.encoding) // validate has checked it
	if o.baseURL == "" {
		ns, err := cacheNamespace(o, true)
		if err != nil {
			return runs.Identity{}, err
		}
		id.Embedded = strings.TrimPrefix(ns.ID, "embedded-")
	}
	o.tableMeta(id.Extra)
	if sh := o.shard.String(); sh != "" {
		// A shard resumes its own rows only.
		id.Extra["--shard"] = sh
	}
	return id, nil
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
	if err := o.rateSharedError(); err != nil {
		return err
	}
	return o.cacheFlagsError()
}

// outputExt is the extension of the default outputs for an input: the same
// format, spelled as the writers know it.
func outputExt(inputExt string) string {
	switch strings.ToLower(inputExt) {
	case ".xlsm":
		return ".xlsx" // a macro workbook's outputs carry no macros
	case ".tab":
		return ".tsv"
	}
	return inputExt
}

// outputPaths works out --out and --review, defaulting to
// <input-stem>.cleaned.<ext> and <input-stem>.review.<ext> beside the input.
func (o *runOptions) outputPaths() (out, review string, err error) {
	out, review = o.out, o.review
	if o.input == "-" && (out == "" || review == "") {
		return "", "", usageErrorf("reading stdin: pass -o PATH (or -o - for stdout) and --review PATH")
	}
	ext := filepath.Ext(o.input)
	stem := strings.TrimSuffix(o.input, ext)
	if out == "" {
		out = stem + ".cleaned" + outputExt(ext)
	}
	if review == "" {
		review = stem + ".review" + outputExt(ext)
	}
	for _, p := range []struct{ flag, path string }{{"--out", out}, {"--review", review}} {
		if _, err := writers.FormatFromPath(p.path); err != nil {
			return "", "", usageErrorf("%s %s: %w", p.flag, p.path, err)
		}
	}
	if review == "-" {
		return "", "", usageErrorf("--review cannot be stdout; give it a path")
	}
	return out, review, nil
}

// openOutputs opens the enriched and review writers; a CSV output keeps the
// input's delimiter unless its own extension says otherwise.
func openOutputs(src readers.Reader, outPath, reviewPath string, opts writers.Options) ([]writers.Writer, error) {
	var inDelim rune
	if d, ok := src.(readers.Describer); ok && d.Info().Format == readers.FormatCSV {
		inDelim = d.Info().Delimiter
	}
	optsFor := func(path string) writers.Options {
		o := opts
		if strings.EqualFold(filepath.Ext(path), ".csv") || strings.EqualFold(filepath.Ext(path), ".txt") || path == "-" {
			o.Delimiter = inDelim
		}
		return o
	}
	code := func(err error) int {
		if errors.Is(err, writers.ErrTooWide) {
			return exitUsage // the output's format must change
		}
		return exitFatal
	}
	enriched, err := writers.NewEnriched(outPath, src.Header(), optsFor(outPath))
	if err != nil {
		return nil, withCode(code(err), fmt.Errorf("--out: %w", err))
	}
	review, err := writers.NewReview(reviewPath, src.Header(), optsFor(reviewPath))
	if err != nil {
		_ = enriched.Abort()
		return nil, withCode(code(err), fmt.Errorf("--review: %w", err))
	}
	return []writers.Writer{enriched, review}, nil
}

// inputError sorts a problem found opening or inspecting the input: a
// column mapping that does not fit the header, a --sheet the workbook does
// not have, an extension that cannot be read are usage errors (exit 2: the
// command must change), anything else about the file is fatal (exit 1).
func inputError(err error) error {
	var me *readers.MappingError
	if errors.As(err, &me) || errors.Is(err, readers.ErrNoSheet) || errors.Is(err, readers.ErrUnsupportedFormat) {
		return withCode(exitUsage, err)
	}
	return withCode(exitFatal, err)
}

// workbookTempDir points ropts.TmpDir, for a workbook input, at a locked
// directory beside the first file of outputs (or in the system's temporary
// directory when none is a file: runs.InputTempDir), so that a killed
// run's excelize files are removed by the next run. The returned func
// removes it; the caller defers it before the input's Close.
func (o *runOptions) workbookTempDir(ropts *readers.Options, outputs ...string) (func(), error) {
	tmp, err := runs.InputTempDir(o.input, outputs)
	if err != nil {
		return nil, withCode(exitFatal, err)
	}
	if tmp == nil {
		return func() {}, nil
	}
	ropts.TmpDir = tmp.Path()
	return func() { _ = tmp.Remove() }, nil
}
