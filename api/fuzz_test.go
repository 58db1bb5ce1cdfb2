package api

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// FuzzStatusError feeds arbitrary error bodies and Retry-After values to the
// error decoder: no panic, no negative wait, and a secret in the body never
// reaches the error text.
func FuzzStatusError(f *testing.F) {
	f.Add(400, []byte(`{"type":"error","form":{"language":"en","message":{"id":4001,"severity":"Error","value":"Missing tok_secret_1234"}}}`), "3")
	f.Add(429, []byte(`<html>`), "Sun, 22 Nov 2026 06:00:00 GMT")
	f.Add(503, []byte(``), "-1")
	f.Add(301, []byte(`{}`), "1e300")
	now := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, code int, body []byte, retryAfter string) {
		if code < 100 || code > 999 {
			return
		}
		h := http.Header{}
		h.Set("Retry-After", retryAfter)
		h.Set("Location", "https://x.example/3.0/verify?token=tok_secret_1234")
		se := newStatusError("verify", &http.Response{StatusCode: code, Header: h}, body, now)
		if se.RetryAfter < 0 {
			t.Fatalf("negative RetryAfter %v from %q", se.RetryAfter, retryAfter)
		}
		se.Message = scrub(se.Message, "tok_secret_1234")
		if msg := se.Error(); strings.Contains(msg, "tok_secret_1234") {
			t.Fatalf("secret in %q", msg)
		}
		_ = Classify(se)
	})
}
