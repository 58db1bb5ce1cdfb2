package runs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/gazetteer"
	sampledata "github.com/addrclean/addrclean/sample_data"
	"github.com/addrclean/addrclean/service"
)

// InterruptedError is a command stopped (Ctrl-C, SIGTERM) before it
// began its work: run it again.
type InterruptedError struct{ Err error }

func (e *InterruptedError) Error() string { return e.Err.Error() }
func (e *InterruptedError) Unwrap() error { return e.Err }

// ConnectOptions say how to reach the Service.
type ConnectOptions struct {
	// TokenTTL is the known token lifetime (0: refresh on 401 only).
	TokenTTL time.Duration
	// Method is the verify request method, POST or GET.
	Method string
	// Workers is how many requests go at once.
	Workers int
}

// Connection is a ready api client and what it talks to.
type Connection struct {
	Client   *api.Client
	Embedded bool
}

// Connect builds the api client: against the live service with the key,
// or against the embedded service answering in process, so that both go
// through the same api client and service handler. What the user must
// change is a UsageError.
func Connect(ctx context.Context, s Service, o ConnectOptions, log zerolog.Logger) (*Connection, error) {
	key, err := s.key()
	if err != nil {
		return nil, err
	}
	method := strings.ToUpper(o.Method)
	if method != http.MethodPost && method != http.MethodGet {
		return nil, usagef("--method %q: want POST or GET", o.Method)
	}
	conn := &Connection{}
	baseURL := s.BaseURL
	var embedded http.RoundTripper
	if baseURL == "" {
		if key != "" {
			log.Warn().Msg("an API key was given but no --base-url: the key is not used; the embedded local service answers")
		}
		ix, err := LoadReference(ctx, s.Reference)
		if err != nil {
			return nil, fmt.Errorf("--reference: %w", err)
		}
		// The embedded service answers in process, through the same
		// client and handler as a remote one. There is no server to stop:
		// each request is served for as long as its own context lets it,
		// so rows in flight after an interrupt still finish.
		rt, k, err := service.NewLocal(ix, log.With().Str("component", "service").Logger().Level(zerolog.WarnLevel))
		if err != nil {
			return nil, fmt.Errorf("starting the embedded service: %w", err)
		}
		log.Info().Str("reference", ReferenceName(s.Reference)).Int("addresses", ix.Len()).
			Msg("no --base-url: verifying against the embedded service, in process (no key, no network)")
		baseURL, key, embedded, conn.Embedded = service.LocalBaseURL, api.Secret(k), rt, true
	} else {
		pu, err := url.Parse(baseURL)
		if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return nil, usagef("--base-url: want an http(s) URL such as https://api.example.com")
		}
		if pu.Scheme == "http" && !isLoopback(pu.Hostname()) {
			log.Warn().Str("base_url", pu.Redacted()).Msg("the base URL is plain http: the API key and tokens cross the network unencrypted")
		}
		if key == "" {
			return nil, usagef("--base-url needs an API key: pass --api-key-file PATH or set ADDRCLEAN_API_KEY")
		}
		if s.Reference != "" {
			log.Warn().Msg("--reference is ignored with --base-url")
		}
	}
	// No client-wide timeout: the pipeline bounds each attempt.
	hc := api.NewHTTPClient(max(o.Workers, 1)+4, 0)
	if embedded != nil {
		hc.Transport = embedded
	}
	opts := []api.Option{
		api.WithHTTPClient(hc),
		api.WithMethod(method),
		api.WithUserAgent("addrclean/" + s.Version),
		api.WithLogger(log.With().Str("component", "api").Logger()),
	}
	if o.TokenTTL > 0 {
		opts = append(opts, api.WithTokenLifetime(o.TokenTTL))
	}
	c, err := api.New(baseURL, key, opts...)
	if err != nil {
		return nil, usagef("%w", err)
	}
	conn.Client = c
	return conn, nil
}

func isLoopback(host string) bool {
	return host == "localhost" || strings.HasPrefix(host, "127.") || host == "::1"
}

// LoadReference loads the reference file, or the bundled sample; a load
// that ctx ended is an *InterruptedError.
func LoadReference(ctx context.Context, path string) (*gazetteer.Index, error) {
	var ix *gazetteer.Index
	var err error
	if path == "" {
		ix, err = gazetteer.Load(ctx, sampledata.Reference())
		if err != nil {
			err = fmt.Errorf("bundled sample reference: %w", err)
		}
	} else {
		ix, err = gazetteer.LoadFile(ctx, path)
	}
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil, &InterruptedError{err}
	}
	return ix, err
}
