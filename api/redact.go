package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// decodeRedacted decodes a verify answer without any trace of the token
// whose forms (tokenForms) are given, so that nothing that writes the
// answer out (the JSONL output writes all of it) can write the token.
// DESIGN.md says the self link carries the request's parameters without
// the token, but a live service may echo the request as it came:
//
//   - every token query parameter is removed from links[].href; an href
//     that does not parse loses its whole query;
//   - every other occurrence of the token, as sent or escaped, in any
//     string or member name of the answer becomes "[REDACTED]"; a member
//     the interface does not name (Extra) that still holds it, in a number
//     or across JSON syntax, becomes the string "[REDACTED]" whole.
//
// Most answers hold no form of the token: when the body has no escapes and
// is valid UTF-8, every decoded string is a substring of it, and the body
// alone shows that there is nothing to redact. asIs is then true when no
// link lost a parameter either: the body decodes to the answer as it is, so
// it can be stored in place of the answer's encoding.
func decodeRedacted(body []byte, forms []string) (r *VerifyResponse, asIs bool, err error) {
	opts := wireOptions
	hold := len(forms) > 0 && mayHoldForms(body, forms)
	if hold {
		opts = jsonv2.JoinOptions(wireOptions, jsonv2.WithUnmarshalers(jsonv2.JoinUnmarshalers(
			redactingString[string](forms), redactingString[Action](forms),
			jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, raw *json.RawMessage) error {
				v, err := dec.ReadValue()
				if err == nil {
					*raw = redactRaw(v, forms)
				}
				return err
			}),
		)))
	}
	r = new(VerifyResponse)
	if err := jsonv2.Unmarshal(body, (*wireResponse)(r), opts); err != nil {
		return nil, false, err
	}
	if hold {
		redactKeys(r.Extra, forms)
		redactKeys(r.Data.Extra, forms)
	}
	asIs = !hold
	for i := range r.Links {
		// Dropping a parameter joins what was around it: redact after.
		href, _ := redactString(dropTokenParam(r.Links[i].Href), forms)
		asIs = asIs && href == r.Links[i].Href
		r.Links[i].Href = href
	}
	return r, asIs, nil
}

// mayHoldForms reports whether a string decoded from body may hold one of
// forms.
func mayHoldForms(body []byte, forms []string) bool {
	if bytes.IndexByte(body, '\\') >= 0 || !utf8.Valid(body) {
		return true
	}
	return slices.ContainsFunc(forms, func(f string) bool { return bytes.Contains(body, []byte(f)) })
}

// redactingString decodes JSON strings into T with the forms redacted.
func redactingString[T ~string](forms []string) *jsonv2.Unmarshalers {
	return jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, s *T) error {
		if dec.PeekKind() != '"' {
			return errors.ErrUnsupported
		}
		tok, err := dec.ReadToken()
		if err == nil {
			r, _ := redactString(tok.String(), forms)
			*s = T(r)
		}
		return err
	})
}

// redactKeys renames the members of m whose names hold a form.
func redactKeys(m map[string]json.RawMessage, forms []string) {
	for _, k := range slices.Collect(maps.Keys(m)) {
		if nk, ok := redactString(k, forms); ok {
			m[nk] = m[k]
			delete(m, k)
		}
	}
}

// rawOptions read and write raw members as they are: renaming may make
// two names equal.
var rawOptions = jsonv2.JoinOptions(wireOptions, jsontext.AllowDuplicateNames(true))

// redactRaw redacts the strings and member names of the JSON value v. When
// a form is still there (in a number, or across JSON syntax), the whole
// value becomes the string "[REDACTED]".
func redactRaw(v jsontext.Value, forms []string) json.RawMessage {
	var out bytes.Buffer
	dec := jsontext.NewDecoder(bytes.NewReader(v), rawOptions)
	enc := jsontext.NewEncoder(&out, rawOptions)
	for {
		tok, err := dec.ReadToken()
		if err == io.EOF {
			break
		}
		if err == nil && tok.Kind() == '"' {
			if s, ok := redactString(tok.String(), forms); ok {
				tok = jsontext.String(s)
			}
		}
		if err == nil {
			err = enc.WriteToken(tok)
		}
		if err != nil {
			return json.RawMessage(`"` + redacted + `"`)
		}
	}
	b := bytes.TrimSuffix(out.Bytes(), []byte("\n"))
	if slices.ContainsFunc(forms, func(f string) bool { return bytes.Contains(b, []byte(f)) }) {
		return json.RawMessage(`"` + redacted + `"`)
	}
	return b
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
		return href[:strings.IndexAny(href, "?#")]
	}
	// Split as url.Parse does: the fragment first, then the query.
	rest, frag, hasFrag := strings.Cut(href, "#")
	path, query, hasQuery := strings.Cut(rest, "?")
	if !hasQuery {
		return href
	}
	params := strings.Split(query, "&")
	kept := slices.DeleteFunc(slices.Clone(params), isTokenParam)
	if len(kept) == len(params) {
		return href
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
// raw members. A blank token has none.
func tokenForms(tok string) []string {
	if strings.TrimSpace(tok) == "" {
		return nil
	}
	forms := []string{tok, url.QueryEscape(tok), url.PathEscape(tok)}
	if b, err := jsonv2.Marshal(tok, wireOptions); err == nil && len(b) >= 2 {
		forms = append(forms, string(b[1:len(b)-1]))
	}
	slices.Sort(forms)
	forms = slices.Compact(forms)
	// Longest first, so a longer escaped form is replaced whole before a
	// shorter one inside it.
	slices.SortStableFunc(forms, func(a, b string) int { return len(b) - len(a) })
	return forms
}

// redactString replaces the token forms in s, and reports whether it did.
func redactString(s string, forms []string) (string, bool) {
	changed := false
	for _, f := range forms {
		if strings.Contains(s, f) {
			s = strings.ReplaceAll(s, f, redacted)
			changed = true
		}
	}
	return s, changed
}
