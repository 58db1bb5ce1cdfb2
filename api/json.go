package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// UnmarshalJSON decodes a verify answer, keeping members the interface does
// not name in Extra. Nested objects ignore unknown members.
func (r *VerifyResponse) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	type plain VerifyResponse // drops the methods, so no recursion
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	extra, err := unknownMembers(b, reflect.TypeFor[plain]())
	if err != nil {
		return err
	}
	p.Extra = extra
	*r = VerifyResponse(p)
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
	type plain Data
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	extra, err := unknownMembers(b, reflect.TypeFor[plain]())
	if err != nil {
		return err
	}
	p.Extra = extra
	*d = Data(p)
	return nil
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

// unknownMembers returns the members of the JSON object b that t does not
// name, or nil if there are none.
func unknownMembers(b []byte, t reflect.Type) (map[string]json.RawMessage, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	names := jsonNames(t)
	var extra map[string]json.RawMessage
	for k, v := range all {
		if isKnown(k, names) {
			continue
		}
		if extra == nil {
			extra = make(map[string]json.RawMessage)
		}
		extra[k] = v
	}
	return extra, nil
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
