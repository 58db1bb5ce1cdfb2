package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// wireOptions are the JSON options of every verify answer this module
// writes or reads: the service's answers, the journal and the cache.
//
//   - nil slices are written as null, as encoding/json wrote them, so a
//     stored answer decodes back to the same value (null to nil, [] to
//     an empty slice);
//   - the members of Extra follow the named ones sorted by name;
//   - invalid UTF-8 becomes U+FFFD instead of failing a row, and U+2028
//     and U+2029 are escaped, again as encoding/json did; <, > and & are
//     not (an answer is data, and links hold &).
var wireOptions = jsonv2.JoinOptions(
	jsonv2.FormatNilSliceAsNull(true),
	jsonv2.Deterministic(true),
	jsontext.AllowInvalidUTF8(true),
	jsontext.EscapeForJS(true),
)

// wireResponse is VerifyResponse without its methods, which exist for
// encoding/json users and call back here.
type wireResponse VerifyResponse

// encoder is a reusable encoder: a verify answer is encoded once per row.
type encoder struct {
	buf bytes.Buffer
	enc *jsontext.Encoder
}

var encoders = sync.Pool{New: func() any {
	e := new(encoder)
	e.enc = jsontext.NewEncoder(&e.buf, wireOptions)
	return e
}}

// AppendVerifyResponse appends the JSON of r to dst and returns the
// extended buffer. It always succeeds: what JSON cannot hold is written as
// null (NaN or infinite coordinates, Extra values that are not JSON), and
// Extra members named like a named member are left out, the named field
// being authoritative. DecodeVerifyResponse of the result gives back r for
// every r that JSON can represent.
func AppendVerifyResponse(dst []byte, r *VerifyResponse) []byte {
	e := encoders.Get().(*encoder)
	defer func() {
		if e.buf.Cap() <= 64<<10 { // the odd huge answer does not stay
			encoders.Put(e)
		}
	}()
	e.buf.Reset()
	e.enc.Reset(&e.buf, wireOptions)
	if err := jsonv2.MarshalEncode(e.enc, (*wireResponse)(r)); err != nil {
		e.buf.Reset()
		e.enc.Reset(&e.buf, wireOptions, nonFiniteAsNull)
		c := representable(r)
		if err := jsonv2.MarshalEncode(e.enc, (*wireResponse)(&c)); err != nil {
			panic("api: encoding a sanitised answer: " + err.Error())
		}
	}
	// The encoder ends each top-level value with a newline.
	return append(dst, bytes.TrimSuffix(e.buf.Bytes(), []byte("\n"))...)
}

// nonFiniteAsNull writes NaN and infinities, which JSON lacks, as null.
var nonFiniteAsNull = jsonv2.WithMarshalers(jsonv2.MarshalToFunc(func(enc *jsontext.Encoder, f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return enc.WriteToken(jsontext.Null)
	}
	return errors.ErrUnsupported
}))

// representable returns a copy of r whose Extra members JSON can write: no
// member named like a named one, values that are not JSON as null.
func representable(r *VerifyResponse) VerifyResponse {
	c := *r
	c.Extra = representableExtra(r.Extra, "type", "action", "form", "information", "input", "address", "data", "links")
	c.Data.Extra = representableExtra(r.Data.Extra, "location")
	return c
}

func representableExtra(extra map[string]json.RawMessage, names ...string) map[string]json.RawMessage {
	if extra == nil {
		return nil
	}
	out := make(map[string]json.RawMessage, len(extra))
	for k, v := range extra {
		if !jsontext.Value(v).IsValid() {
			v = json.RawMessage("null")
		}
		out[k] = v
	}
	for _, n := range names {
		delete(out, n)
	}
	return out
}

// DecodeVerifyResponse decodes a verify answer; it pairs with
// AppendVerifyResponse. The result shares no memory with b.
func DecodeVerifyResponse(b []byte) (*VerifyResponse, error) {
	r := new(VerifyResponse)
	if err := jsonv2.Unmarshal(b, (*wireResponse)(r), wireOptions); err != nil {
		return nil, err
	}
	return r, nil
}

// MarshalJSON encodes the answer as AppendVerifyResponse does, for
// encoding/json users (the JSONL output), but fails where that writes
// null or leaves a member out: an output should not quietly differ from
// the answer.
func (r VerifyResponse) MarshalJSON() ([]byte, error) {
	return jsonv2.Marshal((*wireResponse)(&r), wireOptions)
}

// UnmarshalJSON decodes the answer as DecodeVerifyResponse does, for
// encoding/json users.
func (r *VerifyResponse) UnmarshalJSON(b []byte) error {
	*r = VerifyResponse{}
	return jsonv2.Unmarshal(b, (*wireResponse)(r), wireOptions)
}
