package writers

import (
	"context"
	"fmt"
	"sync"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/runstats"
)

// NewEnriched creates the enriched output at path: every row with the input
// columns of header unchanged, then EnrichedColumns, DuplicateColumns and
// ChangesColumn. The format comes from
// the path (see FormatFromPath); the file appears under path only when Close
// succeeds.
//
// av_duplicates and av_first_row need every row's address id, so the rows
// wait in a scratch file beside the output and are written at Close (for
// stdout too); the returned Writer is a DuplicateReporter.
func NewEnriched(path string, header []string, opts Options) (Writer, error) {
	return newWriter(enriched, path, header, opts)
}

// NewReview creates the review output at path, laid out as ReviewLayout
// says (the id column is Options.IDColumn), for the rows that need review. Its
// Write skips the other rows (see NeedsReview), so a caller hands every
// result to both outputs.
func NewReview(path string, header []string, opts Options) (Writer, error) {
	return newWriter(review, path, header, opts)
}

func newWriter(k kind, path string, header []string, opts Options) (Writer, error) {
	format, err := FormatFromPath(path)
	if err != nil {
		return nil, err
	}
	header = append([]string(nil), header...)
	lay := newLayout(k, header, opts.MarkCached, opts.IDColumn)
	opts.Logger = opts.Logger.With().Str("output", string(k)).Logger()
	fw, err := newFormat(format, lay, path, opts)
	if err != nil {
		return nil, err
	}
	g := &guarded{fw: fw, kind: k, path: path, log: opts.Logger, width: len(header), dropsExtra: format != JSONL}
	if k == enriched {
		if g.dup, err = newDupPass(path, dupMemLimit); err != nil {
			_ = fw.discard()
			return nil, err
		}
	}
	return g, nil
}

// newFormat starts the format writer of an output laid out as lay.
func newFormat(format Format, lay *layout, path string, opts Options) (formatWriter, error) {
	switch format {
	case XLSX:
		return newXLSX(lay, path, opts)
	case JSONL:
		return newJSONL(lay, path, opts)
	}
	return newCSV(lay, path, opts)
}

// dupMemLimit is dupMemBytes, lowered by tests to reach the disk path.
var dupMemLimit = dupMemBytes

// addressID is av_address_id of a row.
func addressID(r Result) string {
	if Action(r) == ActionError {
		return ""
	}
	return r.Response.Address.ID
}

// formatWriter is one format's half of a Writer or RowWriter; guarded
// supplies the locking, the state and the review filter.
type formatWriter interface {
	// write appends one row.
	write(r Result) error
	// finish completes the output and commits it; on failure it discards
	// what it wrote.
	finish() error
	// discard drops the output.
	discard() error
	// The rows of an enriched output wait in the duplicate pass until
	// Close, rendered by cells and written by writeCells.
	//
	// cells renders an enriched row as the cells writeCells takes, with
	// the duplicate cells (at dupCols) empty.
	cells(r Result, dst []string) []string
	// writeCells appends one row rendered by cells.
	writeCells(row int, cells []string) error
	// dupCols are the indexes of av_duplicates and av_first_row in cells.
	dupCols() (dup, first int)
}

// guarded implements Writer (and RowWriter, through rows) over a
// formatWriter: it serialises calls, makes the first error sticky, and
// refuses to commit an output after a failed write, so a failed run leaves
// nothing under the final name.
type guarded struct {
	mu    sync.Mutex
	fw    formatWriter
	kind  kind
	path  string
	log   zerolog.Logger
	err   error
	state int
	width int // input header width
	// dropsExtra is true for the formats that leave out cells past the
	// header (CSV and XLSX: the appended columns follow the header).
	dropsExtra bool
	wide       warner
	wideRows   int // rows written whose extra cells were left out
	// dup holds an enriched output's rows until Close (nil for the
	// others).
	dup   *dupPass
	found runstats.Duplicates
	buf   []string
}

// Duplicates returns the duplicate groups found by Close (enriched only).
func (g *guarded) Duplicates() runstats.Duplicates {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.found
}

// Write appends r, or skips it when this is a review output and r needs no
// review.
func (g *guarded) Write(ctx context.Context, r Result) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.state == aborted, g.state == committed:
		return fmt.Errorf("write %s: %w", g.path, errClosed)
	case g.err != nil:
		return g.err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("write %s: %w", g.path, err)
	}
	if g.kind == review && !NeedsReview(r) {
		return nil
	}
	if extra := len(r.Cells) - g.width; extra > 0 && g.dropsExtra {
		g.wideRows++
		if ok, last := g.wide.allow(); ok {
			ev := g.log.Warn().Int("row", r.Row).Int("extra_cells", extra)
			if last {
				ev = ev.Bool("further_warnings_suppressed", true)
			}
			ev.Msg("row has more cells than the header; the extra cells are left out")
		}
	}
	var err error
	if g.dup != nil {
		g.buf = g.fw.cells(r, g.buf[:0])
		err = g.dup.add(r.Row, addressID(r), g.buf)
	} else {
		err = g.fw.write(r)
	}
	if err != nil {
		g.err = fmt.Errorf("write %s: %w", g.path, err)
		return g.err
	}
	return nil
}

// release drops the scratch files of the duplicate pass.
func (g *guarded) release() {
	if g.dup != nil {
		g.dup.close()
		g.dup = nil
	}
}

// Close completes the output and moves it into place. After a failed Write
// it discards the output and returns that failure. A CSV or XLSX output that
// left out cells past the header logs how many rows did so.
func (g *guarded) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch g.state {
	case committed:
		return nil
	case aborted:
		return fmt.Errorf("close %s: %w", g.path, errAborted)
	}
	if g.wideRows > 0 {
		// The warnings per row stop at warnLimit; this gives the total.
		g.log.Warn().Int("rows", g.wideRows).
			Msgf("%d row(s) had more cells than the header; their extra cells are in no CSV/XLSX output column (JSONL keeps them)", g.wideRows)
	}
	if g.err != nil {
		g.state = aborted
		g.release()
		_ = g.fw.discard()
		return g.err
	}
	if g.dup != nil {
		dc, fc := g.fw.dupCols()
		err := g.dup.flush(dc, fc, g.fw.writeCells)
		g.found = g.dup.found
		g.release()
		if err != nil {
			g.state = aborted
			g.err = fmt.Errorf("write %s: %w", g.path, err)
			_ = g.fw.discard()
			return g.err
		}
	}
	if err := g.fw.finish(); err != nil {
		g.state = aborted
		g.err = err
		return err
	}
	g.state = committed
	return nil
}

// Abort discards the output; after Close it does nothing.
func (g *guarded) Abort() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != open {
		return nil
	}
	g.state = aborted
	g.release()
	return g.fw.discard()
}
