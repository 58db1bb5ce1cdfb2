package service

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/gazetteer"
)

const testKey = "pub_00000000-0000-4000-8000-000000000001"

var testSecret = []byte("0123456789abcdef0123456789abcdef")

// fakeMatcher answers from a table keyed by the first address line; other
// queries get no match (the input tidied up).
type fakeMatcher struct {
	byLine map[string]gazetteer.Match
	mu     sync.Mutex
	last   gazetteer.Query
}

func (f *fakeMatcher) Match(q gazetteer.Query) gazetteer.Match {
	f.mu.Lock()
	f.last = q
	f.mu.Unlock()
	if len(q.Lines) > 0 {
		if m, ok := f.byLine[q.Lines[0]]; ok {
			return m
		}
	}
	return gazetteer.Match{Verdict: gazetteer.VerdictConfirm, Level: gazetteer.LevelNone,
		Lines: q.Lines, City: q.City, Region: q.Region, Country: q.Country}
}

type panicMatcher struct{}

func (panicMatcher) Match(gazetteer.Query) gazetteer.Match { panic("boom") }

func newTestService(t testing.TB, m Matcher, ins []Integration, opts ...Option) *Service {
	t.Helper()
	if ins == nil {
		in := NewIntegration(testKey)
		ins = []Integration{in}
	}
	s, err := New(m, ins, append([]Option{WithSigningSecret(testSecret)}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func basic(key string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(key+":"))
}

// do serves one request and returns the recorder.
func do(h http.Handler, method, target string, body string, hdr map[string]string) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r := httptest.NewRequest(method, target, rd)
	if body != "" && method == http.MethodPost {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		if v == "" {
			r.Header.Del(k)
		} else {
			r.Header.Set(k, v)
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func token(t testing.TB, h http.Handler, key string) string {
	t.Helper()
	w := do(h, http.MethodGet, "/3.0/createtoken", "", map[string]string{"Authorization": basic(key)})
	if w.Code != http.StatusOK {
		t.Fatalf("createtoken: %d %s", w.Code, w.Body)
	}
	var tr api.TokenResponse
	if err := json.Unmarshal(w.Body.Bytes(), &tr); err != nil {
		t.Fatalf("createtoken body: %v", err)
	}
	return tr.Token
}

// query builds verify parameters: lines, then name/value pairs.
func query(lines []string, kv ...string) url.Values {
	v := url.Values{}
	for _, l := range lines {
		v.Add("addressLine", l)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

func decodeVerify(t testing.TB, w *httptest.ResponseRecorder) api.VerifyResponse {
	t.Helper()
	if w.Code != http.StatusOK {
		t.Fatalf("verify: status %d: %s", w.Code, w.Body)
	}
	var v api.VerifyResponse
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("verify body: %v\n%s", err, w.Body)
	}
	return v
}

// envelope is the exact shape of an error answer.
type envelope struct {
	Type string `json:"type"`
	Form struct {
		Language string `json:"language"`
		Message  struct {
			ID       int    `json:"id"`
			Severity string `json:"severity"`
			Value    string `json:"value"`
		} `json:"message"`
	} `json:"form"`
}

func decodeError(t testing.TB, body []byte) envelope {
	t.Helper()
	var e envelope
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("error body is not the envelope: %v\n%s", err, body)
	}
	if e.Type != "error" || e.Form.Language != "en" || e.Form.Message.Severity != "Error" || e.Form.Message.Value == "" {
		t.Fatalf("bad envelope: %+v", e)
	}
	return e
}
