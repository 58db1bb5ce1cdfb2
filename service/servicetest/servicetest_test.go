package servicetest_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/service"
	"github.com/addrclean/addrclean/service/servicetest"
)

const testKey = "pub_7c2e9a41-servicetest-key"

var address = api.Address{Lines: []string{"1 Main Street"}, City: "Dublin", Country: "IE"}

// TestFaults checks each fault as a client sees it, for both methods (the
// plan must see a POST's form and leave the body to the service).
func TestFaults(t *testing.T) {
	tests := []struct {
		name       string
		fault      servicetest.Fault
		kind       api.Kind // of the error; KindNone for an answer
		status     int
		message    string
		retryAfter time.Duration
	}{
		{"none", servicetest.Fault{}, api.KindNone, 0, "", 0},
		{"slow", servicetest.Fault{Delay: 1}, api.KindNone, 0, "", 0},
		{"envelope", servicetest.Fault{Status: 400, Message: "addressLine is not valid."}, api.KindPermanent, 400, "addressLine is not valid.", 0},
		{"bare 500", servicetest.Fault{Status: 500}, api.KindTransient, 500, "", 0},
		{"429", servicetest.Fault{Status: 429, Message: "Slow down.", RetryAfter: "1"}, api.KindRateLimited, 429, "Slow down.", time.Second},
		{"drop", servicetest.Fault{Drop: true}, api.KindTransient, 0, "", 0},
		{"truncate", servicetest.Fault{Truncate: true}, api.KindTransient, 0, "", 0},
	}
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		for _, tt := range tests {
			t.Run(method+"/"+tt.name, func(t *testing.T) {
				f := servicetest.New(t, service.NewIntegration(testKey))
				var mu sync.Mutex
				var seen []string
				f.Plan = func(c servicetest.Call) servicetest.Fault {
					mu.Lock()
					defer mu.Unlock()
					seen = append(seen, c.Form.Get("addressLine"))
					return tt.fault
				}
				srv := servicetest.Start(t, f)
				// No retries by net/http of a dropped GET: one request per call.
				hc := api.NewHTTPClient(1, 0)
				hc.Transport.(*http.Transport).DisableKeepAlives = true
				c, err := api.New(srv.URL, api.Secret(testKey), api.WithMethod(method), api.WithHTTPClient(hc))
				if err != nil {
					t.Fatal(err)
				}
				resp, err := c.Verify(context.Background(), address)
				if k := api.Classify(err); k != tt.kind {
					t.Fatalf("Classify(%v) = %v, want %v", err, k, tt.kind)
				}
				if tt.kind == api.KindNone && (resp == nil || resp.Address.Label == nil) {
					t.Errorf("answer %+v, want the service's", resp)
				}
				var se *api.StatusError
				if errors.As(err, &se) != (tt.status != 0) {
					t.Fatalf("err %v: StatusError %v, want %v", err, se != nil, tt.status != 0)
				}
				if se != nil && (se.StatusCode != tt.status || se.Message != tt.message || se.RetryAfter != tt.retryAfter) {
					t.Errorf("StatusError = %d %q %v, want %d %q %v", se.StatusCode, se.Message, se.RetryAfter, tt.status, tt.message, tt.retryAfter)
				}
				mu.Lock()
				if !slices.Equal(seen, []string{"1 Main Street"}) {
					t.Errorf("the plan saw addressLine %q", seen)
				}
				mu.Unlock()
				wantInjected := int64(1)
				if tt.name == "none" {
					wantInjected = 0
				}
				if f.Verifies() != 1 || f.Requests() != 2 || f.Injected() != wantInjected {
					t.Errorf("verifies %d, requests %d, injected %d", f.Verifies(), f.Requests(), f.Injected())
				}
				if toks := f.Tokens(); len(toks) != 1 || toks[0] == "" {
					t.Errorf("tokens kept: %d", len(toks))
				}
			})
		}
	}
}

// client returns a client of f served on loopback.
func client(t *testing.T, f *servicetest.Faults, opts ...api.Option) *api.Client {
	t.Helper()
	c, err := api.New(servicetest.Start(t, f).URL, api.Secret(testKey), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestFaultAnswers checks the answers a proxy in front of the service could
// give: a body as is, with the headers asked for.
func TestFaultAnswers(t *testing.T) {
	f := servicetest.New(t, service.NewIntegration(testKey))
	f.Plan = func(servicetest.Call) servicetest.Fault {
		return servicetest.Fault{Status: 302, Header: http.Header{"Location": {"https://elsewhere.example/3.0/verify"}},
			Body: `{"type":"error","form":{"message":{"id":7,"value":"From the proxy"}}}`, RetryAfter: "3"}
	}
	_, err := client(t, f).Verify(context.Background(), address)
	se, ok := errors.AsType[*api.StatusError](err)
	if !ok || se.StatusCode != 302 || se.Location != "https://elsewhere.example/3.0/verify" || se.RetryAfter != 3*time.Second ||
		se.MessageID != 7 || se.Message != "From the proxy" {
		t.Errorf("err = %#v, want the proxy's 302", err)
	}
}

// TestCalls checks what a plan sees of a request, for both endpoints.
func TestCalls(t *testing.T) {
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		t.Run(method, func(t *testing.T) {
			f := servicetest.New(t, service.NewIntegration(testKey))
			var mu sync.Mutex
			var calls []servicetest.Call
			keep := func(c servicetest.Call) servicetest.Fault {
				mu.Lock()
				defer mu.Unlock()
				calls = append(calls, c)
				return servicetest.Fault{}
			}
			f.Plan, f.TokenPlan = keep, keep
			if _, err := client(t, f, api.WithMethod(method)).Verify(context.Background(), address); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(calls) != 2 || f.TokenRequests() != 1 || f.Verifies() != 1 || f.Injected() != 0 {
				t.Fatalf("%d calls, %d token requests, %d verifies, %d injected", len(calls), f.TokenRequests(), f.Verifies(), f.Injected())
			}
			tc, vc := calls[0], calls[1]
			if tc.N != 1 || tc.Request.URL.Path != "/3.0/createtoken" || !strings.HasPrefix(tc.Request.Header.Get("Authorization"), "Basic ") {
				t.Errorf("token call %d %s, Authorization %q", tc.N, tc.Request.URL.Path, tc.Request.Header.Get("Authorization"))
			}
			wire := "token=" + f.Tokens()[0] + "&addressLine=1+Main+Street&city=Dublin&country=IE"
			body, query := string(vc.Body), vc.Request.URL.RawQuery
			if method == http.MethodGet {
				body, query = query, body
			}
			if vc.N != 1 || vc.Request.Method != method || body != wire || query != "" || vc.Form.Get("city") != "Dublin" {
				t.Errorf("verify call %d %s: body %q, query %q, form %v; want %q", vc.N, vc.Request.Method, vc.Body, vc.Request.URL.RawQuery, vc.Form, wire)
			}
		})
	}
}

// TestTokenPlan checks that createtoken requests take faults of their own.
func TestTokenPlan(t *testing.T) {
	f := servicetest.New(t, service.NewIntegration(testKey))
	f.TokenPlan = func(servicetest.Call) servicetest.Fault {
		return servicetest.Fault{Status: 503, Message: "Down for maintenance."}
	}
	_, err := client(t, f).Verify(context.Background(), address)
	se, ok := errors.AsType[*api.StatusError](err)
	if !ok || se.Op != "createtoken" || se.StatusCode != 503 || se.Message != "Down for maintenance." {
		t.Errorf("err = %v, want the createtoken 503", err)
	}
	if f.TokenRequests() != 1 || f.Verifies() != 0 || f.Injected() != 1 || len(f.Tokens()) != 0 {
		t.Errorf("token requests %d, verifies %d, injected %d, tokens %d", f.TokenRequests(), f.Verifies(), f.Injected(), len(f.Tokens()))
	}
}

// TestDelayEndsWithRequest checks that a slow answer is not served to a
// client that gave up: the service runs in process in a bubble, so the
// hour of the delay passes at once.
func TestDelayEndsWithRequest(t *testing.T) {
	var served atomic.Int64
	svc, err := service.New(servicetest.SampleIndex(t), []service.Integration{service.NewIntegration(testKey)})
	if err != nil {
		t.Fatal(err)
	}
	f := servicetest.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/verify") {
			served.Add(1)
		}
		svc.ServeHTTP(w, r)
	}))
	f.Plan = func(servicetest.Call) servicetest.Fault { return servicetest.Fault{Delay: time.Hour} }
	synctest.Test(t, func(t *testing.T) {
		hc := api.NewHTTPClient(1, 0)
		hc.Transport = service.Transport(f)
		c, err := api.New(service.LocalBaseURL, api.Secret(testKey), api.WithHTTPClient(hc))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := c.Verify(ctx, address); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the deadline", err)
		}
		time.Sleep(2 * time.Hour)
		if n := served.Load(); n != 0 {
			t.Errorf("the service answered %d abandoned requests", n)
		}
	})
}
