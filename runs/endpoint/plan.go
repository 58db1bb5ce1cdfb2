package endpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/internal/samefile"
	"github.com/addrclean/addrclean/journal"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/record"
	"github.com/addrclean/addrclean/report"
	"github.com/addrclean/addrclean/writers"
)

// Plan is a run's source and sinks, checked: New makes one without I/O,
// Open opens them, Close releases them.
type Plan struct {
	spec   Spec
	src    Source
	tables *tableSinks // nil without table outputs
	files  fileSinks   // set by Outputs
	tmp    *writers.TempDir
}

// New checks the input and outputs of a command line, without I/O: the
// input's kind first (its flags), then the output tables, then whether the
// input can be read at all.
func New(s Spec) (*Plan, error) {
	src, err := lookup(s.Input).Plan(s)
	if err != nil {
		return nil, err
	}
	p := &Plan{spec: s, src: src}
	if p.tables, err = planTables(s, src); err != nil {
		return nil, err
	}
	if err := src.Check(); err != nil {
		return nil, err
	}
	return p, nil
}

// Info says what the source is.
func (p *Plan) Info() Info { return p.src.Info() }

// WarnPassword warns, once, when a database URL of the plan holds a
// password: the command line is readable by every user of the machine
// (ps) for as long as the command runs.
func (p *Plan) WarnPassword(log zerolog.Logger) {
	if in, ok := p.src.(database); (ok && in.URL().HasPassword) || (p.tables != nil && p.tables.u.HasPassword) {
		log.Warn().Msg(PasswordWarning)
	}
}

// PasswordWarning is the warning of a password in a database URL.
const PasswordWarning = "the DBURL holds a password, which every user of this machine can read in the process list " +
	"while the command runs: put it in PGPASSWORD or ~/.pgpass instead"

// fromTable reports whether run --report reads the out-table back: a run
// with an out-table and no enriched file.
func (p *Plan) fromTable(out string) bool {
	return (out == "" || out == writers.Stdout) && p.tables != nil && p.tables.outName.Table != ""
}

// CheckReport refuses --report when the enriched output cannot be read
// back: it goes to stdout.
func (p *Plan) CheckReport() error {
	if p.spec.Out == writers.Stdout && !p.fromTable(p.spec.Out) {
		return usagef("--report reads the enriched output back: give -o a path, not -")
	}
	return nil
}

// Outputs settles the file outputs (out, review; either may be empty when
// tables take the results), checks them, and sets what they ask of the
// reader in ropts.
func (p *Plan) Outputs(ropts *readers.Options) (out, review string, err error) {
	out, review, err = p.Files()
	if err != nil {
		return "", "", err
	}
	for _, o := range []struct{ flag, path string }{{"--out", out}, {"--review", review}} {
		if o.path == "" || o.path == writers.Stdout {
			continue
		}
		// The writer would fail later, on a hidden temporary file in it.
		dir := filepath.Dir(o.path)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return "", "", usagef("%s %s: the directory %s does not exist", o.flag, o.path, dir)
		}
		// An XLSX output keeps the input's numbers and dates typed; reading
		// the types costs a second pass over the sheet, so only then.
		if f, err := writers.FormatFromPath(o.path); err == nil && f == writers.XLSX {
			ropts.CellTypes = true
		}
	}
	if p.spec.Report != "" && out == "" && !p.fromTable(out) {
		return "", "", usagef("--report reads the run's enriched output back: give -o PATH or --out-table NAME")
	}
	if enc, _ := record.NormaliseEncoding(p.spec.OutEncoding); p.spec.Report != "" && enc != record.EncodingUTF8 {
		if f, _ := writers.FormatFromPath(out); f == writers.CSV {
			return "", "", usagef("--report reads the enriched CSV back as UTF-8: drop --out-encoding %s (use --bom for Excel), or write -o .xlsx", p.spec.OutEncoding)
		}
	}
	return out, review, nil
}

// Files are the file outputs (out, review; either may be empty when tables
// take the results), checked without looking at the disk.
func (p *Plan) Files() (string, string, error) {
	out, review, err := p.src.Outputs(p.spec.Out, p.spec.Review)
	if err == nil {
		p.files = fileSinks{out: out, review: review}
		err = p.files.check()
	}
	if err != nil {
		return "", "", err
	}
	return out, review, nil
}

// InputUses are the files the input is read from, for the clash checks.
func (p *Plan) InputUses() []samefile.Use { return p.src.Info().Uses }

// OutputUses are the files written: the database of the output tables,
// the enriched and review files.
func (p *Plan) OutputUses(out, review string) []samefile.Use {
	var uses []samefile.Use
	if p.tables != nil {
		uses = append(uses, dbUse(p.tables.flag, p.tables.u, true))
	}
	return append(uses, samefile.Use{Name: "--out", Path: out, Role: samefile.Write},
		samefile.Use{Name: "--review", Path: review, Role: samefile.Write})
}

// JournalPath is the journal of the run: beside the file outputs, or, for
// a run whose outputs are all tables (or -o - alone), one in the journal
// directory (Spec.JournalDir, else DefaultJournalDir) named after those
// tables (and shard, when set). It creates nothing: the run creates the
// directory (JournalDir) where it creates the journal, so that a dry run
// or a refused one leaves none.
func (p *Plan) JournalPath(out, review, shard string) string {
	if besideOutputs(out, review) {
		if out == "" {
			out = writers.Stdout
		}
		return journalBeside(out, review)
	}
	id := "-\x00" + p.src.Info().Key // -o - alone: the journal goes with the source
	if t := p.tables; t != nil {
		id = t.u.Display + "\x00" + t.outName.String() + "\x00" + t.revName.String()
	}
	if shard != "" {
		// Shards of one set run side by side on one machine too: each
		// keeps its own journal, and locks only its own.
		id += "\x00shard " + shard
	}
	h := sha256.Sum256([]byte(id))
	return filepath.Join(p.JournalDir(out, review), "tables-"+hex.EncodeToString(h[:8])+".journal")
}

// JournalDir is the directory of JournalPath that the run creates (mode
// 0700) when it creates the journal: --journal-dir, else
// DefaultJournalDir; "" when the journal goes beside the file outputs,
// whose directory the run does not create.
func (p *Plan) JournalDir(out, review string) string {
	switch {
	case besideOutputs(out, review):
		return ""
	case p.spec.JournalDir != "":
		return p.spec.JournalDir
	}
	return DefaultJournalDir()
}

// besideOutputs reports a run whose journal goes beside its file outputs.
func besideOutputs(out, review string) bool {
	return (out != "" && out != writers.Stdout) || review != ""
}

// DefaultJournalDir is where the journal of a run that writes no file
// output goes without --journal-dir: addrclean/journals in the user's cache
// directory ($XDG_CACHE_HOME, else ~/.cache, on Linux), or in the system's
// temporary directory when there is none.
func DefaultJournalDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "addrclean", "journals")
}

// Identity is what the journal records of the input, and the options a
// resume compares.
func (p *Plan) Identity(ctx context.Context) (journal.Input, map[string]string, error) {
	return p.src.Identity(ctx)
}

// Open opens the input (and, with outputs, the database of the output
// tables): the input's database first, so that a missing SQLite input is
// not created as an empty output database, then the outputs', before the
// input is read. Opening changes nothing in an existing database (an
// SQLite file is put in WAL mode by its first write). A workbook input
// unpacks into a locked directory beside the first file of beside (or in
// the system's temporary directory), so that a killed run's files are
// removed by the next run.
func (p *Plan) Open(ctx context.Context, ropts readers.Options, spec readers.MappingSpec, log zerolog.Logger, outputs bool, beside ...string) (readers.Reader, error) {
	tmp, err := inputTempDir(p.src.Info().Name, beside)
	if err != nil {
		return nil, fatal(err)
	}
	if tmp != nil {
		p.tmp, ropts.TmpDir = tmp, tmp.Path()
	}
	if c, ok := p.src.(Connector); ok {
		if err := c.Connect(ctx); err != nil {
			return nil, err
		}
	}
	if outputs && p.tables != nil {
		if err := p.tables.connect(ctx); err != nil {
			return nil, err
		}
	}
	return p.src.Open(ctx, ropts, spec, log)
}

// TmpDir is the directory of the input's temporary files, if it has one.
func (p *Plan) TmpDir() string {
	if p.tmp == nil {
		return ""
	}
	return p.tmp.Path()
}

// ReadError sorts an error met reading the opened input.
func (p *Plan) ReadError(ctx context.Context, err error) error { return p.src.ReadError(ctx, err) }

// Close closes the input, then the output database, then removes the
// input's temporary files.
func (p *Plan) Close() {
	_ = p.src.Close()
	if p.tables != nil {
		p.tables.close()
	}
	if p.tmp != nil {
		_ = p.tmp.Remove()
	}
}

// CheckTables checks the output tables, if any, changing nothing: a
// refusal names the table and what to change. It comes before the journal
// is touched; CreateTables makes the changes once no other check can
// refuse the run.
func (p *Plan) CheckTables(ctx context.Context, idName string) error {
	if p.tables == nil {
		return nil
	}
	return p.tables.check(ctx, p.src, idName)
}

// CreateTables runs the DDL that CheckTables found the output tables need
// (CREATE TABLE, ALTER TABLE ADD COLUMN, the runs table), in one
// transaction, before the first call is paid.
func (p *Plan) CreateTables(ctx context.Context, log zerolog.Logger) error {
	if p.tables == nil {
		return nil
	}
	return p.tables.setup(ctx, log)
}

// OpenOutputs opens the file outputs named (both, for a file input) and
// the output tables, keyed by idName; a CSV output keeps the input's
// delimiter unless its own extension says otherwise.
func (p *Plan) OpenOutputs(ctx context.Context, src readers.Reader, idName string, opts writers.Options, log zerolog.Logger) ([]writers.Writer, error) {
	outs, err := p.files.open(src, opts)
	if err != nil || p.tables == nil {
		return outs, err
	}
	ts, err := p.tables.open(ctx, p.src, src.Header(), idName, log)
	if err != nil {
		for _, w := range outs {
			_ = w.Abort()
		}
		return nil, err
	}
	return append(outs, ts...), nil
}

// open opens the enriched and review files that are named.
func (s fileSinks) open(src readers.Reader, opts writers.Options) ([]writers.Writer, error) {
	var inDelim rune
	if d, ok := src.(readers.Describer); ok && d.Info().Format == readers.FormatCSV {
		inDelim = d.Info().Delimiter
	}
	var outs []writers.Writer
	for _, o := range []struct {
		flag, path string
		open       func(string, []string, writers.Options) (writers.Writer, error)
	}{{"--out", s.out, newEnriched}, {"--review", s.review, newReview}} {
		if o.path == "" {
			continue
		}
		wo := opts
		if ext := filepath.Ext(o.path); strings.EqualFold(ext, ".csv") || strings.EqualFold(ext, ".txt") || o.path == writers.Stdout {
			wo.Delimiter = inDelim
		}
		w, err := o.open(o.path, src.Header(), wo)
		if err != nil {
			for _, w := range outs {
				_ = w.Abort()
			}
			err = fmt.Errorf("%s: %w", o.flag, err)
			if errors.Is(err, writers.ErrTooWide) {
				return nil, usage(err) // the output's format must change
			}
			return nil, fatal(err)
		}
		outs = append(outs, w)
	}
	return outs, nil
}

func newEnriched(path string, header []string, o writers.Options) (writers.Writer, error) {
	return writers.NewEnriched(path, header, o)
}

func newReview(path string, header []string, o writers.Options) (writers.Writer, error) {
	return writers.NewReview(path, header, o)
}

// Shown names the outputs for the summary: files and tables.
func (p *Plan) Shown(out, review string) (string, string) {
	if p.tables == nil {
		return out, review
	}
	return p.tables.shown(out, p.tables.outName), p.tables.shown(review, p.tables.revName)
}

// TableCounts are the rows the output tables took, once closed.
func (p *Plan) TableCounts() []report.TableCounts {
	if p == nil || p.tables == nil {
		return nil
	}
	return p.tables.counts()
}

// Record keeps the run's summary beside its out-table, if it has one, so
// that 'addrclean report' over the table shows the cost without the
// --summary file. A failure is logged.
func (p *Plan) Record(ctx context.Context, sum *report.Summary, log zerolog.Logger) {
	if p.tables != nil {
		p.tables.record(ctx, p.src, sum, log)
	}
}
