package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/addrclean/addrclean/internal/cliflag"
	"github.com/addrclean/addrclean/internal/logfmt"
	"github.com/addrclean/addrclean/runs"
	"github.com/addrclean/addrclean/service"
)

// serveOptions are the flags of 'addrclean serve'.
type serveOptions struct {
	listen, reference, keys, secretFile, publicURL string
	tokenTTL                                       time.Duration
	rate                                           float64
	burst                                          int
	maxBody                                        int64
	logFormat, logLevel                            string
}

func newServeFlags(o *serveOptions, stderr io.Writer) *flag.FlagSet {
	fs := cliflag.New("serve", serveUsage, stderr)
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8080", "`ADDR` to listen on (host:port; port 0 picks a free one)")
	fs.StringVar(&o.reference, "reference", "", "reference address `CSV` (default: the bundled sample reference)")
	fs.StringVar(&o.keys, "keys", "", "JSON keys `FILE` of integrations (default: one development key, printed on stdout)")
	fs.StringVar(&o.secretFile, "secret-file", "", "`FILE` holding the token signing secret (at least 16 bytes), shared by replicas\n(default: a random secret; tokens die with the process)")
	fs.StringVar(&o.publicURL, "public-url", "", "base `URL` of the service as clients reach it, used in self links, as in https://addr.example.com\n(default: from each request's Host header, with a warning)")
	fs.DurationVar(&o.tokenTTL, "token-ttl", 0, "token lifetime of every integration (default: the keys file's, else 15m)")
	fs.Float64Var(&o.rate, "rate", 0, "requests per second per key for every integration, 0 = unlimited (default: the keys file's, else unlimited)")
	fs.IntVar(&o.burst, "burst", 0, "requests allowed at once per key with --rate (default: the rate rounded up)")
	fs.Int64Var(&o.maxBody, "max-body", service.DefaultMaxBodyBytes, "largest verify request body or GET query string in `BYTES` (413 beyond it)")
	fs.StringVar(&o.logFormat, "log-format", "auto", "auto, console or json (json: one object per stderr line)")
	fs.StringVar(&o.logLevel, "log-level", "info", "trace, debug, info, warn or error (debug logs every request)")
	return fs
}

// cmdServe runs the local service until ctx ends.
func cmdServe(ctx context.Context, args []string, s streams) error {
	var o serveOptions
	fs := newServeFlags(&o, s.err)
	if _, err := cliflag.Parse(fs, args, serveUsage, s.out, false); err != nil {
		return flagError(err)
	}
	if fs.NArg() > 0 {
		return usageErrorf("serve takes no arguments, got %q", fs.Arg(0))
	}
	switch {
	case o.rate < 0 || o.rate != o.rate:
		return usageErrorf("--rate must be 0 (unlimited) or more")
	case o.burst < 0:
		return usageErrorf("--burst must be 0 or more")
	case o.tokenTTL < 0 || (o.tokenTTL > 0 && o.tokenTTL < time.Second):
		return usageErrorf("--token-ttl must be at least 1s")
	case o.maxBody <= 0:
		return usageErrorf("--max-body must be positive")
	case o.listen == "":
		return usageErrorf("--listen must not be empty")
	}
	if err := checkPublicURL(o.publicURL); err != nil {
		return err
	}
	log, err := logfmt.New(s.err, s.tty, o.logFormat, o.logLevel)
	if err != nil {
		return usageErrorf("%w", err)
	}

	integrations, dev, err := service.Integrations(o.keys)
	if err != nil {
		return withCode(exitFatal, err)
	}
	for i := range integrations {
		fs.Visit(func(f *flag.Flag) {
			switch in := &integrations[i]; f.Name {
			case "token-ttl":
				in.TokenTTL = o.tokenTTL
			case "rate":
				in.RequestsPerSecond = o.rate
			case "burst":
				in.Burst = o.burst
			}
		})
	}
	opts := []service.Option{service.WithLogger(log), service.WithMaxBodyBytes(o.maxBody), service.WithBaseURL(o.publicURL)}
	if o.secretFile != "" {
		secret, err := readSecret(o.secretFile)
		if err != nil {
			return withCode(exitFatal, err)
		}
		opts = append(opts, service.WithSigningSecret(secret))
	}

	start := time.Now()
	ix, err := runs.LoadReference(ctx, o.reference)
	if err != nil {
		return err
	}
	log.Info().Int("addresses", ix.Len()).Str("reference", runs.ReferenceName(o.reference)).
		Stringer("took", time.Since(start).Round(time.Millisecond)).Msg("reference loaded")

	svc, err := service.New(ix, integrations, opts...)
	if err != nil {
		return withCode(exitFatal, err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", o.listen)
	if err != nil {
		return withCode(exitFatal, fmt.Errorf("listen: %w", err))
	}
	if dev {
		// Printed once, on stdout only, so that it can be captured and
		// never lands in a log file.
		fmt.Fprintln(s.out, integrations[0].Key)
		log.Warn().Msg("no --keys: created a development API key (printed on stdout); it is valid until the service stops")
	}
	for _, in := range integrations {
		log.Info().Str("integration", in.Name).Strs("countries", in.AllowedCountries).
			Float64("rate", in.RequestsPerSecond).Stringer("token_ttl", in.TokenTTL).Msg("integration")
	}
	if o.publicURL == "" {
		// A client's Host header is then copied into every answer's link:
		// harmless on a loopback port, spoofable anywhere else.
		log.Warn().Msg("no --public-url: the links in answers are built from each request's Host header, " +
			"which the client chooses; pass --public-url with the service's address as clients reach it")
	}
	srv := service.NewServer(ln.Addr().String(), svc, log)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info().Str("addr", ln.Addr().String()).Str("url", "http://"+ln.Addr().String()).Msg("listening")

	select {
	case err := <-errc:
		return withCode(exitFatal, fmt.Errorf("serve: %w", err))
	case <-ctx.Done():
	}
	log.Info().Msg("shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
		return withCode(exitFatal, fmt.Errorf("shutdown: %w", err))
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return withCode(exitFatal, fmt.Errorf("serve: %w", err))
	}
	log.Info().Msg("stopped")
	return nil
}

// checkPublicURL refuses a --public-url that cannot start a link: it must
// be an absolute http(s) URL without a query or fragment.
func checkPublicURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		shown := "" // an unparsable URL may hold a password: not shown
		if err == nil {
			shown = " " + u.Redacted()
		}
		return usageErrorf("--public-url%s: want the service's base URL as clients reach it, such as https://addr.example.com (no user, query or fragment)", shown)
	}
	return nil
}

// readSecret reads a signing secret file; surrounding white space (a
// trailing newline from an editor or echo) is not part of the secret.
func readSecret(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--secret-file: %w", err)
	}
	b = []byte(strings.TrimSpace(string(b)))
	if len(b) < service.MinSecretLen {
		return nil, fmt.Errorf("--secret-file %s: the secret must be at least %d bytes", path, service.MinSecretLen)
	}
	return b, nil
}
