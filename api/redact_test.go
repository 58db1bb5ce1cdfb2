package api

import (
	"bytes"
	"cmp"
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func TestDropTokenParam(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"https://h/3.0/verify", "https://h/3.0/verify"},
		{"https://h/v?a=1&token=T&b=2", "https://h/v?a=1&b=2"},
		{"https://h/v?token=T", "https://h/v"},
		{"https://h/v?token=T#frag", "https://h/v#frag"},
		{"https://h/v?TOKEN=T&a=%20", "https://h/v?a=%20"},
		{"https://h/v?t%6Fken=T&a=1", "https://h/v?a=1"},
		{"https://h/v?token&a=1", "https://h/v?a=1"},
		{"https://h/v?tokens=1&a=1", "https://h/v?tokens=1&a=1"},
		{"/3.0/verify?country=IE&token=T", "/3.0/verify?country=IE"},
		{"https://h/v#a?token=T", "https://h/v#a?token=T"}, // a fragment, not a query: left to the string redaction
		{"https://h/%zz?token=T", "https://h/%zz"},         // does not parse: the query goes
		{"https://h/%zz#token=T", "https://h/%zz"},
		{"https://h/%zz", "https://h/%zz"},
	}
	for _, tt := range tests {
		if got := dropTokenParam(tt.in); got != tt.want {
			t.Errorf("dropTokenParam(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRedactToken(t *testing.T) {
	const tok = `tok/"x"<1>`
	tests := []struct {
		name  string
		tok   string // tok when empty
		in    VerifyResponse
		check func(t *testing.T, r *VerifyResponse)
	}{
		{
			name: "strings everywhere",
			in: VerifyResponse{
				Action:  Action(tok),
				Input:   InputAddress{Lines: []Line{{Key: "AddressLine1", Value: "a " + tok}}, Label: []string{tok}},
				Address: MatchedAddress{City: &Value{Value: "x" + url.QueryEscape(tok)}},
				Links:   []Link{{Rel: "self", Href: "https://h/" + url.PathEscape(tok) + "?token=" + url.QueryEscape(tok)}},
			},
			check: func(t *testing.T, r *VerifyResponse) {
				if r.Action != redacted || r.Input.Lines[0].Value != "a [REDACTED]" || r.Input.Label[0] != redacted ||
					r.Address.City.Value != "x[REDACTED]" || r.Links[0].Href != "https://h/[REDACTED]" {
					t.Errorf("got %+v", r)
				}
			},
		},
		{
			name: "raw JSON, escaped and plain, names included",
			in: VerifyResponse{
				Extra: map[string]json.RawMessage{"echo": json.RawMessage(`{"t":"tok/\"x\"\u003c1\u003e"}`), tok: json.RawMessage(`{"` + url.PathEscape(tok) + `":1}`)},
				Data:  Data{Extra: map[string]json.RawMessage{"n": json.RawMessage(`1`)}},
			},
			check: func(t *testing.T, r *VerifyResponse) {
				if got := string(r.Extra["echo"]); got != `{"t":"[REDACTED]"}` {
					t.Errorf("echo = %s", got)
				}
				if got := string(r.Extra[redacted]); got != `{"[REDACTED]":1}` {
					t.Errorf("member named by the token = %s (%v)", got, r.Extra)
				}
				if got := string(r.Data.Extra["n"]); got != `1` {
					t.Errorf("n = %s", got)
				}
			},
		},
		{
			name: "token across JSON syntax",
			tok:  `tok/":"v`,
			in:   VerifyResponse{Extra: map[string]json.RawMessage{"odd": json.RawMessage(`{"tok/":"v"}`)}},
			check: func(t *testing.T, r *VerifyResponse) {
				if got := string(r.Extra["odd"]); got != `"[REDACTED]"` {
					t.Errorf("odd = %s", got)
				}
			},
		},
		{
			name: "token in a number",
			tok:  `12345678`,
			in:   VerifyResponse{Extra: map[string]json.RawMessage{"n": json.RawMessage(`[1123456789]`)}},
			check: func(t *testing.T, r *VerifyResponse) {
				if got := string(r.Extra["n"]); got != `"[REDACTED]"` {
					t.Errorf("n = %s", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tk := cmp.Or(tt.tok, tok)
			r, _, err := decodeRedacted(AppendVerifyResponse(nil, &tt.in), tokenForms(tk))
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, r)
			out := AppendVerifyResponse(nil, r)
			if strings.Contains(string(out), tk) || !json.Valid(out) {
				t.Errorf("re-encoding holds the token: %s", out)
			}
		})
	}
}

// redactTokens cannot appear in an answer but in its strings and member
// names: no number, no member name of the interface, no literal.
var redactTokens = []string{"AbC-123_xyz", `tok/"x"<1>`, "a&b=c", "é\u2028x"}

// checkRedacted holds decodeRedacted to its promise: the answer it gives
// re-encodes without any form of the token, and, when the body holds no
// form of it, is the answer DecodeVerifyResponse gives; a body it calls
// as-is holds no form of the token and decodes to that answer.
func checkRedacted(t *testing.T, body []byte, tok string) {
	t.Helper()
	forms := tokenForms(tok)
	got, asIs, err := decodeRedacted(body, forms)
	plain, perr := DecodeVerifyResponse(body)
	if (err == nil) != (perr == nil) {
		t.Fatalf("body %q: decodeRedacted error %v, DecodeVerifyResponse error %v", body, err, perr)
	}
	if err != nil {
		return
	}
	out := AppendVerifyResponse(nil, got)
	for _, f := range forms {
		if bytes.Contains(out, []byte(f)) {
			t.Fatalf("token %q, body %q: answer holds %q:\n%s", tok, body, f, out)
		}
	}
	if asIs {
		for _, f := range forms {
			if bytes.Contains(body, []byte(f)) {
				t.Fatalf("token %q, body %q: as-is body holds %q", tok, body, f)
			}
		}
		if !reflect.DeepEqual(got, plain) {
			t.Fatalf("token %q, body %q: as-is body decodes to another answer:\n%+v\n%+v", tok, body, got, plain)
		}
	}
	if !mayHoldForms(body, forms) {
		for i := range plain.Links {
			plain.Links[i].Href = dropTokenParam(plain.Links[i].Href)
		}
		if !reflect.DeepEqual(got, plain) {
			t.Fatalf("token %q, body %q: redacted an answer without the token:\n%+v\n%+v", tok, body, got, plain)
		}
	}
}

func TestRedactedAnswers(t *testing.T) {
	bodies := answerSeeds(t)
	for _, tok := range redactTokens {
		esc, _ := json.Marshal(tok)
		bodies = append(bodies, [][]byte{
			[]byte(`{"type":"` + tok + `"}`),
			[]byte(`{"type":` + string(esc) + `}`),
			[]byte(`{"links":[{"href":"https://h/v?a=` + tok[:len(tok)/2] + `&token=1&b=` + tok[len(tok)/2:] + `"}]}`),
			[]byte(`{"links":[{"href":"https://h/v?` + url.QueryEscape(tok) + `"}]}`),
			[]byte(`{"x":{"` + tok + `":1}}`),
			[]byte(`{"data":{"y":"` + url.PathEscape(tok) + `"}}`),
			[]byte(`{"type":"\u0074"}`),
			[]byte("{\"type\":\"\xff" + tok + "\"}"),
		}...)
	}
	for _, tok := range redactTokens {
		for _, b := range bodies {
			checkRedacted(t, b, tok)
		}
	}
}

func FuzzRedactedAnswers(f *testing.F) {
	for i, b := range answerSeeds(f) {
		f.Add(b, uint8(i))
	}
	f.Fuzz(func(t *testing.T, body []byte, tok uint8) {
		checkRedacted(t, body, redactTokens[int(tok)%len(redactTokens)])
	})
}

// FuzzDropTokenParam checks that no token parameter survives in a link, and
// that a link without one is left as it was.
func FuzzDropTokenParam(f *testing.F) {
	for _, s := range []string{"https://h/v?a=1&token=T&b=2", "https://h/v?t%6Fken=T&a=1", "https://h/v?token", "https://h/v?&&", "https://h/%zz?x", "https://h/v? TOKEN =1#f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, href string) {
		got := dropTokenParam(href)
		rest, _, _ := strings.Cut(got, "#")
		_, query, _ := strings.Cut(rest, "?")
		for p := range strings.SplitSeq(query, "&") {
			if isTokenParam(p) {
				t.Fatalf("dropTokenParam(%q) = %q keeps %q", href, got, p)
			}
		}
		if _, err := url.Parse(href); err == nil && got != href && len(got) >= len(href) {
			t.Fatalf("dropTokenParam(%q) = %q: changed but not shorter", href, got)
		}
	})
}
