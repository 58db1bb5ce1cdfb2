package record

import (
	"fmt"
	"strings"
	"unicode/utf8"
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
	// Types, for a workbook read with readers.Options.CellTypes, tells which cells
	// are numbers or dates (indexed as Cells; cells past its end, and those
	// of kind KindText, are text). It is nil for CSV input and for rows
	// without a number.
	Types []CellType
}

// CellKind is the type of a workbook cell, for outputs that keep it.
type CellKind uint8

// Cell kinds. Text is the zero value: anything that is not a number.
const (
	KindText CellKind = iota
	// KindNumber is a number (a formula's cached number included).
	KindNumber
	// KindDate is a number shown with a date or time format: Excel keeps
	// dates as days since 1900.
	KindDate
)

// CellType is how a workbook cell was typed: its kind, its stored value and
// its number format, so that an XLSX output can write a number as a number
// in the same format instead of the text a person sees.
type CellType struct {
	Kind CellKind
	// Value is the value as stored: "120.5", "43525" (1 March 2019).
	Value string
	// NumFmt is the built-in number format id (0 is General), used when
	// CustomFmt is "".
	NumFmt int
	// CustomFmt is the cell's own number format code ("0.00",
	// "dd/mm/yyyy"), "" for a built-in one.
	CustomFmt string
}

// Encodings a CSV input can be read in and a CSV output written in
// (readers.Options.Encoding, writers.Options.Encoding).
const (
	EncodingUTF8        = "utf-8"
	EncodingWindows1252 = "windows-1252"
)

// NormaliseEncoding returns the canonical name (EncodingUTF8 or
// EncodingWindows1252) of an encoding as a user may spell it (UTF-8, utf8,
// cp1252, ...), or an error naming the encodings that can be read.
func NormaliseEncoding(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "utf-8", "utf8":
		return EncodingUTF8, nil
	case "windows-1252", "windows1252", "cp1252", "cp-1252", "1252":
		return EncodingWindows1252, nil
	}
	return "", fmt.Errorf("unknown encoding %q: use utf-8 or windows-1252", s)
}

// ValidDelimiter reports whether r can separate the fields of a CSV input
// or output: one valid character other than a quote, CR or LF.
func ValidDelimiter(r rune) bool {
	return r != 0 && r != '"' && r != '\r' && r != '\n' && utf8.ValidRune(r) && r != utf8.RuneError
}
