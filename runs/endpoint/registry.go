package endpoint

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/internal/samefile"
	"github.com/addrclean/addrclean/journal"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/table"
)

// Spec is what a command line names: the input, the outputs, and the
// flags that say how to read and write them.
type Spec struct {
	// Input is INPUT as typed: a path, - (stdin), or a name a kind claims.
	Input string
	// Table, Query and Where say what a database input reads; IDCol keys
	// its rows.
	Table, Query, Where, IDCol string
	// Out and Review are -o and --review: paths, or - (stdout) for Out.
	Out, Review string
	// OutTable and ReviewTable are the output tables, in OutDB or, when it
	// is empty, in the input's database.
	OutTable, ReviewTable, OutDB string
	// LockTimeout bounds every lock wait of a set-up or write of a table.
	LockTimeout time.Duration
	// MarkCached adds av_cached to the enriched output.
	MarkCached bool
	// DryRun: nothing is written, so no output needs to be named.
	DryRun bool
	// Report is run --report; OutEncoding is --out-encoding (the report
	// reads a CSV back as UTF-8).
	Report, OutEncoding string
	// JournalDir is --journal-dir: where the journal of a run that writes
	// no file output goes. Empty: JournalDir's default.
	JournalDir string
	// Tuning of table sources and sinks, for tests: zero is the default.
	PageRows, BatchRows int
	Retry               table.Retry
}

// Info is what a run needs to know of its source before it opens it.
type Info struct {
	// Name is the input as logs, errors and summaries show it: never a
	// password.
	Name string
	// Shardable reports a source that --shard may split between runners
	// upserting into the same tables.
	Shardable bool
	// Stdin reports a source read from standard input: it can be read once
	// only, so no journal and named outputs.
	Stdin bool
	// Uses are the files the source reads, for the clash checks.
	Uses []samefile.Use
	// Key identifies what is read, without I/O (a file's path; a
	// database, and its table or query): a run that writes no file names
	// its journal after it.
	Key string
}

// Source is a run's input. Only Identity, Open and Close do I/O.
type Source interface {
	// Info says what the source is.
	Info() Info
	// Check refuses an input that cannot be read, without opening it.
	Check() error
	// Outputs are the file outputs of a run given -o out and --review
	// review: a file input defaults them beside itself.
	Outputs(out, review string) (string, string, error)
	// Identity is what the run's journal records of the input, and the
	// options a resume compares.
	Identity(ctx context.Context) (journal.Input, map[string]string, error)
	// Open starts reading; errors are sorted (*Error).
	Open(ctx context.Context, opts readers.Options, spec readers.MappingSpec, log zerolog.Logger) (readers.Reader, error)
	// ReadError sorts an error met while reading the opened source.
	ReadError(ctx context.Context, err error) error
	// Close releases what Open opened.
	Close() error
}

// Connector is a Source that opens a connection before the outputs are
// opened, and its reads after: a missing SQLite input must not be created
// as an empty output database.
type Connector interface {
	Connect(ctx context.Context) error
}

// Kind is a kind of source, registered by name.
type Kind struct {
	// Name names the kind in errors and docs ("postgres", "sqlite").
	Name string
	// Claims reports whether INPUT names a source of this kind.
	Claims func(input string) bool
	// Plan checks the command line for a source of this kind, without I/O.
	Plan func(spec Spec) (Source, error)
	// Readback plans reading back the enriched output of a run that read
	// from this kind: name is the report's input, outTable its --out-table.
	// Nil when the kind's runs leave no output of their own to read back.
	Readback func(name, outTable string) (Readback, error)
	// Apply plans 'addrclean apply' over the outputs of a run that read
	// from this kind. Nil when apply cannot read them back.
	Apply func(spec ApplySpec) (Applier, error)
}

var (
	mu    sync.RWMutex
	kinds []Kind
)

// Register adds a kind of source; a package registers its kinds in init.
// A name no registered kind claims is a file path.
func Register(k Kind) {
	mu.Lock()
	defer mu.Unlock()
	kinds = append(kinds, k)
}

// lookup is the kind claiming input: the first registered that does, else
// a file.
func lookup(input string) Kind {
	mu.RLock()
	defer mu.RUnlock()
	for _, k := range kinds {
		if k.Claims(input) {
			return k
		}
	}
	return fileKind
}
