package sampledata

import (
	"bytes"
	_ "embed"
	"io"
)

//go:embed reference.csv
var reference []byte

// Reference returns a reader over the bundled sample reference addresses
// (the gazetteer's reference CSV format), so the binary works from any
// directory.
func Reference() io.Reader { return bytes.NewReader(reference) }

// ReferenceBytes returns the bundled sample reference CSV; callers must not
// modify it.
func ReferenceBytes() []byte { return reference }
