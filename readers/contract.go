package readers

import (
	"context"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/record"
)

// Reader streams the rows of one input. Next returns io.EOF after the last row.
type Reader interface {
	// Header returns the header cells as read (BOM stripped).
	Header() []string
	// Next returns the next row, or io.EOF at the end of the input. Other
	// errors name the line and are fatal for the input.
	Next(ctx context.Context) (record.Row, error)
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
