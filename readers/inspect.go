package readers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/addrclean/addrclean/record"
)

// Report is what a dry run found in an input: how it is read and mapped,
// how many rows it has and how the first rows would be sent.
type Report struct {
	Path    string
	Info    Info
	Header  []string
	Mapping string            // Mapper.Describe
	Columns map[string]string // Mapper.Columns
	Notes   []string          // Mapper.Notes
	// Rows is the number of data rows; NoAddress and NoCountry count the
	// rows that would not be sent for that reason, and LongRows those with
	// more cells than the header.
	Rows, NoAddress, NoCountry, LongRows int
	// SkippedRows counts XLSX rows with no text, which are not data rows.
	SkippedRows int
	// Sample is the first rows as they would be sent.
	Sample []SampleRow
}

// SampleRow is one data row of a Report.
type SampleRow struct {
	Row, Line int
	ID        string
	Mapped    Mapped
}

// Inspect reads the whole input at path, maps every row with spec and
// reports counts and the first sample rows, without calling any service.
func Inspect(ctx context.Context, path string, opts Options, spec MappingSpec, sample int) (*Report, error) {
	r, err := Open(ctx, path, opts)
	if err != nil {
		return nil, err
	}
	rep, err := InspectEach(ctx, path, r, spec, sample, nil)
	if cerr := r.Close(); err == nil && cerr != nil {
		return nil, cerr
	}
	return rep, err
}

// InspectEach is Inspect over a reader the caller opened and closes (a
// database table, say; path is what the report and errors call it),
// calling each (when not nil) with every row and its mapping as it goes,
// so that a dry run counts more in the same pass; an error from each
// stops it.
func InspectEach(ctx context.Context, path string, r Reader, spec MappingSpec, sample int, each func(record.Row, Mapped) error) (*Report, error) {
	m, err := MapperFor(r, spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rep := &Report{
		Path:    path,
		Header:  r.Header(),
		Mapping: m.Describe(),
		Columns: m.Columns(),
		Notes:   m.Notes(),
	}
	if d, ok := r.(Describer); ok {
		rep.Info = d.Info()
	}
	width := len(r.Header())
	for {
		row, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		rep.Rows++
		if len(row.Cells) > width {
			rep.LongRows++
		}
		mp := m.Map(row)
		if each != nil {
			if err := each(row, mp); err != nil {
				return nil, err
			}
		}
		switch {
		case errors.Is(mp.Err, ErrNoAddress):
			rep.NoAddress++
		case errors.Is(mp.Err, ErrNoCountry):
			rep.NoCountry++
		}
		if len(rep.Sample) < sample {
			rep.Sample = append(rep.Sample, SampleRow{Row: row.Num, Line: row.Line, ID: m.ID(row), Mapped: mp})
		}
	}
	if x, ok := r.(*XLSXReader); ok {
		rep.SkippedRows = x.SkippedRows()
	}
	return rep, nil
}

// Print writes the report for people.
func (rep *Report) Print(w io.Writer) error {
	var b strings.Builder
	if rep.Path == "-" {
		b.WriteString("input:       - (standard input)\n")
	} else {
		fmt.Fprintf(&b, "input:       %s\n", rep.Path)
	}
	switch rep.Info.Format {
	case FormatCSV:
		how := "given"
		if rep.Info.DelimiterDetected {
			how = "detected"
		}
		fmt.Fprintf(&b, "format:      CSV, delimiter %s (%s), encoding %s\n", delimName(rep.Info.Delimiter), how, rep.Info.Encoding)
	case FormatXLSX:
		fmt.Fprintf(&b, "format:      XLSX, sheet %q", rep.Info.Sheet)
		if len(rep.Info.Sheets) > 1 {
			fmt.Fprintf(&b, " (sheets: %s)", quoteList(rep.Info.Sheets))
		}
		b.WriteString("\n")
	}
	switch {
	case rep.Info.HeaderDetected:
		fmt.Fprintf(&b, "header:      row %d (detected; %d title row(s) above it skipped; --header-row N to choose another)\n",
			rep.Info.HeaderRow, rep.Info.TitleRows)
	case rep.Info.HeaderRow > 0:
		fmt.Fprintf(&b, "header:      row %d\n", rep.Info.HeaderRow)
	}
	fmt.Fprintf(&b, "columns:     %d: %s\n", len(rep.Header), quoteList(rep.Header))
	fmt.Fprintf(&b, "mapping:\n%s", rep.Mapping)
	fmt.Fprintf(&b, "data rows:   %d\n", rep.Rows)
	fmt.Fprintf(&b, "no address:  %d (not sent; av_error \"no address\", or \"no address line\" and what the row has)\n", rep.NoAddress)
	fmt.Fprintf(&b, "no country:  %d (not sent; av_error \"no country\")\n", rep.NoCountry)
	if rep.LongRows > 0 {
		fmt.Fprintf(&b, "long rows:   %d with more cells than the header (extra cells kept)\n", rep.LongRows)
	}
	if rep.SkippedRows > 0 {
		fmt.Fprintf(&b, "empty rows:  %d skipped (no text in any cell)\n", rep.SkippedRows)
	}
	if len(rep.Sample) > 0 {
		fmt.Fprintf(&b, "first %d rows as they would be sent:\n", len(rep.Sample))
	}
	for _, s := range rep.Sample {
		fmt.Fprintf(&b, "  row %d (line %d)", s.Row, s.Line)
		if s.ID != "" {
			fmt.Fprintf(&b, " id %q", s.ID)
		}
		if s.Mapped.Err != nil {
			fmt.Fprintf(&b, ": not sent: %v\n", s.Mapped.Err)
			continue
		}
		a := s.Mapped.Address
		fmt.Fprintf(&b, ": addressLine=[%s]", quoteList(a.Lines))
		if a.City != "" {
			fmt.Fprintf(&b, " city=%q", a.City)
		}
		if a.Region != "" {
			fmt.Fprintf(&b, " region=%q", a.Region)
		}
		fmt.Fprintf(&b, " country=%q", a.Country)
		if a.Language != "" {
			fmt.Fprintf(&b, " language=%q", a.Language)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func delimName(r rune) string {
	switch r {
	case '\t':
		return "tab"
	case ' ':
		return "space"
	}
	return strconv.QuoteRune(r)
}
