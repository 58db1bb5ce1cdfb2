package readers

import (
	"context"

	"github.com/addrclean/addrclean/api"
)

// Row is one data record of the input.
type Row struct {
	// Num is the 1-based data record number (the header is not counted; a
	// quoted field spanning lines is still one record).
	Num int
	// Line is the physical line (CSV) or sheet row (XLSX) where the record
	// starts, for messages.
	Line int
	// ID is the row's id as its source knows it (a table's id column), for
	// log lines and messages; "" when the source names rows by line only.
	ID string
	// Cells are the record's cells exactly as read, padded with empty strings
	// to the header width when the record is shorter. The slice is owned by
	// the caller.
	Cells []string
	// Types, for a workbook read with Options.CellTypes, tells which cells
	// are numbers or dates (indexed as Cells; cells past its end, and those
	// of kind KindText, are text). It is nil for CSV input and for rows
	// without a number.
	Types []CellType
}

// Reader streams the rows of one input. Next returns io.EOF after the last row.
type Reader interface {
	// Header returns the header cells as read (BOM stripped).
	Header() []string
	// Next returns the next row, or io.EOF at the end of the input. Other
	// errors name the line and are fatal for the input.
	Next(ctx context.Context) (Row, error)
	// Close releases the input (and any temporary files).
	Close() error
}

// Mapped is a row mapped to the parameters of a verify request.
type Mapped struct {
	// Address is what is sent: non-empty lines (the postcode last), city,
	// region, country (ISO alpha-2 when recognised, else as written, else the
	// default country) and language.
	Address api.Address
	// Label is the row's own mapped address values joined with ", " (the
	// review file's input_label).
	Label string
	// Err is a row-level problem ("no address", "no country"): the row is not
	// sent and becomes an Error row with this reason.
	Err error
}
