package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/service"
)

// connectOptions say which service to verify against.
type connectOptions struct {
	baseURL    string
	apiKeyFile string
	apiKeyFlag string
	reference  string
	tokenTTL   time.Duration
	method     string
	workers    int
}

// connection is a ready api client and what it talks to.
type connection struct {
	client   *api.Client
	embedded bool
}

// readAPIKey takes the key from --api-key-file or ADDRCLEAN_API_KEY; a key
// given as a flag value is refused because it shows in the process list.
func readAPIKey(o connectOptions) (api.Secret, error) {
	if o.apiKeyFlag != "" {
		return "", usageErrorf("--api-key is refused: a key on the command line shows in the process list; put it in a file and pass --api-key-file, or set ADDRCLEAN_API_KEY")
	}
	if o.apiKeyFile != "" {
		b, err := os.ReadFile(o.apiKeyFile)
		if err != nil {
			return "", withCode(exitFatal, fmt.Errorf("reading --api-key-file: %w", err))
		}
		key := strings.TrimSpace(string(b))
		if key == "" {
			return "", withCode(exitFatal, fmt.Errorf("--api-key-file %s is empty", o.apiKeyFile))
		}
		return api.Secret(key), nil
	}
	if key := strings.TrimSpace(os.Getenv("ADDRCLEAN_API_KEY")); key != "" {
		return api.Secret(key), nil
	}
	return "", nil
}

// connect builds the api client: against --base-url with the user's key, or
// against the embedded service answering in process, so that both paths go
// through the same api client and service handler.
func connect(ctx context.Context, o connectOptions, log zerolog.Logger) (*connection, error) {
	key, err := readAPIKey(o)
	if err != nil {
		return nil, err
	}
	method := strings.ToUpper(o.method)
	if method != http.MethodPost && method != http.MethodGet {
		return nil, usageErrorf("--method %q: want POST or GET", o.method)
	}
	conn := &connection{}
	baseURL := o.baseURL
	var embedded http.RoundTripper
	if baseURL == "" {
		if key != "" {
			log.Warn().Msg("an API key was given but no --base-url: the key is not used; the embedded local service answers")
		}
		ix, err := loadReference(ctx, o.reference)
		if err != nil {
			return nil, fmt.Errorf("--reference: %w", err)
		}
		source := referenceName(o.reference)
		// The embedded service answers in process, through the same
		// client and handler as a remote one. There is no server to stop:
		// each request is served for as long as its own context lets it,
		// so rows in flight after an interrupt still finish.
		rt, k, err := service.NewLocal(ix, log.With().Str("component", "service").Logger().Level(zerolog.WarnLevel))
		if err != nil {
			return nil, withCode(exitFatal, fmt.Errorf("starting the embedded service: %w", err))
		}
		log.Info().Str("reference", source).Int("addresses", ix.Len()).
			Msg("no --base-url: verifying against the embedded service, in process (no key, no network)")
		baseURL, key, embedded, conn.embedded = service.LocalBaseURL, api.Secret(k), rt, true
	} else {
		pu, err := url.Parse(baseURL)
		if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return nil, usageErrorf("--base-url: want an http(s) URL such as https://api.example.com")
		}
		if pu.Scheme == "http" && !isLoopback(pu.Hostname()) {
			log.Warn().Str("base_url", pu.Redacted()).Msg("the base URL is plain http: the API key and tokens cross the network unencrypted")
		}
		if key == "" {
			return nil, usageErrorf("--base-url needs an API key: pass --api-key-file PATH or set ADDRCLEAN_API_KEY")
		}
		if o.reference != "" {
			log.Warn().Msg("--reference is ignored with --base-url")
		}
	}
	workers := max(o.workers, 1)
	// No client-wide timeout: the pipeline bounds each attempt with --timeout.
	hc := api.NewHTTPClient(workers+4, 0)
	if embedded != nil {
		hc.Transport = embedded
	}
	opts := []api.Option{
		api.WithHTTPClient(hc),
		api.WithMethod(method),
		api.WithUserAgent("addrclean/" + version),
		api.WithLogger(log.With().Str("component", "api").Logger()),
	}
	if o.tokenTTL > 0 {
		opts = append(opts, api.WithTokenLifetime(o.tokenTTL))
	}
	c, err := api.New(baseURL, key, opts...)
	if err != nil {
		return nil, usageErrorf("%w", err)
	}
	conn.client = c
	return conn, nil
}

func isLoopback(host string) bool {
	return host == "localhost" || strings.HasPrefix(host, "127.") || host == "::1"
}

// describeFatal turns a run-stopping error into a message that says what to fix.
func describeFatal(err error) string {
	var se *api.StatusError
	switch {
	case errors.Is(err, api.ErrUnauthorized):
		return "the service refused the API key or token (401): check --api-key-file / ADDRCLEAN_API_KEY and that the key is active"
	case errors.As(err, &se) && se.StatusCode == http.StatusForbidden:
		return "the service refused this key (403): the integration is not allowed to verify; check its settings in the account console"
	case errors.As(err, &se) && (se.StatusCode == http.StatusNotFound || se.StatusCode == http.StatusMethodNotAllowed):
		return fmt.Sprintf("the service answered %d to %s: check --base-url (it should be the part before /3.0/)", se.StatusCode, se.Op)
	}
	return ""
}
