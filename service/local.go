package service

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// NewServer returns an http.Server for h with timeouts that suit the
// service: short header reads, bounded headers, and keep-alive connections
// for clients that send many requests.
func NewServer(addr string, h http.Handler, log zerolog.Logger) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    1 << 20, // above the 64 KiB query limit, which answers 413 with an envelope
		ErrorLog:          newStdLog(log),
	}
}

// StartLocal runs the service for m on a free loopback port with one
// ephemeral, unlimited-rate integration, for the embedded mode of
// `addrclean run`. It returns the base URL and the API key; stop closes the
// server and its connections at once and waits for it. The server also
// stops when ctx ends.
func StartLocal(ctx context.Context, m Matcher, log zerolog.Logger, opts ...Option) (baseURL, key string, stop func(), err error) {
	in, err := NewDevIntegration()
	if err != nil {
		return "", "", nil, err
	}
	in.Name = "embedded"
	svc, err := New(m, []Integration{in}, append([]Option{WithLogger(log)}, opts...)...)
	if err != nil {
		return "", "", nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", "", nil, fmt.Errorf("service: listening on loopback: %w", err)
	}
	srv := NewServer(ln.Addr().String(), svc, log)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error().Err(err).Msg("embedded service stopped")
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			// Close, not Shutdown: the only client is the caller, done with
			// its calls when it stops the service. Shutdown would wait for
			// connections the client opened but never used (a cancelled
			// call), which net/http counts idle only after 5 s: a run
			// stopped by a fatal error lingered that long before exiting.
			_ = srv.Close()
			<-done
		})
	}
	go func() {
		select {
		case <-ctx.Done():
			stop()
		case <-done:
		}
	}()
	return "http://" + ln.Addr().String(), in.Key, stop, nil
}
