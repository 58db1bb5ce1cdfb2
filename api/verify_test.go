package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/service"
	"github.com/addrclean/addrclean/service/servicetest"
	"github.com/rs/zerolog"
)

// TestRequestEncoding checks the bytes on the wire for GET and POST.
func TestRequestEncoding(t *testing.T) {
	tests := []struct {
		name, method string
		addr         api.Address
		want         string // the parameters after the token
	}{
		{
			name:   "POST repeated lines and UTF-8",
			method: http.MethodPost,
			addr: api.Address{
				Lines: []string{"Flat 2", "", "  ", "12 Georges St Upr"}, City: "Dún Laoghaire",
				Region: "Co. Dublin", Country: "IE", Language: "en",
			},
			want: "addressLine=Flat+2&addressLine=12+Georges+St+Upr&city=D%C3%BAn+Laoghaire&region=Co.+Dublin&country=IE&language=en",
		},
		{
			name:   "GET repeated lines and UTF-8",
			method: http.MethodGet,
			addr:   api.Address{Lines: []string{"Flat 2", "12 Georges St Upr"}, City: "Dún Laoghaire", Country: "IE"},
			want:   "addressLine=Flat+2&addressLine=12+Georges+St+Upr&city=D%C3%BAn+Laoghaire&country=IE",
		},
		{
			name:   "reserved characters",
			method: http.MethodPost,
			addr:   api.Address{Lines: []string{"1 A&B Road = #5 +x/y?"}, Country: "United Kingdom"},
			want:   "addressLine=1+A%26B+Road+%3D+%235+%2Bx%2Fy%3F&country=United+Kingdom",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newService(t, 0)
			calls := make(chan servicetest.Call, 1)
			f.Plan = func(c servicetest.Call) servicetest.Fault { calls <- c; return servicetest.Fault{} }
			c, _ := serve(t, f, api.WithMethod(tt.method), api.WithUserAgent("test-agent/1"))
			if _, err := c.Verify(context.Background(), tt.addr); err != nil {
				t.Fatal(err)
			}
			got := <-calls
			tok := "token=" + f.Tokens()[0]
			wantQuery, wantBody, wantCT := "", tok+"&"+tt.want, "application/x-www-form-urlencoded"
			if tt.method == http.MethodGet {
				wantQuery, wantBody, wantCT = tok+"&"+tt.want, "", ""
			}
			r := got.Request
			if r.Method != tt.method || r.URL.Path != "/3.0/verify" {
				t.Errorf("request %s %s, want %s /3.0/verify", r.Method, r.URL.Path, tt.method)
			}
			if r.URL.RawQuery != wantQuery {
				t.Errorf("query\n got %q\nwant %q", r.URL.RawQuery, wantQuery)
			}
			if string(got.Body) != wantBody {
				t.Errorf("body\n got %q\nwant %q", got.Body, wantBody)
			}
			ct, ua, accept := r.Header.Get("Content-Type"), r.Header.Get("User-Agent"), r.Header.Get("Accept")
			if ct != wantCT || ua != "test-agent/1" || accept != "application/json" {
				t.Errorf("headers: Content-Type %q User-Agent %q Accept %q", ct, ua, accept)
			}
		})
	}
}

func TestInvalidAddressNotSent(t *testing.T) {
	tests := []struct {
		name string
		addr api.Address
		want string
	}{
		{"no lines", api.Address{Country: "IE"}, "no address line"},
		{"blank lines", api.Address{Lines: []string{"", " \t"}, Country: "IE"}, "no address line"},
		{"no country", api.Address{Lines: []string{"1 Main St"}}, "no country"},
		{"blank country", api.Address{Lines: []string{"1 Main St"}, Country: " "}, "no country"},
	}
	f := newService(t, 0)
	c, _ := serve(t, f)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Verify(context.Background(), tt.addr)
			if !errors.Is(err, api.ErrInvalidAddress) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrInvalidAddress: %s", err, tt.want)
			}
			if k := api.Classify(err); k != api.KindPermanent {
				t.Errorf("Classify = %v, want permanent", k)
			}
		})
	}
	if n := f.Requests(); n != 0 {
		t.Errorf("%d requests sent for invalid addresses", n)
	}
}

func TestVerifyDecodesAnswer(t *testing.T) {
	f := newService(t, 0)
	c, _ := serve(t, f)
	resp, err := c.Verify(context.Background(), matchedAddress)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Action != api.ActionSuggest || resp.Address.ID != "IE00000001" || resp.Data.Location == nil ||
		len(resp.Address.Label) == 0 || resp.Address.Label[0] != "Apartment 1" {
		t.Errorf("unexpected answer: %+v", resp)
	}
	// A second call reuses the token.
	if _, err := c.Verify(context.Background(), matchedAddress); err != nil {
		t.Fatal(err)
	}
	want := api.ClientStats{TokenRequests: 1, VerifyRequests: 2}
	if got := c.Stats(); got != want || f.TokenRequests() != 1 || f.Verifies() != 2 {
		t.Errorf("Stats() = %+v, want %+v; the service saw %d token and %d verify requests", got, want, f.TokenRequests(), f.Verifies())
	}
}

// TestConcurrent401 sends 200 requests that all fail with the same expired
// token at the same time: exactly one new token must be fetched. The
// service expires the token itself, on the clock of the bubble.
func TestConcurrent401(t *testing.T) {
	const n = 200
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		t.Run(method, func(t *testing.T) {
			f := newService(t, time.Minute)
			synctest.Test(t, func(t *testing.T) {
				c := inProcess(t, f, api.WithMethod(method))
				ctx := context.Background()
				if _, err := c.Verify(ctx, testAddress); err != nil {
					t.Fatal(err)
				}
				first := f.Tokens()[0]
				time.Sleep(time.Minute) // the token's lifetime: expired now

				// Hold every request with the old token until all n have
				// arrived, so they are all in flight when the refresh starts.
				var arrived atomic.Int64
				release := make(chan struct{})
				f.Plan = func(call servicetest.Call) servicetest.Fault {
					if call.Form.Get("token") != first {
						return servicetest.Fault{}
					}
					if arrived.Add(1) == n {
						close(release)
					}
					<-release
					return servicetest.Fault{}
				}
				// And hold the new token until all n have asked for it, so
				// that a second fetch cannot hide behind a quick first one.
				fetched := make(chan struct{})
				f.TokenPlan = func(servicetest.Call) servicetest.Fault { <-fetched; return servicetest.Fault{} }
				var wg sync.WaitGroup
				for range n {
					wg.Go(func() {
						if _, err := c.Verify(ctx, testAddress); err != nil {
							t.Error(err)
						}
					})
				}
				synctest.Wait() // every request was refused and waits for a token
				if got := f.TokenRequests(); got != 2 {
					t.Errorf("createtoken called %d times, want 2 (one extra)", got)
				}
				close(fetched)
				wg.Wait()
				st := c.Stats()
				if st.TokenRefreshes != 1 || st.TokenRetries != n || st.VerifyRequests != 2*n+1 {
					t.Errorf("Stats() = %+v", st)
				}
			})
		})
	}
}

// TestLifetimeRefresh crosses the lifetime hint with 200 requests in flight:
// one proactive refresh, no 401 at all, although the service expires its
// tokens at exactly that lifetime.
func TestLifetimeRefresh(t *testing.T) {
	const n = 200
	f := newService(t, 10*time.Minute)
	synctest.Test(t, func(t *testing.T) {
		c := inProcess(t, f, api.WithTokenLifetime(10*time.Minute))
		ctx := context.Background()
		if _, err := c.Verify(ctx, testAddress); err != nil {
			t.Fatal(err)
		}
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
		if got := f.TokenRequests(); got != 2 {
			t.Errorf("createtoken called %d times, want 2", got)
		}
		if st := c.Stats(); st.TokenRefreshes != 1 || st.TokenRetries != 0 {
			t.Errorf("Stats() = %+v", st)
		}
		// Before the next refresh is due, no further token is fetched.
		time.Sleep(8 * time.Minute)
		if _, err := c.Verify(ctx, testAddress); err != nil {
			t.Fatal(err)
		}
		if got := f.TokenRequests(); got != 2 {
			t.Errorf("createtoken called %d times before the lifetime, want 2", got)
		}
	})
}

func TestFreshTokenRejectedIsFatal(t *testing.T) {
	// Every token refused, echoed as a careless service might: the client
	// must scrub it.
	var rejecting atomic.Bool
	rejectAll := func(c servicetest.Call) servicetest.Fault {
		if !rejecting.Load() {
			return servicetest.Fault{}
		}
		return servicetest.Fault{Status: http.StatusUnauthorized, Message: "Token " + c.Form.Get("token") + " is not valid"}
	}
	t.Run("first token", func(t *testing.T) {
		rejecting.Store(true)
		f := newService(t, 0)
		f.Plan = rejectAll
		c, _ := serve(t, f)
		_, err := c.Verify(context.Background(), testAddress)
		checkUnauthorized(t, err, f)
		if got := f.TokenRequests(); got != 1 {
			t.Errorf("createtoken called %d times, want 1 (no refresh for a fresh token)", got)
		}
	})
	t.Run("after refresh", func(t *testing.T) {
		rejecting.Store(false)
		f := newService(t, 0)
		f.Plan = rejectAll
		c, _ := serve(t, f)
		if _, err := c.Verify(context.Background(), testAddress); err != nil {
			t.Fatal(err)
		}
		rejecting.Store(true)
		_, err := c.Verify(context.Background(), testAddress)
		checkUnauthorized(t, err, f)
		if got := f.TokenRequests(); got != 2 {
			t.Errorf("createtoken called %d times, want 2 (one refresh)", got)
		}
		if got := f.Verifies(); got != 3 {
			t.Errorf("verify called %d times, want 3", got)
		}
	})
}

func TestBadKeyIsFatal(t *testing.T) {
	const badKey = "pub_00000000-bad0-key0-0000-000000000000"
	tests := []struct {
		name string
		// echo makes the service repeat the Authorization header in its
		// message, as a careless one might.
		echo        bool
		wantMessage string
	}{
		{name: "the service's answer"},
		{name: "key echoed", echo: true, wantMessage: "Invalid API key Basic [REDACTED]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newService(t, 0)
			if tt.echo {
				f.TokenPlan = func(c servicetest.Call) servicetest.Fault {
					return servicetest.Fault{Status: http.StatusUnauthorized, Message: "Invalid API key " + c.Request.Header.Get("Authorization")}
				}
			}
			srv := servicetest.Start(t, f)
			c, err := api.New(srv.URL, badKey)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Verify(context.Background(), testAddress)
			checkUnauthorized(t, err, f)
			if tt.wantMessage != "" && !strings.Contains(err.Error(), tt.wantMessage) {
				t.Errorf("echoed key not scrubbed as expected: %v", err)
			}
			assertNoSecrets(t, err, []string{badKey, base64.StdEncoding.EncodeToString([]byte(badKey + ":"))})
			se, ok := errors.AsType[*api.StatusError](err)
			if !ok || se.StatusCode != http.StatusUnauthorized || se.Op != "createtoken" {
				t.Errorf("want the createtoken 401 as a StatusError, got %#v", se)
			}
			if f.Verifies() != 0 {
				t.Error("verify was called without a token")
			}
		})
	}
}

func checkUnauthorized(t *testing.T, err error, f *servicetest.Faults) {
	t.Helper()
	if !errors.Is(err, api.ErrUnauthorized) {
		t.Fatalf("err = %v, want ErrUnauthorized", err)
	}
	if k := api.Classify(err); k != api.KindFatal {
		t.Errorf("Classify = %v, want fatal", k)
	}
	assertNoSecrets(t, err, secrets(f))
}

func TestStatusErrors(t *testing.T) {
	// The clock of a synctest bubble, where each case runs: a Retry-After
	// date is read against it.
	date := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	type fault = servicetest.Fault
	tests := []struct {
		name       string
		fault      fault
		kind       api.Kind
		status     int
		message    string
		retryAfter time.Duration
	}{
		{name: "400 envelope", fault: fault{Status: 400, Message: "Missing parameter: addressLine"},
			kind: api.KindPermanent, status: 400, message: "Missing parameter: addressLine"},
		{name: "413", fault: fault{Status: 413, Message: "Too large"}, kind: api.KindPermanent, status: 413, message: "Too large"},
		{name: "422 no body", fault: fault{Status: 422}, kind: api.KindPermanent, status: 422},
		{name: "403", fault: fault{Status: 403, Message: "Location not allowed"}, kind: api.KindFatal, status: 403, message: "Location not allowed"},
		{name: "404 html", fault: fault{Status: 404, Header: http.Header{"Content-Type": {"text/html"}}, Body: "<html>Not Found</html>"},
			kind: api.KindFatal, status: 404},
		{name: "405", fault: fault{Status: 405, Message: "Method not allowed"}, kind: api.KindFatal, status: 405, message: "Method not allowed"},
		{name: "500", fault: fault{Status: 500, Message: "Internal error"}, kind: api.KindTransient, status: 500, message: "Internal error"},
		{name: "503 retry after", fault: fault{Status: 503, RetryAfter: "7"}, kind: api.KindTransient, status: 503, retryAfter: 7 * time.Second},
		{name: "429 seconds", fault: fault{Status: 429, RetryAfter: "3", Message: "Rate limit exceeded"},
			kind: api.KindRateLimited, status: 429, message: "Rate limit exceeded", retryAfter: 3 * time.Second},
		{name: "429 HTTP date", fault: fault{Status: 429, RetryAfter: date.Add(90 * time.Second).Format(http.TimeFormat), Message: "Rate limit exceeded"},
			kind: api.KindRateLimited, status: 429, message: "Rate limit exceeded", retryAfter: 90 * time.Second},
		{name: "429 without Retry-After", fault: fault{Status: 429}, kind: api.KindRateLimited, status: 429},
		{name: "redirect", fault: fault{Status: http.StatusMovedPermanently,
			Header: http.Header{"Location": {"https://elsewhere.example/3.0/verify?token=tok_5e1d9c7b2a4f8e6d_001"}}},
			kind: api.KindFatal, status: 301},
	}
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		for _, tt := range tests {
			t.Run(method+"/"+tt.name, func(t *testing.T) {
				f := newService(t, 0)
				f.Plan = always(tt.fault)
				synctest.Test(t, func(t *testing.T) {
					c := inProcess(t, f, api.WithMethod(method))
					_, err := c.Verify(context.Background(), testAddress)
					if err == nil {
						t.Fatal("no error")
					}
					assertNoSecrets(t, err, secrets(f))
					if k := api.Classify(err); k != tt.kind {
						t.Errorf("Classify(%v) = %v, want %v", err, k, tt.kind)
					}
					se, ok := errors.AsType[*api.StatusError](err)
					if !ok {
						t.Fatalf("%v is not a *StatusError", err)
					}
					if se.StatusCode != tt.status || se.Message != tt.message || se.Op != "verify" {
						t.Errorf("StatusError = %+v", se)
					}
					if se.RetryAfter != tt.retryAfter {
						t.Errorf("RetryAfter = %v, want %v", se.RetryAfter, tt.retryAfter)
					}
					rl, ok := errors.AsType[*api.RateLimitedError](err)
					if ok != (tt.status == 429) {
						t.Fatalf("RateLimitedError: %v, want %v", ok, tt.status == 429)
					}
					if rl != nil && rl.RetryAfter != tt.retryAfter {
						t.Errorf("RateLimitedError.RetryAfter = %v, want %v", rl.RetryAfter, tt.retryAfter)
					}
				})
			})
		}
	}
}

// TestTransportErrors covers answers that break off or do not decode, over
// real sockets.
func TestTransportErrors(t *testing.T) {
	body := func(b func(tok string) string) func(servicetest.Call) servicetest.Fault {
		return func(c servicetest.Call) servicetest.Fault {
			return servicetest.Fault{Status: http.StatusOK, Body: b(c.Form.Get("token"))}
		}
	}
	tests := []struct {
		name string
		plan func(servicetest.Call) servicetest.Fault
		want string
	}{
		{name: "truncated JSON", plan: body(func(string) string { return `{"type":"verify","action":"Acc` }), want: "unusable answer"},
		{name: "non-JSON body", plan: body(func(string) string { return `<html>gateway</html>` }), want: "unusable answer"},
		{name: "empty body", plan: always(servicetest.Fault{Status: http.StatusOK}), want: "unusable answer"},
		{name: "token in the path of a syntax error", plan: body(func(tok string) string { return `{"x":{"` + tok + `":[1,}}` }),
			want: "unusable answer"},
		{name: "token in the path of a type error", plan: body(func(tok string) string {
			return `{"data":{"` + tok + `":1,"location":{"latitude":"x"}}}`
		}), want: "unusable answer"},
		{name: "closed mid-response", plan: always(servicetest.Fault{Truncate: true}), want: "connection closed early"},
		{name: "closed before answering", plan: always(servicetest.Fault{Drop: true}), want: "EOF"},
	}
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		for _, tt := range tests {
			t.Run(method+"/"+tt.name, func(t *testing.T) {
				f := newService(t, 0)
				f.Plan = tt.plan
				c, _ := serve(t, f, api.WithMethod(method))
				_, err := c.Verify(context.Background(), testAddress)
				checkTransient(t, err, tt.want, f)
			})
		}
	}
}

// TestClientTimeout lets the HTTP client's timeout end a request that the
// service is slow to answer, on the bubble's clock.
func TestClientTimeout(t *testing.T) {
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		t.Run(method, func(t *testing.T) {
			f := newService(t, 0)
			f.Plan = always(servicetest.Fault{Delay: time.Hour})
			synctest.Test(t, func(t *testing.T) {
				c := newClient(t, service.LocalBaseURL, api.WithMethod(method), api.WithHTTPClient(inProcessHTTP(f, 30*time.Second)))
				_, err := c.Verify(context.Background(), testAddress)
				checkTransient(t, err, "timed out", f)
			})
		})
	}
}

func checkTransient(t *testing.T, err error, want string, f *servicetest.Faults) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want it to mention %q", err, want)
	}
	if k := api.Classify(err); k != api.KindTransient {
		t.Errorf("Classify(%v) = %v, want transient", err, k)
	}
	assertNoSecrets(t, err, secrets(f))
	if strings.Contains(err.Error(), "token=") {
		t.Errorf("error shows the query: %v", err)
	}
}

func TestCreateTokenFailures(t *testing.T) {
	type fault = servicetest.Fault
	tests := []struct {
		name  string
		fault fault
		kind  api.Kind
	}{
		{"200 HTML", fault{Status: 200, Body: "<html>login</html>"}, api.KindFatal},
		{"200 without token", fault{Status: 200, Body: `{"type":"Token Create"}`}, api.KindFatal},
		{"404", fault{Status: 404}, api.KindFatal},
		{"403", fault{Status: 403, Message: "Key disabled"}, api.KindFatal},
		{"500", fault{Status: 500}, api.KindTransient},
		{"429", fault{Status: 429, RetryAfter: "2"}, api.KindRateLimited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newService(t, 0)
			f.TokenPlan = always(tt.fault)
			c, _ := serve(t, f)
			_, err := c.Verify(context.Background(), testAddress)
			if k := api.Classify(err); k != tt.kind {
				t.Errorf("Classify(%v) = %v, want %v", err, k, tt.kind)
			}
			if !strings.Contains(err.Error(), "createtoken") {
				t.Errorf("error does not name the endpoint: %v", err)
			}
			assertNoSecrets(t, err, secrets(f))
			if f.Verifies() != 0 {
				t.Error("verify was called without a token")
			}
		})
	}
}

// TestCancelledWaiter checks that a caller giving up does not fail the
// others waiting on the same token fetch, that the fetch is cancelled when
// nobody waits any more, and that a later caller then starts afresh.
func TestCancelledWaiter(t *testing.T) {
	t.Run("others keep waiting", func(t *testing.T) {
		f := newService(t, 0)
		synctest.Test(t, func(t *testing.T) {
			release := make(chan struct{})
			f.TokenPlan = func(c servicetest.Call) servicetest.Fault {
				select {
				case <-release:
				case <-c.Request.Context().Done():
					t.Error("the fetch was cancelled while a caller still waited")
				}
				return servicetest.Fault{}
			}
			c := inProcess(t, f)
			ctxA, cancelA := context.WithCancel(context.Background())
			errA := make(chan error, 1)
			go func() { _, err := c.Verify(ctxA, testAddress); errA <- err }()
			synctest.Wait() // A's fetch is held by the plan
			errB := make(chan error, 1)
			go func() { _, err := c.Verify(context.Background(), testAddress); errB <- err }()
			synctest.Wait() // B waits on A's fetch

			cancelA()
			if err := <-errA; !errors.Is(err, context.Canceled) || api.Classify(err) != api.KindFatal {
				t.Errorf("cancelled caller: err = %v (kind %v), want context.Canceled, fatal", err, api.Classify(err))
			}
			close(release)
			if err := <-errB; err != nil {
				t.Errorf("other caller failed: %v", err)
			}
			if got := f.TokenRequests(); got != 1 {
				t.Errorf("createtoken called %d times, want 1", got)
			}
		})
	})
	t.Run("last waiter cancels the fetch", func(t *testing.T) {
		f := newService(t, 0)
		reached := make(chan struct{}, 1)
		cancelled := make(chan struct{})
		f.TokenPlan = func(c servicetest.Call) servicetest.Fault {
			reached <- struct{}{}
			<-c.Request.Context().Done()
			close(cancelled)
			return servicetest.Fault{Drop: true}
		}
		c, _ := serve(t, f)
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
		f := newService(t, 0)
		synctest.Test(t, func(t *testing.T) {
			// The abandoned fetch outlives its cancellation until hold
			// closes: a caller that joined it would wait for it, and the
			// bubble would report the deadlock.
			hold := make(chan struct{})
			defer close(hold)
			f.TokenPlan = func(c servicetest.Call) servicetest.Fault {
				if c.N == 1 {
					<-c.Request.Context().Done()
					<-hold
					return servicetest.Fault{Status: http.StatusServiceUnavailable}
				}
				return servicetest.Fault{}
			}
			c := inProcess(t, f)
			ctx, cancel := context.WithCancel(context.Background())
			errA := make(chan error, 1)
			go func() { _, err := c.Verify(ctx, testAddress); errA <- err }()
			synctest.Wait()
			cancel()
			if err := <-errA; !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
			synctest.Wait() // the first fetch now waits on hold
			if _, err := c.Verify(context.Background(), testAddress); err != nil {
				t.Errorf("later caller: %v", err)
			}
			// The abandoned fetch gave no token: the second is the first
			// token, not a refresh.
			if n, st := f.TokenRequests(), c.Stats(); n != 2 || st.TokenRequests != 2 || st.TokenRefreshes != 0 {
				t.Errorf("%d fetches, stats %+v; want 2 fetches, no refresh", n, st)
			}
		})
	})
}

// TestLogsNeverShowSecrets also prints the Client itself.
func TestLogsNeverShowSecrets(t *testing.T) {
	f := newService(t, time.Minute)
	synctest.Test(t, func(t *testing.T) {
		var buf syncBuffer
		c := inProcess(t, f, api.WithLogger(zerolog.New(&buf).Level(zerolog.DebugLevel)))
		ctx := context.Background()
		if _, err := c.Verify(ctx, testAddress); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute) // the service refuses the token from now on
		if _, err := c.Verify(ctx, testAddress); err != nil {
			t.Fatal(err)
		}
		out := buf.String() + fmt.Sprintf("%+v %#v %v", c, c, c)
		if !strings.Contains(out, "token refreshed") || !strings.Contains(out, `"reason":"rejected"`) {
			t.Errorf("no refresh line in the log:\n%s", out)
		}
		for _, s := range secrets(f) {
			if strings.Contains(out, s) {
				t.Errorf("log leaks a secret:\n%s", out)
			}
		}
	})
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
	f := newService(t, 0)
	srv := servicetest.Start(t, f)
	c := newClient(t, srv.URL, api.WithMethod(http.MethodGet))
	ctx := context.Background()
	if _, err := c.Verify(ctx, testAddress); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	_, err := c.Verify(ctx, testAddress)
	if err == nil {
		t.Fatal("no error from a closed server")
	}
	if k := api.Classify(err); k != api.KindTransient {
		t.Errorf("Classify(%v) = %v, want transient", err, k)
	}
	assertNoSecrets(t, err, secrets(f))
}
