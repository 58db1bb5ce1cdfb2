package api_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/gazetteer"
	sampledata "github.com/addrclean/addrclean/sample_data"
	"github.com/addrclean/addrclean/service"
)

// newExampleService starts the real service over the sample reference,
// with one integration for key.
func newExampleService(key api.Secret) *httptest.Server {
	ix, err := gazetteer.Load(context.Background(), sampledata.Reference())
	if err != nil {
		panic(err)
	}
	svc, err := service.New(ix, []service.Integration{service.NewIntegration(key.Reveal())})
	if err != nil {
		panic(err)
	}
	return httptest.NewServer(svc)
}

func ExampleClient() {
	// The key usually comes from a file or the environment; as a Secret it
	// prints as [REDACTED] wherever it ends up.
	key := api.Secret("pub_00000000-0000-0000-0000-000000000000")
	srv := newExampleService(key)
	defer srv.Close()

	c, err := api.New(srv.URL, key, api.WithTokenLifetime(15*time.Minute))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	resp, err := c.Verify(ctx, api.Address{
		Lines:   []string{"Apt 1 The Maltings", "38 Parnell Gdns"},
		City:    "Dublin",
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
	// Suggest IE00000001 Apartment 1
	// permanent api: verify: HTTP 400 Bad Request: The country is not a recognised ISO code or country name.
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
