package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/service/servicetest"
)

const redacted = "[REDACTED]"

// sample is the interface's sample answer, which the real service never
// gives word for word: these tests serve it (changed) in its place.
func sample(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/verify_response.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

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
			f := newService(t, 0)
			sample := sample(t)
			f.Plan = func(c servicetest.Call) servicetest.Fault {
				tok, base := c.Form.Get("token"), "http://"+c.Request.Host
				var v map[string]any
				if err := json.Unmarshal(sample, &v); err != nil {
					t.Error(err)
					return servicetest.Fault{}
				}
				query := c.Form.Encode()
				v["links"] = []any{map[string]any{"rel": "self", "href": tt.self(base, query), "title": "Verify " + tok}}
				v["request"] = map[string]any{"query": query, "token": tok, tok: "key named by the token"}
				data := v["data"].(map[string]any)
				data["trace"] = "GET /3.0/verify?" + query
				form := v["form"].(map[string]any)
				form["message"].(map[string]any)["value"] = "Verified with token " + tok
				b, err := json.Marshal(v)
				if err != nil {
					t.Error(err)
				}
				return servicetest.Fault{Status: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: string(b)}
			}
			c, base := serve(t, f, api.WithMethod(tt.method))
			resp, err := c.Verify(context.Background(), testAddress)
			if err != nil {
				t.Fatal(err)
			}
			tok := f.Tokens()[0]
			if len(resp.Links) != 1 {
				t.Fatalf("links = %+v", resp.Links)
			}
			if got, want := resp.Links[0].Href, tt.wantSelf(base); got != want {
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
			if resp.Action != api.ActionSuggest || resp.Address.ID != "IE-A96-X2Y3" {
				t.Errorf("unexpected answer: %+v", resp)
			}
		})
	}
}

// TestVerifyKeepsTokenFreeAnswer checks that an answer without the token
// comes through byte for byte: the redaction changes nothing else.
func TestVerifyKeepsTokenFreeAnswer(t *testing.T) {
	f := newService(t, 0)
	sample := sample(t)
	f.Plan = always(servicetest.Fault{Status: http.StatusOK, Body: string(sample)})
	c, _ := serve(t, f)
	resp, err := c.Verify(context.Background(), testAddress)
	if err != nil {
		t.Fatal(err)
	}
	var want api.VerifyResponse
	if err := json.Unmarshal(sample, &want); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(resp)
	wantB, _ := json.Marshal(want)
	if string(got) != string(wantB) {
		t.Errorf("answer changed:\n got %s\nwant %s", got, wantB)
	}
}
