package api

import (
	"fmt"
	"io"
	"log/slog"
)

// redacted is what every formatting of a Secret prints.
const redacted = "[REDACTED]"

// Secret is a credential (the API key) that never prints: String, GoString,
// every fmt verb, JSON, text and slog all give "[REDACTED]". Reveal returns
// the value for the one place that must send it.
//
// fmt cannot call methods on unexported struct fields, so %v of a struct
// prints a Secret held in an unexported field in full: give such a struct
// its own String or Format method, as Client has.
type Secret string

// String returns "[REDACTED]".
func (Secret) String() string { return redacted }

// GoString returns "[REDACTED]", so %#v does not leak the value either.
func (Secret) GoString() string { return redacted }

// Format writes "[REDACTED]" for every verb and flag, including %s, %q, %v,
// %+v, %#v, %x and %d, which would otherwise bypass String for a string type.
func (Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// MarshalJSON encodes the secret as the JSON string "[REDACTED]".
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// MarshalText returns "[REDACTED]". (encoding/json uses a string-kinded
// map key as it is, so never key a map by a Secret.)
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// LogValue makes log/slog print "[REDACTED]".
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// Reveal returns the secret's value. Call it only to put the value on the
// wire, never to log or print it.
func (s Secret) Reveal() string { return string(s) }
