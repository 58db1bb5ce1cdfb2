package api

import (
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
		check func(t *testing.T, r VerifyResponse)
	}{
		{
			name: "strings everywhere",
			in: VerifyResponse{
				Input:   InputAddress{Lines: []Line{{Key: "AddressLine1", Value: "a " + tok}}, Label: []string{tok}},
				Address: MatchedAddress{City: &Value{Value: "x" + url.QueryEscape(tok)}},
				Links:   []Link{{Rel: "self", Href: "https://h/" + url.PathEscape(tok) + "?token=" + url.QueryEscape(tok)}},
			},
			check: func(t *testing.T, r VerifyResponse) {
				if r.Input.Lines[0].Value != "a [REDACTED]" || r.Input.Label[0] != redacted ||
					r.Address.City.Value != "x[REDACTED]" || r.Links[0].Href != "https://h/[REDACTED]" {
					t.Errorf("got %+v", r)
				}
			},
		},
		{
			name: "raw JSON, escaped and plain",
			in: VerifyResponse{
				Extra: map[string]json.RawMessage{"echo": json.RawMessage(`{"t":"tok/\"x\"\u003c1\u003e"}`)},
				Data:  Data{Extra: map[string]json.RawMessage{"n": json.RawMessage(`1`)}},
			},
			check: func(t *testing.T, r VerifyResponse) {
				if got := string(r.Extra["echo"]); got != `{"t":"[REDACTED]"}` {
					t.Errorf("echo = %s", got)
				}
				if got := string(r.Data.Extra["n"]); got != `1` {
					t.Errorf("n = %s", got)
				}
			},
		},
		{
			name: "replacement that breaks the JSON",
			tok:  `tok/":"v`,
			in:   VerifyResponse{Extra: map[string]json.RawMessage{"odd": json.RawMessage(`{"tok/":"v"}`)}},
			check: func(t *testing.T, r VerifyResponse) {
				if got := string(r.Extra["odd"]); got != `"[REDACTED]"` {
					t.Errorf("odd = %s", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, tk := tt.in, tt.tok
			if tk == "" {
				tk = tok
			}
			redactToken(&r, tk)
			tt.check(t, r)
			out, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(out), "tok/") || !json.Valid(out) {
				t.Errorf("re-encoding holds the token: %s", out)
			}
		})
	}
}

// checkRedactDecoded holds redactDecoded, which may skip the walk over the
// answer when the body shows no form of the token, to redactToken, which
// always walks it: the same answer for the same body.
func checkRedactDecoded(t *testing.T, body []byte, tok string) {
	t.Helper()
	var want, got VerifyResponse
	if want.UnmarshalJSON(body) != nil || got.UnmarshalJSON(body) != nil {
		return
	}
	redactToken(&want, tok)
	redactDecoded(&got, tok, nil, body)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("token %q, body %q:\nredactDecoded %+v\nredactToken   %+v", tok, body, got, want)
	}
}

var redactTokens = []string{"AbC-123_xyz", `tok/"x"<1>`, "a&b=c", "é\u2028", "t", ""}

func TestRedactDecodedMatchesRedactToken(t *testing.T) {
	bodies := fastSeeds(t)
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
			checkRedactDecoded(t, b, tok)
		}
	}
}

func FuzzRedactDecodedMatchesRedactToken(f *testing.F) {
	for i, b := range fastSeeds(f) {
		f.Add(b, redactTokens[i%len(redactTokens)])
	}
	f.Fuzz(func(t *testing.T, body []byte, tok string) {
		checkRedactDecoded(t, body, tok)
	})
}

// oldDropTokenParam is dropTokenParam as it was, splitting every query:
// the reference for the version that looks before splitting.
func oldDropTokenParam(href string) string {
	if !strings.ContainsAny(href, "?#") {
		return href
	}
	if _, err := url.Parse(href); err != nil {
		before, _, _ := strings.Cut(href, "?")
		before, _, _ = strings.Cut(before, "#")
		return before
	}
	rest, frag, hasFrag := strings.Cut(href, "#")
	path, query, hasQuery := strings.Cut(rest, "?")
	if !hasQuery {
		return href
	}
	params := strings.Split(query, "&")
	kept := params[:0]
	for _, p := range params {
		name, _, _ := strings.Cut(p, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if !strings.EqualFold(strings.TrimSpace(name), "token") {
			kept = append(kept, p)
		}
	}
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

func FuzzDropTokenParam(f *testing.F) {
	for _, s := range []string{"https://h/v?a=1&token=T&b=2", "https://h/v?t%6Fken=T&a=1", "https://h/v?token", "https://h/v?&&", "https://h/%zz?x", "https://h/v? TOKEN =1#f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, href string) {
		if got, want := dropTokenParam(href), oldDropTokenParam(href); got != want {
			t.Fatalf("dropTokenParam(%q) = %q, want %q", href, got, want)
		}
	})
}
