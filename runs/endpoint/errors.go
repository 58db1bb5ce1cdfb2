package endpoint

import (
	"context"
	"errors"
	"fmt"

	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/table"
)

// Class sorts an error by what the user does next.
type Class int

const (
	// Fatal: the command cannot go on (a file that cannot be read, a
	// database that cannot be reached).
	Fatal Class = iota
	// Usage: the command must change (a flag, column, table or query is
	// wrong).
	Usage
	// Interrupted: the command was stopped (Ctrl-C) and may be run again.
	Interrupted
)

// Error is an error of a source or a sink, with its class.
type Error struct {
	Class Class
	Err   error
	// Help: the command's usage would help (a required flag is missing).
	Help bool
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// sorted reports an error already sorted.
func sorted(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

func usagef(format string, args ...any) error {
	return &Error{Class: Usage, Err: fmt.Errorf(format, args...)}
}

func usage(err error) error { return &Error{Class: Usage, Err: err} }

func fatal(err error) error { return &Error{Class: Fatal, Err: err} }

// InputError sorts a problem found opening or inspecting a file input: a
// column mapping that does not fit the header, a --sheet the workbook does
// not have, an extension that cannot be read are usage errors (the
// command must change), anything else about the file is fatal.
func InputError(err error) error {
	var me *readers.MappingError
	if sorted(err) {
		return err
	}
	if errors.As(err, &me) || errors.Is(err, readers.ErrNoSheet) || errors.Is(err, readers.ErrUnsupportedFormat) {
		return usage(err)
	}
	return fatal(err)
}

// TableError sorts an error of a database: what the user must fix in the
// flags (a missing table or column, a query the database refuses) is a
// usage error, anything else (connection, password) is fatal.
func TableError(err error) error {
	var me *readers.MappingError
	switch {
	case sorted(err):
		return err
	case errors.Is(err, table.ErrNoTable), errors.Is(err, table.ErrNoColumn), errors.Is(err, table.ErrBadQuery),
		errors.Is(err, table.ErrInputTable), errors.Is(err, table.ErrRefused), errors.As(err, &me):
		return usage(err)
	}
	return fatal(err)
}

// readError sorts an error of reading a table input as TableError does,
// except that an interrupted read is an interrupted run, whatever the
// driver made of the cancellation.
func readError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return &Error{Class: Interrupted, Err: errors.New("interrupted while reading the input; nothing was verified: run the same command again")}
	}
	return TableError(err)
}

// setupError is TableError for the checks and set-up of output tables: an
// interrupt is Interrupted (the set-up is one transaction: nothing was
// changed).
func setupError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return &Error{Class: Interrupted, Err: errors.New("interrupted while checking and setting up the output tables: nothing was changed")}
	}
	return TableError(err)
}
