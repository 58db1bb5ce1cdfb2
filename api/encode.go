package api

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"
)

// The verify answer is encoded by hand instead of through encoding/json's
// reflection: the service encodes one per row of a run, and journals store
// them as often. TestAppendVerifyResponseMatchesJSON and
// FuzzAppendVerifyResponseMatchesJSON hold the encoder to encoding/json.

// The member names of the objects that have Extra members.
var (
	verifyNames = jsonNames(reflect.TypeFor[VerifyResponse]())
	dataNames   = jsonNames(reflect.TypeFor[Data]())
)

// appendExtra appends the members of extra, sorted, to an object whose
// members so far are written (empty tells there are none). Members the
// decoder would take for one of the named members (the same name, or one
// whose lower case is) are left out: the named field is authoritative.
// html escapes <, > and & in names, as json.Marshal does for data.
func appendExtra(b []byte, extra map[string]json.RawMessage, names []string, empty, html bool) []byte {
	if len(extra) == 0 {
		return b
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if !slices.Contains(names, k) && !foldsTo(k, names...) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !empty {
			b = append(b, ',')
		}
		empty = false
		b = appendString(b, k, html)
		b = append(b, ':')
		buf := bytes.NewBuffer(b)
		if err := json.Compact(buf, extra[k]); err != nil {
			// Not JSON: json.Compact wrote nothing.
			buf.WriteString("null")
		}
		b = buf.Bytes()
	}
	return b
}

// AppendVerifyResponse appends the JSON of v to dst and returns the
// extended buffer. It is the fast, reflection-free counterpart of
// json.Marshal(v) for stores that keep answers (a verify answer is encoded
// once per row), and it always succeeds:
//
//   - for an answer without Extra members, in either v or v.Data, it
//     appends exactly the bytes of a json.Encoder with SetEscapeHTML(false)
//     encoding v without its MarshalJSON method (no trailing newline),
//     except that data, encoded by Data.MarshalJSON, has <, > and &
//     escaped: the bytes the service sends;
//   - Extra members follow the named members of their object, sorted by
//     name, as MarshalJSON writes them; members the decoder would take for
//     a named member (the same name, or one whose lower case is) are left
//     out, the named field being authoritative;
//   - what JSON cannot represent is written as null: NaN or infinite
//     coordinates (decoding back as 0) and Extra values that are not valid
//     JSON (decoding back as the raw null).
//
// DecodeVerifyResponse of the result therefore gives back v, Extra values
// compacted, for every v that JSON can represent.
func AppendVerifyResponse(dst []byte, v *VerifyResponse) []byte {
	b := dst
	b = append(b, `{"type":`...)
	b = appendString(b, v.Type, false)
	b = append(b, `,"action":`...)
	b = appendString(b, string(v.Action), false)
	b = append(b, `,"form":`...)
	b = appendForm(b, &v.Form)

	in := &v.Information
	b = append(b, `,"information":{"status":`...)
	b = appendString(b, in.Status, false)
	b = append(b, `,"matchLevel":`...)
	b = appendString(b, in.MatchLevel, false)
	b = append(b, `,"complete":`...)
	b = strconv.AppendBool(b, in.Complete)
	b = append(b, `,"subBuilding":`...)
	b = appendString(b, in.SubBuilding, false)
	b = append(b, `,"addressLinesAmended":`...)
	b = strconv.AppendBool(b, in.AddressLinesAmended)
	b = append(b, `,"cityAmended":`...)
	b = strconv.AppendBool(b, in.CityAmended)
	b = append(b, `,"regionAmended":`...)
	b = strconv.AppendBool(b, in.RegionAmended)
	b = append(b, `,"postcodeAmended":`...)
	b = strconv.AppendBool(b, in.PostcodeAmended)
	d := &in.Details
	b = append(b, `,"details":{"organization":`...)
	b = appendString(b, d.Organization, false)
	b = append(b, `,"street":`...)
	b = appendString(b, d.Street, false)
	b = append(b, `,"addressLines":`...)
	b = appendString(b, d.AddressLines, false)
	b = append(b, `,"subBuildingNumber":`...)
	b = appendString(b, d.SubBuildingNumber, false)
	b = append(b, `,"buildingNumber":`...)
	b = appendString(b, d.BuildingNumber, false)
	b = append(b, `,"city":`...)
	b = appendString(b, d.City, false)
	b = append(b, `,"region":`...)
	b = appendString(b, d.Region, false)
	b = append(b, `,"postcode":`...)
	b = appendString(b, d.Postcode, false)
	b = append(b, "}}"...)

	ia := &v.Input
	b = append(b, `,"input":{"lines":`...)
	b = appendLines(b, ia.Lines)
	b = append(b, `,"city":`...)
	b = appendValue(b, &ia.City)
	b = append(b, `,"region":`...)
	b = appendValue(b, &ia.Region)
	b = append(b, `,"postcode":`...)
	b = appendValue(b, &ia.Postcode)
	b = append(b, `,"country":`...)
	b = appendCountry(b, &ia.Country)
	b = append(b, `,"label":`...)
	b = appendStrings(b, ia.Label)
	b = append(b, '}')

	a := &v.Address
	b = append(b, `,"address":{`...)
	// Every member before label is omitempty: each writes its own comma.
	start := len(b)
	sep := func(b []byte) []byte {
		if len(b) > start {
			b = append(b, ',')
		}
		return b
	}
	if a.ID != "" {
		b = append(sep(b), `"id":`...)
		b = appendString(b, a.ID, false)
	}
	if a.Language != "" {
		b = append(sep(b), `"language":`...)
		b = appendString(b, a.Language, false)
	}
	if a.Charset != "" {
		b = append(sep(b), `"charset":`...)
		b = appendString(b, a.Charset, false)
	}
	if a.Variation != "" {
		b = append(sep(b), `"variation":`...)
		b = appendString(b, a.Variation, false)
	}
	if len(a.Lines) > 0 {
		b = append(sep(b), `"lines":`...)
		b = appendLines(b, a.Lines)
	}
	if a.City != nil {
		b = append(sep(b), `"city":`...)
		b = appendValue(b, a.City)
	}
	if a.Region != nil {
		b = append(sep(b), `"region":`...)
		b = appendValue(b, a.Region)
	}
	if a.Postcode != nil {
		b = append(sep(b), `"postcode":`...)
		b = appendValue(b, a.Postcode)
	}
	if a.Country != nil {
		b = append(sep(b), `"country":`...)
		b = appendCountry(b, a.Country)
	}
	b = append(sep(b), `"label":`...)
	b = appendStrings(b, a.Label)
	b = append(b, `,"highlights":`...)
	if a.Highlights == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, h := range a.Highlights {
			if i > 0 {
				b = append(b, ',')
			}
			if h == nil {
				b = append(b, "null"...)
				continue
			}
			b = append(b, '[')
			for j, n := range h {
				if j > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, int64(n), 10)
			}
			b = append(b, ']')
		}
		b = append(b, ']')
	}
	b = append(b, '}')

	// data goes through Data's MarshalJSON, that is json.Marshal: its
	// strings are HTML-escaped.
	b = append(b, `,"data":{`...)
	if l := v.Data.Location; l != nil {
		b = append(b, `"location":{"latitude":`...)
		b = appendFloat(b, l.Latitude)
		b = append(b, `,"longitude":`...)
		b = appendFloat(b, l.Longitude)
		b = append(b, `,"crs":`...)
		b = appendString(b, l.CRS, true)
		b = append(b, `,"accuracy":`...)
		b = appendString(b, l.Accuracy, true)
		b = append(b, '}')
	}
	b = appendExtra(b, v.Data.Extra, dataNames, v.Data.Location == nil, true)
	b = append(b, '}')

	b = append(b, `,"links":`...)
	if v.Links == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range v.Links {
			l := &v.Links[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"rel":`...)
			b = appendString(b, l.Rel, false)
			b = append(b, `,"href":`...)
			b = appendString(b, l.Href, false)
			b = append(b, `,"title":`...)
			b = appendString(b, l.Title, false)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendExtra(b, v.Extra, verifyNames, false, false)
	return append(b, '}')
}

func appendForm(b []byte, f *Form) []byte {
	b = append(b, `{"language":`...)
	b = appendString(b, f.Language, false)
	b = append(b, `,"message":{"id":`...)
	b = strconv.AppendInt(b, int64(f.Message.ID), 10)
	b = append(b, `,"severity":`...)
	b = appendString(b, f.Message.Severity, false)
	b = append(b, `,"value":`...)
	b = appendString(b, f.Message.Value, false)
	return append(b, "}}"...)
}

func appendLines(b []byte, ls []Line) []byte {
	if ls == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range ls {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"key":`...)
		b = appendString(b, ls[i].Key, false)
		b = append(b, `,"value":`...)
		b = appendString(b, ls[i].Value, false)
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s, false)
	}
	return append(b, ']')
}

func appendValue(b []byte, v *Value) []byte {
	b = append(b, `{"value":`...)
	b = appendString(b, v.Value, false)
	return append(b, '}')
}

func appendCountry(b []byte, c *Country) []byte {
	b = append(b, `{"language":`...)
	b = appendString(b, c.Language, false)
	b = append(b, `,"value":`...)
	b = appendString(b, c.Value, false)
	b = append(b, `,"iso":`...)
	b = appendString(b, c.ISO, false)
	return append(b, '}')
}

// appendFloat formats f as encoding/json's float64 encoder does; NaN and
// infinities, which encoding/json refuses, become null.
func appendFloat(b []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return append(b, "null"...)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9, as encoding/json writes it.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s as a JSON string exactly as encoding/json
// writes it (the service's error envelope and the journal use it too).
func AppendJSONString(b []byte, s string, html bool) []byte { return appendString(b, s, html) }

// appendString appends s as a JSON string exactly as encoding/json writes
// it: control characters, quotes and backslashes escaped, invalid UTF-8 as
// \ufffd, U+2028 and U+2029 escaped, and <, > and & escaped when html is
// set.
func appendString(b []byte, s string, html bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!html || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
