package api

import (
	"bytes"
	"encoding/json"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"
)

// redactToken removes the token tok from a decoded verify answer, so that
// nothing that writes the answer out (the JSONL output writes all of it)
// can write the token. DESIGN.md says the self link carries the request's
// parameters without the token, but a live service may echo the request as
// it came, token included:
//
//   - every token query parameter is removed from links[].href; an href
//     that does not parse loses its whole query;
//   - every other occurrence of the token, as sent or URL-escaped, in any
//     string of the answer or in the raw JSON of members the interface does
//     not name (Extra), becomes "[REDACTED]".
func redactToken(r *VerifyResponse, tok string) {
	redactDecoded(r, tok, nil, nil)
}

// redactDecoded is redactToken with the token's forms (tokenForms, made
// when nil) and, when not nil, the body r was decoded from.
//
// The body spares the walk over every string of the answer (reflection,
// once per row) when it shows that no decoded string can hold a form of
// the token: a body without escapes that is valid UTF-8 decodes every
// string, member name and raw member to a substring of itself, so if no
// form is in the body, none is in them. The links, which dropTokenParam
// may have rewritten, are checked on their own.
func redactDecoded(r *VerifyResponse, tok string, forms []string, body []byte) {
	if r == nil {
		return
	}
	for i := range r.Links {
		r.Links[i].Href = dropTokenParam(r.Links[i].Href)
	}
	if strings.TrimSpace(tok) == "" {
		return
	}
	if forms == nil {
		forms = tokenForms(tok)
	}
	if body != nil && !mayHoldForms(r, body, forms) {
		return
	}
	redactValue(reflect.ValueOf(r).Elem(), forms)
}

// mayHoldForms reports whether a string of r, decoded from body, may hold
// one of forms.
func mayHoldForms(r *VerifyResponse, body []byte, forms []string) bool {
	if bytes.IndexByte(body, '\\') >= 0 || !utf8.Valid(body) {
		return true
	}
	for _, f := range forms {
		if bytes.Contains(body, []byte(f)) {
			return true
		}
	}
	for _, l := range r.Links {
		for _, s := range [...]string{l.Rel, l.Href, l.Title} {
			for _, f := range forms {
				if strings.Contains(s, f) {
					return true
				}
			}
		}
	}
	return false
}

// dropTokenParam returns href without its token query parameters (the name
// compared ignoring case), leaving the rest of it as it was. An href that
// does not parse as a URL loses its query and fragment instead: keeping
// them could keep a token.
func dropTokenParam(href string) string {
	if !strings.ContainsAny(href, "?#") {
		return href
	}
	if _, err := url.Parse(href); err != nil {
		before, _, _ := strings.Cut(href, "?")
		before, _, _ = strings.Cut(before, "#")
		return before
	}
	// Split as url.Parse does: the fragment first, then the query.
	rest, frag, hasFrag := strings.Cut(href, "#")
	path, query, hasQuery := strings.Cut(rest, "?")
	if !hasQuery {
		return href
	}
	// Most links have no token parameter: look before splitting.
	found := false
	for rest := query; !found; {
		p, more, ok := strings.Cut(rest, "&")
		found = isTokenParam(p)
		if !ok {
			break
		}
		rest = more
	}
	if !found {
		return href
	}
	params := strings.Split(query, "&")
	kept := params[:0]
	for _, p := range params {
		if !isTokenParam(p) {
			kept = append(kept, p)
		}
	}
	out := path
	if q := strings.Join(kept, "&"); q != "" {
		out += "?" + q
	}
	if hasFrag {
		out += "#" + frag
	}
	return out
}

// isTokenParam reports whether the query parameter p ("name=value") is a
// token: its name, unescaped and trimmed, is "token" in any case.
func isTokenParam(p string) bool {
	name, _, _ := strings.Cut(p, "=")
	if n, err := url.QueryUnescape(name); err == nil {
		name = n
	}
	return strings.EqualFold(strings.TrimSpace(name), "token")
}

// tokenForms returns the token as sent and in the escaped forms an echo of
// it could take: URL query and path escaping, and JSON string escaping for
// raw members.
func tokenForms(tok string) []string {
	forms := []string{tok, url.QueryEscape(tok), url.PathEscape(tok)}
	if b, err := json.Marshal(tok); err == nil && len(b) >= 2 {
		forms = append(forms, string(b[1:len(b)-1]))
	}
	slices.Sort(forms)
	forms = slices.Compact(forms)
	// Longest first, so a longer escaped form is replaced whole before a
	// shorter one inside it.
	slices.SortStableFunc(forms, func(a, b string) int { return len(b) - len(a) })
	return forms
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// redactValue replaces the token forms in every string reachable from v
// (which must be settable) and in every json.RawMessage, and reports
// whether it changed anything.
func redactValue(v reflect.Value, forms []string) bool {
	changed := false
	switch v.Kind() {
	case reflect.String:
		if r, ok := redactString(v.String(), forms); ok {
			v.SetString(r)
			changed = true
		}
	case reflect.Pointer:
		if !v.IsNil() {
			changed = redactValue(v.Elem(), forms)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				changed = redactValue(f, forms) || changed
			}
		}
	case reflect.Slice:
		if v.Type() == rawMessageType {
			if raw, ok := redactRaw(v.Bytes(), forms); ok {
				v.SetBytes(raw)
				changed = true
			}
			break
		}
		for i := range v.Len() {
			changed = redactValue(v.Index(i), forms) || changed
		}
	case reflect.Map:
		if v.Len() == 0 {
			break
		}
		// Keys are collected first: the loop stores renamed keys.
		for _, k := range v.MapKeys() {
			// Map values are not settable: redact a copy, store it back.
			cp := reflect.New(v.Type().Elem()).Elem()
			cp.Set(v.MapIndex(k))
			valChanged := redactValue(cp, forms)
			if k.Kind() == reflect.String {
				if nk, ok := redactString(k.String(), forms); ok {
					v.SetMapIndex(k, reflect.Value{})
					k = reflect.ValueOf(nk).Convert(k.Type())
					valChanged = true
				}
			}
			if valChanged {
				v.SetMapIndex(k, cp)
				changed = true
			}
		}
	}
	return changed
}

// redactString replaces the token forms in s, and reports whether it did.
func redactString(s string, forms []string) (string, bool) {
	if s == "" {
		return s, false
	}
	changed := false
	for _, f := range forms {
		if strings.Contains(s, f) {
			s = strings.ReplaceAll(s, f, redacted)
			changed = true
		}
	}
	return s, changed
}

// redactRaw replaces the token forms in raw JSON. Should the replacement
// break the JSON (a token that spans JSON syntax), the whole value becomes
// the string "[REDACTED]".
func redactRaw(raw []byte, forms []string) ([]byte, bool) {
	changed := false
	for _, f := range forms {
		if bytes.Contains(raw, []byte(f)) {
			raw = bytes.ReplaceAll(raw, []byte(f), []byte(redacted))
			changed = true
		}
	}
	if changed && !json.Valid(raw) {
		raw = []byte(`"` + redacted + `"`)
	}
	return raw, changed
}
