package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name, base string
		key        Secret
		opts       []Option
		wantErr    string
		wantBase   string
	}{
		{name: "plain", base: "https://api.example.com", key: testKey, wantBase: "https://api.example.com"},
		{name: "trailing slash and prefix", base: "http://h:8080/av/", key: testKey, wantBase: "http://h:8080/av"},
		{name: "no scheme", base: "api.example.com", key: testKey, wantErr: "want http:// or https://"},
		{name: "ftp", base: "ftp://api.example.com", key: testKey, wantErr: "want http:// or https://"},
		{name: "query", base: "https://h/?token=x", key: testKey, wantErr: "query"},
		{name: "bad URL", base: "https://h/%zz", key: testKey, wantErr: "does not parse"},
		{name: "no key", base: "https://h", key: "  ", wantErr: "no API key"},
		{name: "bad method", base: "https://h", key: testKey, opts: []Option{WithMethod("PUT")}, wantErr: "want GET or POST"},
		{name: "user info redacted", base: "ftp://user:pw@h", key: testKey, wantErr: "want http"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.base, tt.key, tt.opts...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New() error = %v, want it to mention %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "pw") {
					t.Errorf("error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.base != tt.wantBase {
				t.Errorf("base = %q, want %q", c.base, tt.wantBase)
			}
		})
	}
}

// TestRequestEncoding checks the bytes on the wire for GET and POST.
func TestRequestEncoding(t *testing.T) {
	tests := []struct {
		name, method string
		addr         Address
		want         string // the parameters after the token
	}{
		{
			name:   "POST repeated lines and UTF-8",
			method: http.MethodPost,
			addr: Address{
				Lines: []string{"Flat 2", "", "  ", "12 Georges St Upr"}, City: "Dún Laoghaire",
				Region: "Co. Dublin", Country: "IE", Language: "en",
			},
			want: "addressLine=Flat+2&addressLine=12+Georges+St+Upr&city=D%C3%BAn+Laoghaire&region=Co.+Dublin&country=IE&language=en",
		},
		{
			name:   "GET repeated lines and UTF-8",
			method: http.MethodGet,
			addr:   Address{Lines: []string{"Flat 2", "12 Georges St Upr"}, City: "Dún Laoghaire", Country: "IE"},
			want:   "addressLine=Flat+2&addressLine=12+Georges+St+Upr&city=D%C3%BAn+Laoghaire&country=IE",
		},
		{
			name:   "reserved characters",
			method: http.MethodPost,
			addr:   Address{Lines: []string{"1 A&B Road = #5 +x/y?"}, Country: "United Kingdom"},
			want:   "addressLine=1+A%26B+Road+%3D+%235+%2Bx%2Fy%3F&country=United+Kingdom",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeService(t)
			var got struct {
				method, path, query, body, contentType, ua, accept string
			}
			f.onVerify = func(w http.ResponseWriter, r *http.Request, _ string) bool {
				got.method, got.path, got.query = r.Method, r.URL.Path, r.URL.RawQuery
				got.contentType, got.ua, got.accept = r.Header.Get("Content-Type"), r.Header.Get("User-Agent"), r.Header.Get("Accept")
				return false
			}
			// ParseForm consumes the body, so capture it in a wrapper.
			inner := f.srv.Config.Handler
			f.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/3.0/verify" {
					b, _ := io.ReadAll(r.Body)
					got.body = string(b)
					r.Body = io.NopCloser(bytes.NewReader(b))
				}
				inner.ServeHTTP(w, r)
			})
			c := f.client(t, WithMethod(tt.method), WithUserAgent("test-agent/1"))
			if _, err := c.Verify(context.Background(), tt.addr); err != nil {
				t.Fatal(err)
			}
			tok := "token=" + f.secrets()[2]
			wantQuery, wantBody, wantCT := "", tok+"&"+tt.want, "application/x-www-form-urlencoded"
			if tt.method == http.MethodGet {
				wantQuery, wantBody, wantCT = tok+"&"+tt.want, "", ""
			}
			if got.method != tt.method || got.path != "/3.0/verify" {
				t.Errorf("request %s %s, want %s /3.0/verify", got.method, got.path, tt.method)
			}
			if got.query != wantQuery {
				t.Errorf("query\n got %q\nwant %q", got.query, wantQuery)
			}
			if got.body != wantBody {
				t.Errorf("body\n got %q\nwant %q", got.body, wantBody)
			}
			if got.contentType != wantCT || got.ua != "test-agent/1" || got.accept != "application/json" {
				t.Errorf("headers: Content-Type %q User-Agent %q Accept %q", got.contentType, got.ua, got.accept)
			}
		})
	}
}

func TestInvalidAddressNotSent(t *testing.T) {
	tests := []struct {
		name string
		addr Address
		want string
	}{
		{"no lines", Address{Country: "IE"}, "no address line"},
		{"blank lines", Address{Lines: []string{"", " \t"}, Country: "IE"}, "no address line"},
		{"no country", Address{Lines: []string{"1 Main St"}}, "no country"},
		{"blank country", Address{Lines: []string{"1 Main St"}, Country: " "}, "no country"},
	}
	f := newFakeService(t)
	c := f.client(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Verify(context.Background(), tt.addr)
			if !errors.Is(err, ErrInvalidAddress) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrInvalidAddress: %s", err, tt.want)
			}
			if k := Classify(err); k != KindPermanent {
				t.Errorf("Classify = %v, want permanent", k)
			}
		})
	}
	if n := f.tokenCalls.Load() + f.verifyCalls.Load(); n != 0 {
		t.Errorf("%d requests sent for invalid addresses", n)
	}
}

func TestVerifyDecodesAnswer(t *testing.T) {
	f := newFakeService(t)
	c := f.client(t)
	resp, err := c.Verify(context.Background(), testAddress)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Action != ActionSuggest || resp.Address.ID != "IE-A96-X2Y3" || resp.Data.Location == nil {
		t.Errorf("unexpected answer: %+v", resp)
	}
	// A second call reuses the token.
	if _, err := c.Verify(context.Background(), testAddress); err != nil {
		t.Fatal(err)
	}
	want := ClientStats{TokenRequests: 1, VerifyRequests: 2}
	if got := c.Stats(); got != want {
		t.Errorf("Stats() = %+v, want %+v", got, want)
	}
}

// TestConcurrent401 sends 200 requests that all fail with the same expired
// token at the same time: exactly one new token must be fetched.
func TestConcurrent401(t *testing.T) {
	const n = 200
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		t.Run(method, func(t *testing.T) {
			f := newFakeService(t)
			c := f.client(t, WithMethod(method))
			ctx := context.Background()
			if _, err := c.Verify(ctx, testAddress); err != nil {
				t.Fatal(err)
			}
			first := f.secrets()[2]
			f.expire()

			// Hold every 401 until all n requests have arrived with the
			// old token, so they are all in flight when the refresh starts.
			var arrived atomic.Int64
			release := make(chan struct{})
			f.onVerify = func(w http.ResponseWriter, r *http.Request, tok string) bool {
				if tok != first {
					return false
				}
				if arrived.Add(1) == n {
					close(release)
				}
				select {
				case <-release:
				case <-r.Context().Done():
				}
				return false
			}

			var wg sync.WaitGroup
			errs := make(chan error, n)
			for range n {
				wg.Go(func() {
					if _, err := c.Verify(ctx, testAddress); err != nil {
						errs <- err
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if got := f.tokenCalls.Load(); got != 2 {
				t.Errorf("createtoken called %d times, want 2 (one extra)", got)
			}
			st := c.Stats()
			if st.TokenRefreshes != 1 || st.TokenRetries != n || st.VerifyRequests != 2*n+1 {
				t.Errorf("Stats() = %+v", st)
			}
		})
	}
}

// TestLifetimeRefresh crosses the lifetime hint with 200 requests in flight:
// one proactive refresh, no 401 at all. The client runs in a synctest
// bubble, whose clock moves only when the test sleeps; the service runs
// outside it, on real sockets.
func TestLifetimeRefresh(t *testing.T) {
	const n = 200
	f := newFakeService(t)
	synctest.Test(t, func(t *testing.T) {
		c := f.client(t, WithTokenLifetime(10*time.Minute))
		// Idle connections read their sockets in the bubble: no goroutine
		// there may wait on the network while the clock is to move, and
		// none may outlive the bubble.
		idle := c.hc.CloseIdleConnections
		defer idle()
		ctx := context.Background()
		if _, err := c.Verify(ctx, testAddress); err != nil {
			t.Fatal(err)
		}
		idle()
		time.Sleep(9 * time.Minute) // 10m - min(10m/10, 1m): due now
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				if _, err := c.Verify(ctx, testAddress); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if got := f.tokenCalls.Load(); got != 2 {
			t.Errorf("createtoken called %d times, want 2", got)
		}
		if st := c.Stats(); st.TokenRefreshes != 1 || st.TokenRetries != 0 {
			t.Errorf("Stats() = %+v", st)
		}
		// Before the next refresh is due, no further token is fetched.
		idle()
		time.Sleep(8 * time.Minute)
		if _, err := c.Verify(ctx, testAddress); err != nil {
			t.Fatal(err)
		}
		if got := f.tokenCalls.Load(); got != 2 {
			t.Errorf("createtoken called %d times before the lifetime, want 2", got)
		}
	})
}

func TestFreshTokenRejectedIsFatal(t *testing.T) {
	rejectAll := func(w http.ResponseWriter, r *http.Request, tok string) bool {
		writeEnvelope(w, http.StatusUnauthorized, 4012, "Token "+tok+" is not valid")
		return true
	}
	t.Run("first token", func(t *testing.T) {
		f := newFakeService(t)
		f.onVerify = rejectAll
		c := f.client(t)
		_, err := c.Verify(context.Background(), testAddress)
		checkUnauthorized(t, err, f)
		if got := f.tokenCalls.Load(); got != 1 {
			t.Errorf("createtoken called %d times, want 1 (no refresh for a fresh token)", got)
		}
	})
	t.Run("after refresh", func(t *testing.T) {
		f := newFakeService(t)
		c := f.client(t)
		if _, err := c.Verify(context.Background(), testAddress); err != nil {
			t.Fatal(err)
		}
		f.onVerify = rejectAll
		_, err := c.Verify(context.Background(), testAddress)
		checkUnauthorized(t, err, f)
		if got := f.tokenCalls.Load(); got != 2 {
			t.Errorf("createtoken called %d times, want 2 (one refresh)", got)
		}
		if got := f.verifyCalls.Load(); got != 3 {
			t.Errorf("verify called %d times, want 3", got)
		}
	})
}

func TestBadKeyIsFatal(t *testing.T) {
	f := newFakeService(t)
	c, err := New(f.srv.URL, "pub_00000000-bad0-key0-0000-000000000000")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Verify(context.Background(), testAddress)
	checkUnauthorized(t, err, f)
	if !strings.Contains(err.Error(), "Invalid API key Basic [REDACTED]") {
		t.Errorf("echoed key not scrubbed as expected: %v", err)
	}
	assertNoSecrets(t, err, []string{"pub_00000000-bad0-key0-0000-000000000000",
		base64.StdEncoding.EncodeToString([]byte("pub_00000000-bad0-key0-0000-000000000000:"))})
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusUnauthorized || se.Op != "createtoken" {
		t.Errorf("want the createtoken 401 as a StatusError, got %#v", se)
	}
	if f.verifyCalls.Load() != 0 {
		t.Error("verify was called without a token")
	}
}

func checkUnauthorized(t *testing.T, err error, f *fakeService) {
	t.Helper()
	if !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("err = %v, want ErrUnauthorized", err)
	}
	if k := Classify(err); k != KindFatal {
		t.Errorf("Classify = %v, want fatal", k)
	}
	assertNoSecrets(t, err, f.secrets())
}

func TestStatusErrors(t *testing.T) {
	// The clock of a synctest bubble, where each case runs: a Retry-After
	// date is read against it.
	date := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		handler    func(w http.ResponseWriter)
		kind       Kind
		status     int
		message    string
		retryAfter time.Duration
	}{
		{name: "400 envelope", handler: func(w http.ResponseWriter) {
			writeEnvelope(w, 400, 4001, "Missing parameter: addressLine")
		}, kind: KindPermanent, status: 400, message: "Missing parameter: addressLine"},
		{name: "413", handler: func(w http.ResponseWriter) { writeEnvelope(w, 413, 4130, "Too large") },
			kind: KindPermanent, status: 413, message: "Too large"},
		{name: "422 no body", handler: func(w http.ResponseWriter) { w.WriteHeader(422) },
			kind: KindPermanent, status: 422},
		{name: "403", handler: func(w http.ResponseWriter) { writeEnvelope(w, 403, 4030, "Location not allowed") },
			kind: KindFatal, status: 403, message: "Location not allowed"},
		{name: "404 html", handler: func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(404)
			_, _ = io.WriteString(w, "<html>Not Found</html>")
		}, kind: KindFatal, status: 404},
		{name: "405", handler: func(w http.ResponseWriter) { writeEnvelope(w, 405, 4050, "Method not allowed") },
			kind: KindFatal, status: 405, message: "Method not allowed"},
		{name: "500", handler: func(w http.ResponseWriter) { writeEnvelope(w, 500, 5000, "Internal error") },
			kind: KindTransient, status: 500, message: "Internal error"},
		{name: "503 retry after", handler: func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(503)
		}, kind: KindTransient, status: 503, retryAfter: 7 * time.Second},
		{name: "429 seconds", handler: func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "3")
			writeEnvelope(w, 429, 4290, "Rate limit exceeded")
		}, kind: KindRateLimited, status: 429, message: "Rate limit exceeded", retryAfter: 3 * time.Second},
		{name: "429 HTTP date", handler: func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", date.Add(90*time.Second).Format(http.TimeFormat))
			writeEnvelope(w, 429, 4290, "Rate limit exceeded")
		}, kind: KindRateLimited, status: 429, message: "Rate limit exceeded", retryAfter: 90 * time.Second},
		{name: "429 without Retry-After", handler: func(w http.ResponseWriter) { w.WriteHeader(429) },
			kind: KindRateLimited, status: 429},
		{name: "redirect", handler: func(w http.ResponseWriter) {
			w.Header().Set("Location", "https://elsewhere.example/3.0/verify?token=tok_5e1d9c7b2a4f8e6d_001")
			w.WriteHeader(http.StatusMovedPermanently)
		}, kind: KindFatal, status: 301},
	}
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		for _, tt := range tests {
			t.Run(method+"/"+tt.name, func(t *testing.T) {
				f := newFakeService(t)
				f.onVerify = func(w http.ResponseWriter, _ *http.Request, _ string) bool {
					tt.handler(w)
					return true
				}
				synctest.Test(t, func(t *testing.T) {
					c := f.client(t, WithMethod(method))
					defer c.hc.CloseIdleConnections() // no socket reader may outlive the bubble
					_, err := c.Verify(context.Background(), testAddress)
					if err == nil {
						t.Fatal("no error")
					}
					assertNoSecrets(t, err, f.secrets())
					if k := Classify(err); k != tt.kind {
						t.Errorf("Classify(%v) = %v, want %v", err, k, tt.kind)
					}
					var se *StatusError
					if !errors.As(err, &se) {
						t.Fatalf("%v is not a *StatusError", err)
					}
					if se.StatusCode != tt.status || se.Message != tt.message || se.Op != "verify" {
						t.Errorf("StatusError = %+v", se)
					}
					if se.RetryAfter != tt.retryAfter {
						t.Errorf("RetryAfter = %v, want %v", se.RetryAfter, tt.retryAfter)
					}
					var rl *RateLimitedError
					if got := errors.As(err, &rl); got != (tt.status == 429) {
						t.Fatalf("RateLimitedError: %v, want %v", got, tt.status == 429)
					}
					if rl != nil && rl.RetryAfter != tt.retryAfter {
						t.Errorf("RateLimitedError.RetryAfter = %v, want %v", rl.RetryAfter, tt.retryAfter)
					}
				})
			})
		}
	}
}

// hijack answers with raw bytes and closes the connection, as a crashing
// server or a dropped link would.
func hijack(t testing.TB, w http.ResponseWriter, raw string) {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Error(err)
		return
	}
	_, _ = buf.WriteString(raw)
	_ = buf.Flush()
	_ = conn.Close()
}

func TestTransportErrors(t *testing.T) {
	tests := []struct {
		name    string
		handler func(t testing.TB, w http.ResponseWriter, r *http.Request)
		client  *http.Client
		want    string
	}{
		{name: "truncated JSON", handler: func(_ testing.TB, w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, `{"type":"verify","action":"Acc`)
		}, want: "unusable answer"},
		{name: "non-JSON body", handler: func(_ testing.TB, w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, `<html>gateway</html>`)
		}, want: "unusable answer"},
		{name: "empty body", handler: func(_ testing.TB, _ http.ResponseWriter, _ *http.Request) {},
			want: "unusable answer"},
		{name: "token in the path of a syntax error", handler: func(_ testing.TB, w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `{"x":{"`+r.Form.Get("token")+`":[1,}}`)
		}, want: "unusable answer"},
		{name: "token in the path of a type error", handler: func(_ testing.TB, w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `{"data":{"`+r.Form.Get("token")+`":1,"location":{"latitude":"x"}}}`)
		}, want: "unusable answer"},
		{name: "closed mid-response", handler: func(t testing.TB, w http.ResponseWriter, _ *http.Request) {
			hijack(t, w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{\"type\":\"verify\",")
		}, want: "connection closed early"},
		{name: "closed before answering", handler: func(t testing.TB, w http.ResponseWriter, _ *http.Request) {
			hijack(t, w, "")
		}, want: "EOF"},
		{name: "client timeout", handler: func(_ testing.TB, _ http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}, client: &http.Client{Timeout: 50 * time.Millisecond}, want: "timed out"},
	}
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		for _, tt := range tests {
			t.Run(method+"/"+tt.name, func(t *testing.T) {
				f := newFakeService(t)
				f.onVerify = func(w http.ResponseWriter, r *http.Request, _ string) bool {
					tt.handler(t, w, r)
					return true
				}
				c := f.client(t, WithMethod(method), WithHTTPClient(tt.client))
				_, err := c.Verify(context.Background(), testAddress)
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want it to mention %q", err, tt.want)
				}
				if k := Classify(err); k != KindTransient {
					t.Errorf("Classify(%v) = %v, want transient", err, k)
				}
				assertNoSecrets(t, err, f.secrets())
				if strings.Contains(err.Error(), "token=") {
					t.Errorf("error shows the query: %v", err)
				}
			})
		}
	}
}

func TestCreateTokenFailures(t *testing.T) {
	tests := []struct {
		name    string
		handler func(w http.ResponseWriter)
		kind    Kind
	}{
		{"200 HTML", func(w http.ResponseWriter) { _, _ = io.WriteString(w, "<html>login</html>") }, KindFatal},
		{"200 without token", func(w http.ResponseWriter) { _, _ = io.WriteString(w, `{"type":"Token Create"}`) }, KindFatal},
		{"404", func(w http.ResponseWriter) { w.WriteHeader(404) }, KindFatal},
		{"403", func(w http.ResponseWriter) { writeEnvelope(w, 403, 4031, "Key disabled") }, KindFatal},
		{"500", func(w http.ResponseWriter) { w.WriteHeader(500) }, KindTransient},
		{"429", func(w http.ResponseWriter) { w.Header().Set("Retry-After", "2"); w.WriteHeader(429) }, KindRateLimited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeService(t)
			f.onToken = func(w http.ResponseWriter, _ *http.Request) bool { tt.handler(w); return true }
			c := f.client(t)
			_, err := c.Verify(context.Background(), testAddress)
			if k := Classify(err); k != tt.kind {
				t.Errorf("Classify(%v) = %v, want %v", err, k, tt.kind)
			}
			if !strings.Contains(err.Error(), "createtoken") {
				t.Errorf("error does not name the endpoint: %v", err)
			}
			assertNoSecrets(t, err, f.secrets())
			if f.verifyCalls.Load() != 0 {
				t.Error("verify was called without a token")
			}
		})
	}
}

// TestCancelledWaiter checks that a caller giving up does not fail the
// others waiting on the same token fetch, and that the fetch is cancelled
// when nobody waits any more.
func TestCancelledWaiter(t *testing.T) {
	t.Run("others keep waiting", func(t *testing.T) {
		f := newFakeService(t)
		reached := make(chan struct{}, 1)
		release := make(chan struct{})
		f.onToken = func(_ http.ResponseWriter, r *http.Request) bool {
			reached <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
				t.Error("the fetch was cancelled while a caller still waited")
			}
			return false
		}
		c := f.client(t)
		joined := make(chan struct{}, 2)
		c.tokens.onJoin = func() { joined <- struct{}{} }

		ctxA, cancelA := context.WithCancel(context.Background())
		errA := make(chan error, 1)
		go func() { _, err := c.Verify(ctxA, testAddress); errA <- err }()
		<-reached
		<-joined
		errB := make(chan error, 1)
		go func() { _, err := c.Verify(context.Background(), testAddress); errB <- err }()
		<-joined

		cancelA()
		if err := <-errA; !errors.Is(err, context.Canceled) || Classify(err) != KindFatal {
			t.Errorf("cancelled caller: err = %v (kind %v), want context.Canceled, fatal", err, Classify(err))
		}
		close(release)
		if err := <-errB; err != nil {
			t.Errorf("other caller failed: %v", err)
		}
		if got := f.tokenCalls.Load(); got != 1 {
			t.Errorf("createtoken called %d times, want 1", got)
		}
	})
	t.Run("last waiter cancels the fetch", func(t *testing.T) {
		f := newFakeService(t)
		reached := make(chan struct{}, 1)
		cancelled := make(chan struct{})
		f.onToken = func(_ http.ResponseWriter, r *http.Request) bool {
			reached <- struct{}{}
			<-r.Context().Done()
			close(cancelled)
			return true
		}
		c := f.client(t)
		ctx, cancel := context.WithCancel(context.Background())
		errC := make(chan error, 1)
		go func() { _, err := c.Verify(ctx, testAddress); errC <- err }()
		<-reached
		cancel()
		if err := <-errC; !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		<-cancelled // the server saw the fetch go away
	})
	t.Run("a later caller starts afresh", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// The abandoned fetch outlives its cancellation until hold
			// closes: a caller that joined it would wait for it, and the
			// bubble would report the deadlock.
			hold := make(chan struct{})
			var calls atomic.Int64
			ts := &tokenSource{log: zerolog.Nop(), stats: &clientStats{}, fetch: func(ctx context.Context) (string, error) {
				if calls.Add(1) == 1 {
					<-ctx.Done()
					<-hold
					return "", ctx.Err()
				}
				return "tok_second", nil
			}}
			defer close(hold)
			ctx, cancel := context.WithCancel(context.Background())
			errA := make(chan error, 1)
			go func() { _, _, err := ts.get(ctx, 1); errA <- err }()
			synctest.Wait()
			cancel()
			if err := <-errA; !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
			synctest.Wait() // the first fetch now waits on hold
			tok, gen, err := ts.get(context.Background(), 1)
			if err != nil || tok != "tok_second" || gen != 1 {
				t.Errorf("later caller: %q, generation %d, %v; want the second fetch's token", tok.Reveal(), gen, err)
			}
			if n := calls.Load(); n != 2 {
				t.Errorf("%d fetches, want 2", n)
			}
		})
	})
}

// TestLogsNeverShowSecrets also prints the Client itself.
func TestLogsNeverShowSecrets(t *testing.T) {
	f := newFakeService(t)
	var buf syncBuffer
	c := f.client(t, WithLogger(zerolog.New(&buf).Level(zerolog.DebugLevel)))
	ctx := context.Background()
	if _, err := c.Verify(ctx, testAddress); err != nil {
		t.Fatal(err)
	}
	f.expire()
	if _, err := c.Verify(ctx, testAddress); err != nil {
		t.Fatal(err)
	}
	out := buf.String() + fmt.Sprintf("%+v %#v %v %+v", c, c, c, c.tokens)
	if !strings.Contains(out, "token refreshed") || !strings.Contains(out, `"reason":"rejected"`) {
		t.Errorf("no refresh line in the log:\n%s", out)
	}
	for _, s := range f.secrets() {
		if strings.Contains(out, s) {
			t.Errorf("log leaks a secret:\n%s", out)
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestConnectionRefused covers a dead server with GET, whose request URL
// would carry the token if net/http's error were passed on unchanged.
func TestConnectionRefused(t *testing.T) {
	f := newFakeService(t)
	c := f.client(t, WithMethod(http.MethodGet))
	ctx := context.Background()
	if _, err := c.Verify(ctx, testAddress); err != nil {
		t.Fatal(err)
	}
	f.srv.CloseClientConnections()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	c.base = dead.URL
	_, err := c.Verify(ctx, testAddress)
	if err == nil {
		t.Fatal("no error from a closed server")
	}
	if k := Classify(err); k != KindTransient {
		t.Errorf("Classify(%v) = %v, want transient", err, k)
	}
	assertNoSecrets(t, err, f.secrets())
}

// FuzzQueryEscape holds the encoded address to url.Values' encoding of the
// same parameters.
func FuzzQueryEscape(f *testing.F) {
	for _, s := range []string{"", "12 Main St", "Dún Laoghaire & Co. #5/6?x=y+z%20~._-", "\x00\xff", "a=b&c"} {
		f.Add(s, "IE")
	}
	f.Fuzz(func(t *testing.T, v, country string) {
		a := Address{Lines: []string{v, "x " + v}, City: v, Country: country, Language: v}
		got, err := encodeAddress(a)
		if err != nil {
			return
		}
		var want strings.Builder
		add := func(name, value string) {
			if want.Len() > 0 {
				want.WriteByte('&')
			}
			want.WriteString(url.QueryEscape(name) + "=" + url.QueryEscape(value))
		}
		for _, l := range a.Lines {
			if strings.TrimSpace(l) != "" {
				add("addressLine", l)
			}
		}
		for _, p := range [][2]string{{"city", a.City}, {"region", a.Region}, {"country", a.Country}, {"language", a.Language}} {
			if p[0] == "country" || strings.TrimSpace(p[1]) != "" {
				add(p[0], p[1])
			}
		}
		if got != want.String() {
			t.Fatalf("encodeAddress(%+v) = %q, want %q", a, got, want.String())
		}
	})
}
