package service

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzHandler sends arbitrary queries and bodies, with a valid token or
// not: the handler must never panic and must always answer with JSON, the
// error envelope for every status but 200.
func FuzzHandler(f *testing.F) {
	s := newTestService(f, fixtures(), nil, WithMaxBodyBytes(4096))
	tok := token(f, s, testKey)
	f.Add("GET", "/3.0/verify", "addressLine=1+Main+Street&country=IE", "", true)
	f.Add("POST", "/3.0/verify", "", "addressLine=1+Main+Street&country=Ireland&city=D%C3%BAn", true)
	f.Add("POST", "/3.0/verify", "country=IE", "addressLine=%zz", false)
	f.Add("GET", "/3.0/verify", "addressLine=&addressLine=%00&country=%ff", "", true)
	f.Add("GET", "/3.0/createtoken", "", "", false)
	f.Add("DELETE", "/3.0/verify", "a=b;c", "x", true)
	f.Add("GET", "/nope", "token=abc", "", false)
	f.Fuzz(func(t *testing.T, method, path, rawQuery, body string, withToken bool) {
		switch method {
		case "GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS":
		default:
			method = "GET"
		}
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		u := &url.URL{Path: path, RawQuery: rawQuery}
		if withToken {
			if u.RawQuery != "" {
				u.RawQuery += "&"
			}
			u.RawQuery += "token=" + tok
		}
		r := httptest.NewRequest("GET", "/", strings.NewReader(body))
		r.Method = method
		r.URL = u
		r.RequestURI = u.RequestURI()
		r.ContentLength = int64(len(body))
		if method == "POST" {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if path == "/healthz" && w.Code == http.StatusOK {
			return
		}
		if method == "HEAD" {
			return
		}
		var v map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
			t.Fatalf("%s %s: not JSON (%d): %v\n%q", method, u, w.Code, err, w.Body)
		}
		switch {
		case w.Code == http.StatusOK:
			if v["type"] != "verify" && v["type"] != "Token Create" {
				t.Fatalf("200 with type %v", v["type"])
			}
		case w.Code >= 400:
			e := decodeError(t, w.Body.Bytes())
			if e.Form.Message.ID/10 != w.Code && !(w.Code == 400 && e.Form.Message.ID/10 == 400) {
				t.Fatalf("status %d with id %d", w.Code, e.Form.Message.ID)
			}
			if w.Code == 500 {
				t.Fatalf("internal error: %s", w.Body)
			}
		default:
			t.Fatalf("status %d", w.Code)
		}
		if strings.Contains(w.Body.String(), tok) {
			t.Fatalf("answer echoes the token")
		}
	})
}
