package writers

import (
	"context"
	"fmt"
	"slices"
)

// RowWriter writes plain rows of text cells to one output, such as the final
// file of addrclean apply.
type RowWriter interface {
	// Write appends one row; cells beyond the header are dropped, missing
	// ones are empty.
	Write(ctx context.Context, cells []string) error
	// Close completes the output and moves it into place.
	Close() error
	// Abort discards the output; after Close it does nothing.
	Abort() error
}

// NewRows creates a plain output at path with header: CSV, XLSX (sheet
// "Final", continued on "Final 2" ... past a sheet's rows) or JSONL (one
// object per row keyed by the header, as the enriched output keys its
// input), written by the same format writers as the enriched output. The
// file appears under path only when Close succeeds.
func NewRows(path string, header []string, opts Options) (RowWriter, error) {
	format, err := FormatFromPath(path)
	if err != nil {
		return nil, err
	}
	if format == XLSX && len(header) > xlsxMaxCols {
		return nil, fmt.Errorf("%s: %w", path, ErrTooWide)
	}
	fw, err := newFormat(format, newLayout(plain, slices.Clone(header), false, ""), path, opts)
	if err != nil {
		return nil, err
	}
	return rows{&guarded{fw: fw, kind: plain, path: path}}, nil
}

// rows is a RowWriter: plain rows are Results of their cells alone.
type rows struct{ g *guarded }

func (r rows) Write(ctx context.Context, cells []string) error {
	return r.g.Write(ctx, Result{Cells: cells})
}

func (r rows) Close() error { return r.g.Close() }
func (r rows) Abort() error { return r.g.Abort() }
