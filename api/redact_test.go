package api

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// TestVerifyRedactsEchoedToken runs against a service that echoes the
// request, token included, in its self link, in a member the interface
// does not name (top level and in data) and in a message: the decoded
// answer and its re-encoding must not hold the token in any form.
func TestVerifyRedactsEchoedToken(t *testing.T) {
	tests := []struct {
		name   string
		method string
		// self builds the self link from the base URL and the request's
		// raw query (which holds the token).
		self     func(base, query string) string
		wantSelf func(base string) string
	}{
		{
			name:   "GET echo",
			method: http.MethodGet,
			self:   func(base, q string) string { return base + "/3.0/verify?" + q },
			wantSelf: func(base string) string {
				return base + "/3.0/verify?addressLine=12+Georges+St+Upr&city=D%C3%BAn+Laoghaire&country=IE"
			},
		},
		{
			name:   "POST echo, token last, with fragment",
			method: http.MethodPost,
			self: func(base, q string) string {
				v, _ := url.ParseQuery(q)
				return base + "/3.0/verify?country=IE&Token=" + url.QueryEscape(v.Get("token")) + "#token=" + v.Get("token")
			},
			wantSelf: func(base string) string { return base + "/3.0/verify?country=IE#token=[REDACTED]" },
		},
		{
			name:   "href that does not parse",
			method: http.MethodPost,
			self: func(base, q string) string {
				v, _ := url.ParseQuery(q)
				return base + "/3.0/verify%zz?t=" + v.Get("token")
			},
			wantSelf: func(base string) string { return base + "/3.0/verify%zz" },
		},
		{
			name:   "token only parameter",
			method: http.MethodGet,
			self: func(base, q string) string {
				v, _ := url.ParseQuery(q)
				return base + "/3.0/verify?token=" + v.Get("token")
			},
			wantSelf: func(base string) string { return base + "/3.0/verify" },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeService(t)
			f.onVerify = func(w http.ResponseWriter, r *http.Request, tok string) bool {
				var v map[string]any
				if err := json.Unmarshal(f.sample, &v); err != nil {
					t.Error(err)
					return false
				}
				query := r.Form.Encode()
				v["links"] = []any{map[string]any{"rel": "self", "href": tt.self(f.srv.URL, query), "title": "Verify " + tok}}
				v["request"] = map[string]any{"query": query, "token": tok, tok: "key named by the token"}
				data := v["data"].(map[string]any)
				data["trace"] = "GET /3.0/verify?" + query
				form := v["form"].(map[string]any)
				form["message"].(map[string]any)["value"] = "Verified with token " + tok
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(v)
				return true
			}
			c := f.client(t, WithMethod(tt.method))
			resp, err := c.Verify(context.Background(), testAddress)
			if err != nil {
				t.Fatal(err)
			}
			tok := f.secrets()[2]
			if len(resp.Links) != 1 {
				t.Fatalf("links = %+v", resp.Links)
			}
			if got, want := resp.Links[0].Href, tt.wantSelf(f.srv.URL); got != want {
				t.Errorf("self href = %q, want %q", got, want)
			}
			out, err := json.Marshal(resp)
			if err != nil {
				t.Fatal(err)
			}
			for _, form := range []string{tok, url.QueryEscape(tok), url.PathEscape(tok)} {
				if strings.Contains(string(out), form) {
					t.Errorf("re-encoded answer holds %q:\n%s", form, out)
				}
			}
			if got := resp.Form.Message.Value; got != "Verified with token [REDACTED]" {
				t.Errorf("message = %q", got)
			}
			var req map[string]string
			if err := json.Unmarshal(resp.Extra["request"], &req); err != nil {
				t.Fatalf("extra member no longer JSON: %v", err)
			}
			if req["token"] != redacted || req[redacted] != "key named by the token" {
				t.Errorf("extra member request = %v", req)
			}
			if _, ok := resp.Data.Extra["trace"]; !ok {
				t.Errorf("data.trace lost: %v", resp.Data.Extra)
			}
			// The answer still has everything else.
			if resp.Action != ActionSuggest || resp.Address.ID != "IE-A96-X2Y3" {
				t.Errorf("unexpected answer: %+v", resp)
			}
		})
	}
}

// TestVerifyKeepsTokenFreeAnswer checks that an answer without the token
// comes through byte for byte: the redaction changes nothing else.
func TestVerifyKeepsTokenFreeAnswer(t *testing.T) {
	f := newFakeService(t)
	c := f.client(t)
	resp, err := c.Verify(context.Background(), testAddress)
	if err != nil {
		t.Fatal(err)
	}
	var want VerifyResponse
	if err := json.Unmarshal(f.sample, &want); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(resp)
	wantB, _ := json.Marshal(want)
	if string(got) != string(wantB) {
		t.Errorf("answer changed:\n got %s\nwant %s", got, wantB)
	}
}

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
			r, err := decodeRedacted(AppendVerifyResponse(nil, &tt.in), tokenForms(tk))
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
// form of it, is the answer DecodeVerifyResponse gives.
func checkRedacted(t *testing.T, body []byte, tok string) {
	t.Helper()
	forms := tokenForms(tok)
	got, err := decodeRedacted(body, forms)
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
