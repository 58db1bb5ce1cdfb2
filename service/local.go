package service

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
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

// LocalBaseURL is the base URL to give a client of NewLocal's transport. The
// name never resolves, so a client built without that transport fails
// instead of reaching some other host.
const LocalBaseURL = "http://embedded.invalid"

// NewLocal returns the service for m with one ephemeral, unlimited-rate
// integration, for the embedded mode of `addrclean run`: an
// http.RoundTripper that serves requests in process (see Transport), and
// the integration's API key. The embedded path thus goes through the same
// HTTP client and handler as a remote service, without a socket. There is
// nothing to stop: a request is served for as long as its own context lets
// it.
func NewLocal(m Matcher, log zerolog.Logger, opts ...Option) (http.RoundTripper, string, error) {
	in, err := NewDevIntegration()
	if err != nil {
		return nil, "", err
	}
	in.Name = "embedded"
	svc, err := New(m, []Integration{in}, append([]Option{WithLogger(log)}, opts...)...)
	if err != nil {
		return nil, "", err
	}
	return Transport(svc), in.Key, nil
}

// Transport returns an http.RoundTripper that serves each request with h
// in process, as a server would: h runs in its own goroutine with the
// request's context and body, and the response body streams what h writes
// (reading it is what lets h go on writing; closing it makes h's further
// writes fail). RoundTrip returns once h has written the header; the
// request's context ending first fails the exchange, and once the
// response has started, its body reads. A panic in h fails the exchange
// (or cuts the body short) instead of the process. Concurrent requests
// are served concurrently.
func Transport(h http.Handler) http.RoundTripper { return handlerTransport{h} }

type handlerTransport struct{ h http.Handler }

// ErrHandlerPanic is the cause of an exchange whose handler panicked
// before writing its header.
var ErrHandlerPanic = errors.New("service: the handler panicked")

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	// What a server would give the handler: the path and query only, the
	// host in Host, a body that is never nil.
	sr := req.Clone(ctx)
	sr.URL.Scheme, sr.URL.Host, sr.URL.User = "", "", nil
	sr.Host = cmp.Or(sr.Host, req.URL.Host)
	sr.RequestURI = sr.URL.RequestURI()
	sr.RemoteAddr = "embedded"
	if sr.Body == nil {
		sr.Body = http.NoBody
	}
	pr, pw := io.Pipe()
	w := &pipeWriter{header: make(http.Header), body: pw, head: req.Method == http.MethodHead, ready: make(chan struct{})}
	go w.serve(t.h, sr)

	select {
	case <-w.ready:
	case <-ctx.Done():
		_ = pr.CloseWithError(ctx.Err()) // h's writes fail from now on
		return nil, ctx.Err()
	}
	if w.err != nil {
		_ = pr.CloseWithError(w.err)
		return nil, w.err
	}
	// A context that ends while the body is read fails the read, as with
	// net/http's transport (and the handler's further writes).
	stop := context.AfterFunc(ctx, func() { _ = pw.CloseWithError(ctx.Err()) })
	cl := int64(-1)
	if n, err := strconv.ParseInt(w.sent.Get("Content-Length"), 10, 64); err == nil && n >= 0 {
		cl = n
	}
	return &http.Response{
		Status:        strconv.Itoa(w.status) + " " + http.StatusText(w.status),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          &pipeBody{PipeReader: pr, ctx: ctx, stop: stop},
		ContentLength: cl,
		Request:       req,
	}, nil
}

// pipeBody is a response body; closing it stops watching the context.
type pipeBody struct {
	*io.PipeReader
	ctx  context.Context
	stop func() bool
}

// Read fails once the context has ended, even if the handler wrote more
// before the watcher closed the pipe.
func (b *pipeBody) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	return b.PipeReader.Read(p)
}

func (b *pipeBody) Close() error {
	b.stop()
	return b.PipeReader.Close()
}

// pipeWriter is the http.ResponseWriter of one in-process exchange. Only
// the handler's goroutine uses it until ready is closed; RoundTrip reads
// status, sent and err after that.
type pipeWriter struct {
	header http.Header
	body   *io.PipeWriter
	head   bool // a HEAD request: the body is not sent

	ready  chan struct{} // closed once the header is written or h failed
	status int
	sent   http.Header // header as it was at WriteHeader
	err    error       // h failed before writing the header
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(code int) {
	if w.sent != nil {
		return
	}
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	w.status, w.sent = code, w.header.Clone()
	close(w.ready)
}

func (w *pipeWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.head {
		return len(p), nil
	}
	return w.body.Write(p)
}

// serve runs h, then ends the body: at EOF, or cut short if h panicked.
func (w *pipeWriter) serve(h http.Handler, r *http.Request) {
	defer func() {
		_ = r.Body.Close()
		if v := recover(); v != nil {
			err := fmt.Errorf("%w: %v", ErrHandlerPanic, v)
			if w.sent == nil {
				w.err = err
				close(w.ready)
				return
			}
			_ = w.body.CloseWithError(fmt.Errorf("%w: %w", io.ErrUnexpectedEOF, err))
			return
		}
		w.WriteHeader(http.StatusOK)
		_ = w.body.Close()
	}()
	h.ServeHTTP(w, r)
}
