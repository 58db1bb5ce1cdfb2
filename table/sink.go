package table

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/writers"
)

// VerifiedAt is the sink column holding the time of the run that wrote a
// row.
const VerifiedAt = "verified_at"

// InputLabel is the column of both sinks holding the row's input address as
// the review file's input_label has it.
const InputLabel = "input_label"

// Kind tells the enriched and review sinks apart.
type Kind int

// The sink kinds.
const (
	// Enriched holds one row per input row: the key and the av_ columns.
	Enriched Kind = iota
	// Review holds the rows that need review: the key and the review
	// columns. A row that no longer needs review is deleted from it.
	Review
)

// Defaults of SinkOptions.
const (
	// DefaultBatchRows is how many rows one transaction writes at most.
	DefaultBatchRows = 2000
	// DefaultBatchAge is how long a row waits for its batch at most, so
	// that a slow (live, rate-limited) run still shows progress in its
	// table.
	DefaultBatchAge = 2 * time.Second
)

// SinkOptions describe a sink table.
type SinkOptions struct {
	Kind Kind
	// Key is the key column's name (the source's id column), and KeyType
	// its type when the table is created.
	Key     string
	KeyType Type
	// KeyIndex is the id column's index in the input cells.
	KeyIndex int
	// MarkCached adds av_cached (enriched only).
	MarkCached bool
	// RunTime is written to verified_at of the rows whose verdict time is
	// not known (writers.Result.VerifiedAt).
	RunTime time.Time
	// BatchRows and BatchAge bound a batch (defaults above).
	BatchRows int
	BatchAge  time.Duration
	// Logger receives warnings (rows without an id, duplicate ids).
	Logger zerolog.Logger
}

// Columns returns the columns a sink of kind k writes after its key.
func Columns(k Kind, markCached bool) []Column {
	var cols []Column
	if k == Review {
		for _, c := range writers.ReviewColumns {
			cols = append(cols, Column{Name: c, Type: Text})
		}
		cols = append(cols, Column{Name: writers.ChangesColumn, Type: Text})
		// The person's columns: created empty, kept across nightly runs
		// while the row's input is unchanged (see UpsertSets).
		for _, c := range writers.DecisionColumns {
			cols = append(cols, Column{Name: c, Type: Text, Kept: true})
		}
	} else {
		for _, c := range writers.EnrichedColumns {
			t := Text
			switch c {
			case "av_complete", "av_lines_amended", "av_city_amended", "av_region_amended", "av_postcode_amended":
				t = Bool
			case "av_latitude", "av_longitude":
				t = Float
			}
			cols = append(cols, Column{Name: c, Type: t})
		}
		cols = append(cols, Column{Name: writers.ChangesColumn, Type: Text})
		if markCached {
			cols = append(cols, Column{Name: writers.CachedColumn, Type: Bool, Stamp: true})
		}
		// The address verified: the out-table holds no input columns, so
		// this is how addrclean apply tells that a row changed since.
		cols = append(cols, Column{Name: InputLabel, Type: Text})
	}
	return append(cols, Column{Name: VerifiedAt, Type: Timestamp, Stamp: true})
}

// Sink upserts results into a table, keyed by the input's id column: a
// writers.Writer. Rows are written in batches, one transaction each, so a
// killed run leaves whole batches; since every write is an upsert by key, a
// resumed or repeated run updates those rows in place and never duplicates
// them. When ids repeat in the input, the last row wins.
type Sink struct {
	mu     sync.Mutex
	t      Target
	name   string
	opts   SinkOptions
	cols   []Column
	ops    []op
	pend   map[string]int
	oldest time.Time
	// first and last are the rows of the batch filling, to name a batch
	// the database refuses.
	first, last int
	// answered is set by the first row with an answer: until then only a
	// full batch is written, so that a run that never reaches the service
	// (every row Error) leaves the table as the last run left it.
	answered bool
	// inflight receives the result of the batch being written, nil when
	// none: one batch is written while the next fills, so the run does not
	// wait for the database (memory holds two batches at most).
	inflight chan error
	err      error
	state    int

	counts   Counts // of the batches written
	repeated int64  // ids repeated within a batch
	noKey    int64
	noKeyLog int
}

type op struct {
	key string
	rec []any // nil: delete
}

const (
	sinkOpen = iota
	sinkClosed
	sinkAborted
)

var errSinkClosed = errors.New("the table output is closed")

var _ writers.Writer = (*Sink)(nil)

// NewSink prepares table n of db (see OpenTarget) and returns a sink
// writing to it; name is how messages call it.
func NewSink(ctx context.Context, db Database, n Name, name string, opts SinkOptions) (*Sink, error) {
	if opts.BatchRows <= 0 {
		opts.BatchRows = DefaultBatchRows
	}
	if opts.BatchAge <= 0 {
		opts.BatchAge = DefaultBatchAge
	}
	// Databases keep microseconds: the run's time must read back equal.
	opts.RunTime = opts.RunTime.Truncate(time.Microsecond)
	cols := Columns(opts.Kind, opts.MarkCached)
	for _, c := range cols {
		if strings.EqualFold(c.Name, opts.Key) {
			return nil, fmt.Errorf("%s: the id column %q has the name of a column the output adds", name, opts.Key)
		}
	}
	err := Prepare(ctx, db, []Output{{Name: n, Key: opts.Key, KeyType: opts.KeyType, Cols: cols, Deletes: opts.Kind == Review}})
	if err != nil {
		return nil, err
	}
	t, err := db.Target(ctx, n, opts.Key, cols)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	opts.Logger = opts.Logger.With().Str("output", name).Logger()
	return &Sink{t: t, name: name, opts: opts, cols: cols, pend: map[string]int{}}, nil
}

// Write adds one result to the batch, and writes the batch when it is full
// or old. A review sink upserts the rows that need review and deletes the
// others (a row fixed since the last run leaves the review table).
func (s *Sink) Write(ctx context.Context, r writers.Result) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.state != sinkOpen:
		return fmt.Errorf("write %s: %w", s.name, errSinkClosed)
	case s.err != nil:
		return s.err
	}
	key := ""
	if s.opts.KeyIndex >= 0 && s.opts.KeyIndex < len(r.Cells) {
		key = strings.TrimSpace(r.Cells[s.opts.KeyIndex])
	}
	if key == "" {
		s.noKey++
		if s.noKeyLog < 10 {
			s.noKeyLog++
			s.opts.Logger.Warn().Int("row", r.Row).Msg("row has no id: it is in no table output")
		}
		return nil
	}
	var rec []any
	if s.opts.Kind == Review {
		if writers.NeedsReview(r) {
			rec = reviewValues(r)
		}
	} else {
		rec = enrichedValues(r, s.cols, s.opts.MarkCached)
	}
	if rec != nil {
		rec = append(rec, s.verifiedAt(r))
	}
	if i, ok := s.pend[key]; ok {
		if rec != nil && s.ops[i].rec != nil {
			s.repeated++
		}
		s.ops[i].rec = rec // the last row of an id wins
	} else {
		if len(s.ops) == 0 {
			s.oldest, s.first = time.Now(), r.Row
		}
		s.pend[key] = len(s.ops)
		s.ops = append(s.ops, op{key: key, rec: rec})
	}
	s.last = r.Row
	if r.Response != nil {
		s.answered = true
	}
	if len(s.ops) >= s.opts.BatchRows || (s.answered && time.Since(s.oldest) >= s.opts.BatchAge) {
		if err := s.flush(ctx, false); err != nil {
			s.err = fmt.Errorf("write %s: %w", s.name, err)
			return s.err
		}
	}
	return nil
}

// flush starts writing the batch in one transaction, once the batch before
// it is written (a failure of that one is returned); with wait it also
// waits for this one. Batches are committed in order, so the last row of an
// id wins across batches too.
func (s *Sink) flush(ctx context.Context, wait bool) error {
	if err := s.wait(); err != nil {
		return err
	}
	if len(s.ops) == 0 {
		return nil
	}
	recs := make([]Record, 0, len(s.ops))
	var del []string
	for _, o := range s.ops {
		if o.rec == nil {
			del = append(del, o.key)
		} else {
			recs = append(recs, Record{Key: o.key, Values: o.rec})
		}
	}
	clear(s.pend)
	s.ops = s.ops[:0]
	done := make(chan error, 1)
	// The rows are results already paid for: the write goes on after an
	// interrupt.
	wctx := context.WithoutCancel(ctx)
	first, last := s.first, s.last
	go func() {
		n, err := s.t.Write(wctx, recs, del)
		s.counts.Add(n) // read only after wait, which orders it
		if err != nil {
			// Reported by the write of a later row, or by Close.
			err = fmt.Errorf("the batch of rows %d to %d: %w", first, last, err)
		}
		done <- err
	}()
	s.inflight = done
	if wait {
		return s.wait()
	}
	return nil
}

// wait waits for the batch being written, if any.
func (s *Sink) wait() error {
	if s.inflight == nil {
		return nil
	}
	err := <-s.inflight
	s.inflight = nil
	return err
}

// Close writes the last batch and releases the table. It warns about rows
// without an id and about ids that repeat (the last row of an id wins).
func (s *Sink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case sinkClosed:
		return nil
	case sinkAborted:
		return fmt.Errorf("close %s: %w", s.name, errSinkClosed)
	}
	if s.err != nil {
		s.state = sinkAborted
		_ = s.wait()
		_ = s.t.Close()
		return s.err
	}
	// The rows are committed batch by batch, so writing the last one is
	// done even if the run is cancelled now.
	ctx := context.Background()
	err := s.flush(ctx, true)
	if n := s.counts.Repeated + s.repeated; err == nil && n > 0 {
		s.opts.Logger.Warn().Int64("rows", n).
			Msgf("%d row(s) repeat the id of an earlier row: the table holds the last row of each id", n)
	}
	if err == nil {
		c := s.counts
		s.opts.Logger.Info().Int64("inserted", c.Inserted).Int64("updated", c.Updated).Int64("unchanged", c.Unchanged).
			Int64("deleted", c.Deleted).Msg("table written")
	}
	if s.noKey > 0 {
		s.opts.Logger.Warn().Int64("rows", s.noKey).Msgf("%d row(s) have no id and are in no table output", s.noKey)
	}
	if cerr := s.t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		s.state = sinkAborted
		return fmt.Errorf("close %s: %w", s.name, err)
	}
	s.state = sinkClosed
	return nil
}

// Abort drops the batch not yet written and releases the table. The
// batches written before stay: they are finished rows, and upserts keep a
// later run from duplicating them.
func (s *Sink) Abort() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != sinkOpen {
		return nil
	}
	s.state = sinkAborted
	s.ops = nil
	_ = s.wait() // a batch already under way is committed: it holds finished rows
	return s.t.Close()
}

// verifiedAt is the verified_at of r: when the service gave its verdict,
// or the run's time when that is not known.
func (s *Sink) verifiedAt(r writers.Result) time.Time {
	if r.VerifiedAt.IsZero() {
		return s.opts.RunTime
	}
	// Databases keep microseconds: the time must read back equal.
	return r.VerifiedAt.Truncate(time.Microsecond)
}

// Counts returns what the sink's writes did to its table; complete once
// Close has returned.
func (s *Sink) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// enrichedValues are the av_ columns of r, typed, in the order of
// writers.EnrichedColumns: the values of the enriched file, with booleans
// as booleans, coordinates as floats, and NULL where the file has an empty
// cell. cols are the sink's columns (Columns(Enriched, markCached)), which
// begin with those of writers.EnrichedColumns: built once per sink, not
// once per row.
func enrichedValues(r writers.Result, cols []Column, markCached bool) []any {
	text := writers.EnrichedValues(r)
	vals := make([]any, 0, len(text)+4)
	for i, c := range cols[:len(text)] {
		vals = append(vals, typed(text[i], c.Type))
	}
	vals = append(vals, writers.Changes(r))
	if markCached {
		vals = append(vals, r.FromCache)
	}
	return append(vals, typed(r.InputLabel, Text))
}

// typed is the value of the cell s in a column of type t: NULL for an
// empty cell or one that does not read as t.
func typed(s string, t Type) any {
	if s == "" {
		return nil
	}
	switch t {
	case Bool:
		switch s {
		case "true":
			return true
		case "false":
			return false
		}
		return nil
	case Float:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil
		}
		return f
	}
	return s
}

// reviewValues are the review columns of r (writers.ReviewColumns), then
// av_changes.
func reviewValues(r writers.Result) []any {
	text := writers.ReviewValues(r)
	vals := make([]any, len(text), len(text)+1)
	for i, t := range text {
		vals[i] = typed(t, Text)
	}
	return append(vals, writers.Changes(r))
}
