package servicetest_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
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
