package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// FuzzDecodeVerifyResponse feeds arbitrary bytes to the answer decoder: it
// must never panic, and whatever it accepts must re-encode to a text that
// decodes and re-encodes to the same bytes.
func FuzzDecodeVerifyResponse(f *testing.F) {
	sample, err := os.ReadFile("testdata/verify_response.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sample)
	for _, s := range []string{
		`{}`, `null`, `{"data":null}`, `{"Action":"x","action":"y"}`, `{"x":1e999}`,
		`{"data":{"location":{"latitude":1},"k":[1,2]}}`, `{"address":{"highlights":[[],[0,3]]}}`,
		`{"a":"\ud800"}`, `{"<":"&"}`, `[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var r VerifyResponse
		if json.Unmarshal(in, &r) != nil {
			return
		}
		first, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("re-encode of accepted input %q: %v", in, err)
		}
		var r2 VerifyResponse
		if err := json.Unmarshal(first, &r2); err != nil {
			t.Fatalf("decode of own encoding %s: %v", first, err)
		}
		second, err := json.Marshal(r2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, second) {
			t.Fatalf("encoding not stable:\n%s\n%s", first, second)
		}
	})
}

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
