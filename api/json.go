package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// DecodeVerifyResponse decodes a verify answer as UnmarshalJSON does: the
// hand-written reader for the usual shapes, encoding/json for the rest. It
// pairs with AppendVerifyResponse; the result shares no memory with b.
func DecodeVerifyResponse(b []byte) (*VerifyResponse, error) {
	v := new(VerifyResponse)
	if err := v.UnmarshalJSON(b); err != nil {
		return nil, err
	}
	return v, nil
}

// UnmarshalJSON decodes a verify answer, keeping members the interface does
// not name in Extra. Nested objects ignore unknown members.
func (r *VerifyResponse) UnmarshalJSON(b []byte) error {
	if v, ok := fastDecodeVerifyResponse(b); ok {
		*r = v
		return nil
	}
	return r.unmarshalJSONReflect(b)
}

// unmarshalJSONReflect is UnmarshalJSON with encoding/json alone: the
// reference that fastDecodeVerifyResponse must agree with, and what decodes
// every answer the fast reader leaves alone.
func (r *VerifyResponse) unmarshalJSONReflect(b []byte) error {
	if isNull(b) {
		return nil
	}
	var v VerifyResponse
	extra, err := decodeObject(b, map[string]any{
		"type": &v.Type, "action": &v.Action, "form": &v.Form, "information": &v.Information,
		"input": &v.Input, "address": &v.Address, "data": &v.Data, "links": &v.Links,
	})
	if err != nil {
		return err
	}
	v.Extra = extra
	*r = v
	return nil
}

// MarshalJSON encodes a verify answer with the members of Extra after the
// named ones, so a decoded answer re-encodes without loss.
func (r VerifyResponse) MarshalJSON() ([]byte, error) {
	type plain VerifyResponse
	b, err := json.Marshal(plain(r))
	if err != nil {
		return nil, err
	}
	return appendMembers(b, r.Extra, reflect.TypeFor[plain]())
}

// UnmarshalJSON decodes data, keeping members other than location in Extra.
func (d *Data) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	var v Data
	extra, err := decodeObject(b, map[string]any{"location": &v.Location})
	if err != nil {
		return err
	}
	v.Extra = extra
	*d = v
	return nil
}

// decodeObject decodes the JSON object b in one pass: members named in fields
// (lower-case keys; matched case-insensitively, as encoding/json matches
// struct fields) are decoded into their pointers, the others are returned raw.
// A verify answer is decoded for every row of a run, so this replaces the
// simpler decode-twice (into the struct, then into a map to find the unknown
// members), which cost several scans of every body.
func decodeObject(b []byte, fields map[string]any) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, &json.UnmarshalTypeError{Value: fmt.Sprint(tok), Type: reflect.TypeFor[map[string]any]()}
	}
	var extra map[string]json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if ptr, ok := fields[key]; ok {
			err = dec.Decode(ptr)
		} else if ptr, ok := fields[strings.ToLower(key)]; ok {
			err = dec.Decode(ptr)
		} else {
			var raw json.RawMessage
			if err = dec.Decode(&raw); err == nil {
				if extra == nil {
					extra = make(map[string]json.RawMessage)
				}
				extra[key] = raw
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("invalid character after top-level value")
	}
	return extra, nil
}

// MarshalJSON encodes data with the members of Extra after location.
func (d Data) MarshalJSON() ([]byte, error) {
	type plain Data
	b, err := json.Marshal(plain(d))
	if err != nil {
		return nil, err
	}
	return appendMembers(b, d.Extra, reflect.TypeFor[plain]())
}

func isNull(b []byte) bool { return string(bytes.TrimSpace(b)) == "null" }

// knownNames caches the JSON member names of a struct type.
var knownNames sync.Map // reflect.Type -> []string

func jsonNames(t reflect.Type) []string {
	if v, ok := knownNames.Load(t); ok {
		return v.([]string)
	}
	var names []string
	for i := range t.NumField() {
		tag := t.Field(i).Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || name == "" {
			continue
		}
		names = append(names, name)
	}
	knownNames.Store(t, names)
	return names
}

// isKnown matches names the way encoding/json does (case-insensitively), so
// a member the struct consumed never also lands in Extra.
func isKnown(key string, names []string) bool {
	for _, n := range names {
		if strings.EqualFold(key, n) {
			return true
		}
	}
	return false
}

// appendMembers adds the members of extra (sorted, for stable output) to
// the encoded object obj. Members that clash with named ones are skipped:
// the named field is authoritative.
func appendMembers(obj []byte, extra map[string]json.RawMessage, t reflect.Type) ([]byte, error) {
	if len(extra) == 0 {
		return obj, nil
	}
	names := jsonNames(t)
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if !isKnown(k, names) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return obj, nil
	}
	sort.Strings(keys)
	out := bytes.TrimSuffix(obj, []byte("}"))
	empty := len(out) == 1 // "{" only
	for _, k := range keys {
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(extra[k])
		if err != nil {
			return nil, fmt.Errorf("extra member %s: %w", kb, err)
		}
		if !empty {
			out = append(out, ',')
		}
		empty = false
		out = append(out, kb...)
		out = append(out, ':')
		out = append(out, vb...)
	}
	return append(out, '}'), nil
}
