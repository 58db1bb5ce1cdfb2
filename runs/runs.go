// Package runs owns the policy of a run over its journal: whether a run
// keeps one, what makes two runs the same, whether a journal found is
// resumed, restarted or refused, what is left of a run that stops, and the
// temporary outputs a killed run left behind.
package runs

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
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/writers"
)

// UsageError is a refusal that only another command line gets past (a flag
// to add or drop); other errors of this package are fatal to the run.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, args ...any) error { return &UsageError{fmt.Errorf(format, args...)} }

// Policy is what the command line says about the journal.
type Policy struct {
	// Mode is --journal: auto, on or off.
	Mode string
	// Stdin is a run over standard input, which cannot be read twice.
	Stdin bool
	// Live is a run against a live service, where every call is paid for.
	Live bool
	// Resume, Restart and Keep are --resume, --restart and --keep-journal.
	Resume, Restart, Keep bool
}

// Check refuses flags that contradict each other.
func (p Policy) Check() error {
	if p.Resume && p.Restart {
		return usagef("--resume and --restart contradict each other: pass one")
	}
	switch p.Mode {
	case "auto", "on":
	case "off":
		for _, f := range []struct {
			set  bool
			name string
		}{{p.Resume, "--resume"}, {p.Restart, "--restart"}, {p.Keep, "--keep-journal"}} {
			if f.set {
				return usagef("%s is about the journal, and --journal off keeps none: drop one of them", f.name)
			}
		}
	default:
		return usagef("--journal %q: want auto, on or off", p.Mode)
	}
	return nil
}

// Keeps decides whether the run keeps a journal at path, and says why not.
// With --journal auto a run against a live service does, since every call
// is paid for; a run against the embedded service does only when asked to
// resume or when a journal is there already (it might be one to resume),
// since re-verifying costs nothing but time, and journalling about a tenth
// of the run's CPU.
func (p Policy) Keeps(path string) (bool, string) {
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

// JournalPath is the journal beside the enriched output (beside the review
// output when the enriched one goes to stdout).
func JournalPath(out, review string) string {
	if out == "-" {
		return review + ".journal"
	}
	return out + ".journal"
}

// Identity is what makes two runs the same: the input's content and every
// option that changes the answers or the rows. Output options (paths aside,
// which name the journal) may change between runs: outputs are written
// afresh from the journal.
type Identity struct {
	Input journal.Input
	// Columns is the mapping (readers.Mapper.Columns), with the default
	// country and the language.
	Columns map[string]string
	// Encoding is the input's encoding, normalised.
	Encoding string
	// Source tells the delimiter or sheet read, when it is a
	// readers.Describer.
	Source readers.Reader
	// BaseURL is the live service; empty for the embedded one, which
	// answers from its reference's content and its build, wherever the
	// reference file lies: Embedded identifies those.
	BaseURL, Embedded string
	// Extra are more options to compare, by name.
	Extra map[string]string
}

// Meta is the journal's record of id.
func (id Identity) Meta() journal.Meta {
	var mapping []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range id.Columns {
			if k != "default_country" && k != "language" && !yield(k) {
				return
			}
		}
	}) {
		mapping = append(mapping, k+"="+strconv.Quote(id.Columns[k]))
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

// CanonicalURL spells a base URL one way: scheme and host in lower case, no
// trailing slash, no user.
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

// HashInput identifies the input by its content, so that a resumed run
// never mixes the results of two versions of a file.
func HashInput(ctx context.Context, path string) (journal.Input, error) {
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

// Open settles the run's journal before anything is started or written, so
// that a refusal leaves the last run's work as it was. It returns nil when
// the run keeps none (see Keeps; id is then not called: hashing the input
// costs a read of it). Otherwise it opens a new journal, or with --resume
// the one an interrupted run left; it refuses (a UsageError) to resume a
// journal written for another run, and to start afresh over an unfinished
// journal without --resume, since that would pay again for the rows it
// holds. A killed run's temporary outputs are removed either way: a live
// run holds a lock on its own.
func (p Policy) Open(path string, id func() (Identity, error), window int, outputs []string, log zerolog.Logger) (*Run, error) {
	r, err := p.open(path, id, window, log)
	if err == nil {
		for _, o := range outputs {
			for _, f := range writers.RemoveStaleTemps(o) {
				log.Debug().Str("file", f).Msg("removed a temporary output left by an earlier run")
			}
		}
	}
	return r, err
}

func (p Policy) open(path string, id func() (Identity, error), window int, log zerolog.Logger) (*Run, error) {
	switch keep, why := p.Keeps(path); {
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
	meta := who.Meta()
	j, err := journal.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if p.Resume {
			log.Warn().Str("journal", path).Msg("--resume: no journal of an earlier run: starting from the first row")
		}
		j, err = journal.Create(path, meta, window)
		if err != nil {
			return nil, journalError(err)
		}
		return &Run{j: j, keep: p.Keep, log: log}, nil
	case err != nil:
		return nil, journalError(err)
	}
	info := j.Info()
	startOver := info.Headless || p.Restart || (!p.Resume && (info.Complete || info.Rows == 0))
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
	case !p.Resume:
		_ = j.Close()
		return nil, usagef("%s holds %d finished rows of an interrupted run (last written %s): "+
			"run the same command with --resume to continue it without paying for them again, or with --restart to discard them and start afresh",
			path, info.Rows, info.Updated.Format("2006-01-02 15:04:05"))
	}
	if startOver {
		if err := j.Start(meta, window); err != nil {
			_ = j.Close()
			return nil, journalError(err)
		}
		return &Run{j: j, keep: p.Keep, log: log}, nil
	}
	if diff := info.Meta.Diff(meta); len(diff) > 0 {
		_ = j.Close()
		return nil, usagef("--resume: %s was written for a different run: %s. "+
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
	return &Run{j: j, keep: p.Keep, log: log}, nil
}

func journalError(err error) error {
	switch {
	case errors.Is(err, journal.ErrLocked):
		return fmt.Errorf("%w: another run is writing the same outputs", err)
	case errors.Is(err, journal.ErrCorrupt):
		return fmt.Errorf("%w: delete it to start afresh", err)
	}
	return err
}
