package api_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/service"
	"github.com/addrclean/addrclean/service/servicetest"
)

// The client's tests run against the real service (servicetest wraps its
// handler with fault injection): over loopback sockets, or in process in a
// synctest bubble where time matters, so that the client's lifetime hint,
// the service's token expiry and a Retry-After date all read the bubble's
// clock.

// testKey looks like a real key so that scrubbing is exercised.
const testKey = "pub_3f6c1a2e-9b7d-4c5e-8a1f-0d2b4e6f8a9c"

var testAddress = api.Address{Lines: []string{"12 Georges St Upr"}, City: "Dún Laoghaire", Country: "IE"}

// matchedAddress is one the sample reference matches: its answer has
// every member, as a live service's usually has.
var matchedAddress = api.Address{Lines: []string{"Apt 1 The Maltings", "38 Parnell Gdns"}, City: "Dublin", Country: "IE"}

// newService returns the real service for testKey, with tokens valid for
// ttl (0: the default), wrapped by Faults.
func newService(t testing.TB, ttl time.Duration) *servicetest.Faults {
	t.Helper()
	in := service.NewIntegration(testKey)
	if ttl > 0 {
		in.TokenTTL = ttl
	}
	return servicetest.New(t, in)
}

// serve starts f on loopback and returns a client of it.
func serve(t testing.TB, f *servicetest.Faults, opts ...api.Option) (*api.Client, string) {
	t.Helper()
	srv := servicetest.Start(t, f)
	return newClient(t, srv.URL, opts...), srv.URL
}

// inProcess returns a client that reaches f through service.Transport: no
// socket, so that a client made in a synctest bubble runs there whole.
func inProcess(t testing.TB, f *servicetest.Faults, opts ...api.Option) *api.Client {
	t.Helper()
	return newClient(t, service.LocalBaseURL, append([]api.Option{api.WithHTTPClient(inProcessHTTP(f, 0))}, opts...)...)
}

// inProcessHTTP returns the HTTP client of inProcess, with a timeout.
func inProcessHTTP(f *servicetest.Faults, timeout time.Duration) *http.Client {
	hc := api.NewHTTPClient(1, timeout)
	hc.Transport = service.Transport(f)
	return hc
}

func newClient(t testing.TB, base string, opts ...api.Option) *api.Client {
	t.Helper()
	c, err := api.New(base, testKey, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// secrets returns the key, its Basic form and every token f issued.
func secrets(f *servicetest.Faults) []string {
	return append([]string{testKey, base64.StdEncoding.EncodeToString([]byte(testKey + ":"))}, f.Tokens()...)
}

// assertNoSecrets fails if err's text, or that of anything it wraps,
// contains the key or a token.
func assertNoSecrets(t testing.TB, err error, secrets []string) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
		for _, sec := range secrets {
			if sec != "" && strings.Contains(s, sec) {
				t.Errorf("error text leaks a secret: %q", s)
			}
		}
	}
}

// always answers every request with fault.
func always(fault servicetest.Fault) func(servicetest.Call) servicetest.Fault {
	return func(servicetest.Call) servicetest.Fault { return fault }
}
