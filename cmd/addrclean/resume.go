package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/journal"
	"github.com/addrclean/addrclean/pipeline"
	"github.com/addrclean/addrclean/readers"
)

// journalled decides whether the run keeps a journal, and says why not. With
// --journal auto a run against a live service does, since every call is
// paid for; a run against the embedded service does only when asked to
// resume or when a journal is there already (it might be one to resume),
// since re-verifying costs nothing but time, and journalling about a tenth
// of the run's CPU.
func (o *runOptions) journalled(path string) (bool, string) {
	if o.input == "-" {
		return false, "stdin cannot be read twice, so a run over stdin keeps no journal"
	}
	// auto, or on:
	switch o.journal {
	case "off":
		return false, "--journal off"
	case "on":
		return true, ""
	}
	// auto
	if o.baseURL != "" || o.resume || o.restart || o.keepJournal {
		return true, ""
	}
	if _, err := os.Lstat(path); err == nil {
		return true, ""
	}
	return false, "--journal auto keeps none for the embedded service (pass --journal on for one)"
}

// journalPath is the journal beside the enriched output (beside the review
// output when the enriched one goes to stdout).
func journalPath(out, review string) string {
	if out == "-" {
		return review + ".journal"
	}
	return out + ".journal"
}

// runMeta is what a journal is written for: the input's content and every
// option that changes the answers or the rows. Output options (paths
// aside, which name the journal) may change between runs: outputs are
// written afresh from the journal.
func runMeta(ctx context.Context, o runOptions, src readers.Reader, mapper *readers.Mapper) (journal.Meta, error) {
	in, err := o.inputIdentity(ctx)
	if err != nil {
		return journal.Meta{}, withCode(exitFatal, err)
	}
	enc, err := readers.NormaliseEncoding(o.encoding)
	if err != nil {
		return journal.Meta{}, usageErrorf("--encoding: %w", err)
	}
	cols := mapper.Columns()
	var mapping []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range cols {
			if k != "default_country" && k != "language" && !yield(k) {
				return
			}
		}
	}) {
		mapping = append(mapping, k+"="+strconv.Quote(cols[k]))
	}
	opts := map[string]string{
		"column mapping": strings.Join(mapping, " "),
		"--country":      cols["default_country"],
		"--language":     cols["language"],
		"--encoding":     enc,
	}
	if d, ok := src.(readers.Describer); ok {
		info := d.Info()
		if info.Format == readers.FormatCSV {
			opts["--delimiter"] = string(info.Delimiter)
		} else {
			opts["--sheet"] = info.Sheet
		}
	}
	if o.baseURL != "" {
		opts["service"] = canonicalURL(o.baseURL)
	} else {
		// The embedded service answers from its reference's content and its
		// build, wherever the reference file lies.
		ns, err := cacheNamespace(o, true)
		if err != nil {
			return journal.Meta{}, err
		}
		opts["service"] = "embedded, reference and build " + strings.TrimPrefix(ns.ID, "embedded-")
	}
	o.tableMeta(opts)
	return journal.Meta{Input: in, Options: opts}, nil
}

// canonicalURL spells a base URL one way: scheme and host in lower case,
// no trailing slash.
func canonicalURL(s string) string {
	s = strings.TrimRight(s, "/")
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	u.User = nil
	return u.String()
}

// hashInput identifies the input by its content, so that a resumed run
// never mixes the results of two versions of a file.
func hashInput(ctx context.Context, path string) (journal.Input, error) {
	f, err := os.Open(path)
	if err != nil {
		return journal.Input{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, ctxReader{ctx, f})
	if err != nil {
		return journal.Input{}, fmt.Errorf("reading %s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return journal.Input{Path: abs, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// ctxReader stops reading when ctx is done: hashing a large input must not
// hold up Ctrl-C.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// openJournal opens the run's journal: a new one, or with --resume the one
// an interrupted run left. It refuses (exit 2) to resume a journal written
// for another input or other options, and to start afresh over an
// unfinished journal without --resume, since that would pay again for the
// rows it holds.
func openJournal(o runOptions, path string, meta journal.Meta, window int, log zerolog.Logger) (*journal.Journal, error) {
	j, err := journal.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if o.resume {
			log.Warn().Str("journal", path).Msg("--resume: no journal of an earlier run: starting from the first row")
		}
		j, err = journal.Create(path, meta, window)
		if err != nil {
			return nil, journalError(err)
		}
		return j, nil
	case err != nil:
		return nil, journalError(err)
	}
	info := j.Info()
	switch {
	case info.Headless:
		log.Warn().Str("journal", path).Msg("the journal has no intact header (a run was killed while it created it); it holds no rows: starting afresh")
		return startOver(j, meta, window)
	case o.restart:
		if !info.Complete && info.Rows > 0 {
			log.Warn().Str("journal", path).Int64("rows", info.Rows).
				Msgf("--restart: discarding the journal of an interrupted run (%d finished rows); starting from the first row", info.Rows)
		}
		return startOver(j, meta, window)
	}
	if !o.resume {
		if info.Complete || info.Rows == 0 {
			log.Info().Str("journal", path).Msg("replacing the journal of a finished run")
			return startOver(j, meta, window)
		}
		_ = j.Close()
		return nil, usageErrorf("%s holds %d finished rows of an interrupted run (last written %s): "+
			"run the same command with --resume to continue it without paying for them again, or with --restart to discard them and start afresh",
			path, info.Rows, info.Updated.Format("2006-01-02 15:04:05"))
	}
	if diff := info.Meta.Diff(meta); len(diff) > 0 {
		_ = j.Close()
		return nil, usageErrorf("--resume: %s was written for a different run: %s. "+
			"Resume with the same input and options, or pass --restart instead of --resume to discard it and start afresh",
			path, strings.Join(diff, "; "))
	}
	if info.Torn > 0 {
		log.Warn().Str("journal", path).Int64("bytes", info.Torn).
			Msg("journal: dropping a last record torn by the crash; its row is verified again")
	}
	if info.Damaged > 0 {
		log.Warn().Str("journal", path).Int64("damaged", info.Damaged).
			Msgf("journal: %d damaged records skipped; their rows are verified again", info.Damaged)
	}
	if err := j.Continue(window); err != nil {
		_ = j.Close()
		return nil, journalError(err)
	}
	log.Info().Str("journal", path).Int64("rows", info.Rows).Bool("complete", info.Complete).
		Msgf("--resume: the journal holds %d verified rows; they and their duplicates are not sent again", info.Rows)
	return j, nil
}

// startOver empties j for this run.
func startOver(j *journal.Journal, meta journal.Meta, window int) (*journal.Journal, error) {
	if err := j.Start(meta, window); err != nil {
		_ = j.Close()
		return nil, journalError(err)
	}
	return j, nil
}

func journalError(err error) error {
	switch {
	case errors.Is(err, journal.ErrLocked):
		return withCode(exitFatal, fmt.Errorf("%w: another run is writing the same outputs", err))
	case errors.Is(err, journal.ErrCorrupt):
		return withCode(exitFatal, fmt.Errorf("%w: delete it to start afresh", err))
	}
	return withCode(exitFatal, err)
}

// finishJournal keeps or removes the journal after a run: a complete run
// removes it (unless --keep-journal, when it is marked complete); a stopped
// run keeps it for --resume unless it holds nothing. kept reports that a
// journal to resume from is left.
func finishJournal(j *journal.Journal, st pipeline.Stats, keep bool, log zerolog.Logger) (kept bool) {
	if j == nil {
		return false
	}
	path := j.Path()
	var err error
	switch {
	case st.Complete && keep:
		if err = j.Complete(st.RowsWritten); err == nil {
			err = j.Close()
		}
		if err == nil {
			log.Info().Str("journal", path).Msg("--keep-journal: the journal of the finished run is kept")
		}
	case st.Complete || (j.Info().Rows == 0 && !j.Failed()):
		err = j.Remove()
	default:
		// A journal whose last write failed (a full disk) is still good up
		// to that record: a resume drops the torn rest.
		if err := j.Close(); err != nil {
			log.Warn().Str("journal", path).Err(err).Msg("the journal was not closed cleanly; a resume drops any torn last record")
		}
		log.Info().Str("journal", path).Int64("rows", j.Info().Rows).
			Msg("the journal keeps the finished rows: run the same command with --resume to continue")
		return true
	}
	if err != nil {
		log.Error().Err(err).Msg("finishing the journal")
	}
	return false
}

// errorLimit is --max-errors: at most rows Error rows, or at most share of
// the rows written.
type errorLimit struct {
	set   bool
	rows  int64
	share float64
}

// parseMaxErrors reads --max-errors: N rows (0: stop at the first), or P%
// of the rows written.
func parseMaxErrors(s string) (errorLimit, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return errorLimit{}, nil
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || v <= 0 || v > 100 {
			return errorLimit{}, usageErrorf("--max-errors %q: want a share such as 5%% (more than 0, at most 100)", s)
		}
		return errorLimit{share: v / 100}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return errorLimit{}, usageErrorf("--max-errors %q: want a number of rows such as 100, or a share such as 5%%", s)
	}
	return errorLimit{set: true, rows: n}, nil
}
