package api_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/addrclean/addrclean/api"
)

// newExampleService stands in for the live service.
func newExampleService() *httptest.Server {
	answer, _ := os.ReadFile("testdata/verify_response.json")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /3.0/createtoken", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"token":"tok_example_0001","type":"Token Create","transactionId":"1"}`)
	})
	mux.HandleFunc("POST /3.0/verify", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("country") == "XX" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"type":"error","form":{"language":"en","message":{"id":4003,"severity":"Error","value":"Unknown country"}}}`)
			return
		}
		_, _ = w.Write(answer)
	})
	return httptest.NewServer(mux)
}

func ExampleClient() {
	srv := newExampleService()
	defer srv.Close()

	// The key usually comes from a file or the environment; as a Secret it
	// prints as [REDACTED] wherever it ends up.
	key := api.Secret("pub_00000000-0000-0000-0000-000000000000")
	c, err := api.New(srv.URL, key, api.WithTokenLifetime(15*time.Minute))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	resp, err := c.Verify(ctx, api.Address{
		Lines:   []string{"12 Georges St Upr"},
		City:    "Dún Laoghaire",
		Country: "IE",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Action, resp.Address.ID, resp.Address.Label[0])

	// An error says what to do next through its Kind.
	_, err = c.Verify(ctx, api.Address{Lines: []string{"1 Main St"}, Country: "XX"})
	fmt.Println(api.Classify(err), err)
	_, err = c.Verify(ctx, api.Address{Lines: []string{"1 Main St"}})
	fmt.Println(api.Classify(err), errors.Is(err, api.ErrInvalidAddress))
	fmt.Println("key:", key)
	fmt.Printf("%+v\n", c.Stats())
	// Output:
	// Suggest IE-A96-X2Y3 12 Upper George's Street
	// permanent api: verify: HTTP 400 Bad Request: Unknown country
	// permanent true
	// key: [REDACTED]
	// {TokenRequests:1 TokenRefreshes:0 VerifyRequests:2 TokenRetries:0}
}

func ExampleClassify() {
	for _, err := range []error{
		&api.StatusError{Op: "verify", StatusCode: 503},
		&api.RateLimitedError{RetryAfter: 2 * time.Second},
		&api.StatusError{Op: "verify", StatusCode: 422},
		fmt.Errorf("row 7: %w", api.ErrUnauthorized),
		context.Canceled,
	} {
		fmt.Println(api.Classify(err))
	}
	// Output:
	// transient
	// rate-limited
	// permanent
	// fatal
	// fatal
}
