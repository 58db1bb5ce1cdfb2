package service

import (
	"bytes"
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
// http.RoundTripper that serves each request in process, in the caller's
// goroutine (as Transport would, without a goroutine and a pipe per
// request), and the integration's API key. The embedded path thus goes
// through the same HTTP client and handler as a remote service, without a
// socket. There is nothing to stop: a request is served for as long as its
// own context lets it.
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
	return localTransport{svc}, in.Key, nil
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
	if err := endedBefore(req); err != nil {
		return nil, err
	}
	sr := req.Clone(ctx)
	asServed(sr, req)
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
	return response(req, w.status, w.sent, &pipeBody{PipeReader: pr, ctx: ctx, stop: stop}), nil
}

// endedBefore returns the error of req's context if it has ended, having
// closed req's body as a RoundTripper must.
func endedBefore(req *http.Request) error {
	err := req.Context().Err()
	if err != nil && req.Body != nil {
		_ = req.Body.Close()
	}
	return err
}

// response is the answer to req that a handler gave with status and
// header, its body streaming from body.
func response(req *http.Request, status int, header http.Header, body io.ReadCloser) *http.Response {
	return &http.Response{
		Status:        statusLine(status),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          body,
		ContentLength: contentLength(header),
		Request:       req,
	}
}

// asServed makes sr, a copy of req with its own URL, what a server would
// give the handler: the path and query only, the host in Host, a body that
// is never nil.
func asServed(sr, req *http.Request) {
	sr.URL.Scheme, sr.URL.Host, sr.URL.User = "", "", nil
	sr.Host = cmp.Or(sr.Host, req.URL.Host)
	sr.RequestURI = sr.URL.RequestURI()
	sr.RemoteAddr = "embedded"
	if sr.Body == nil {
		sr.Body = http.NoBody
	}
}

// contentLength is the Content-Length a handler sent, -1 if none.
func contentLength(h http.Header) int64 {
	if n, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64); err == nil && n >= 0 {
		return n
	}
	return -1
}

// statusLine is the Status of a response with code: "200 OK".
func statusLine(code int) string {
	if code == http.StatusOK {
		return "200 OK" // without formatting it for every answer
	}
	return strconv.Itoa(code) + " " + http.StatusText(code)
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

// localTransport is NewLocal's RoundTripper: it serves a request in the
// caller's goroutine, into a buffer. The service's handler never waits (its
// limiter refuses, it does not delay) and writes each answer, a few
// kilobytes, at once, so the goroutine, pipe and context watcher that
// Transport needs to stream an arbitrary handler's answer buy nothing here;
// with the stacks they grew, they were about a tenth of the embedded run's
// CPU outside the matcher. What the client sees is
// what Transport gives it: the request as a server gives it to the handler,
// a failed exchange for a context ended before the answer or a handler
// that panicked before its header, a body that fails once the context
// ends. A request body that could block (one net/http cannot replay,
// GetBody nil) goes through Transport, whose exchange its context can end.
type localTransport struct{ h http.Handler }

func (t localTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return handlerTransport(t).RoundTrip(req)
	}
	ctx := req.Context()
	if err := endedBefore(req); err != nil {
		return nil, err
	}
	// A shallow copy: the service's handler does not write to the
	// request's header (parseForm leaves it as it came).
	sr := req.WithContext(ctx)
	u := *req.URL
	sr.URL = &u
	asServed(sr, req)
	w := &bufferWriter{header: make(http.Header, 4), head: req.Method == http.MethodHead, body: bufPool.Get().(*bytes.Buffer)}
	end := w.serve(t.h, sr)
	if err := ctx.Err(); err != nil || w.sent == nil {
		putBuf(w.body)
		if err != nil {
			return nil, err
		}
		return nil, end
	}
	return response(req, w.status, w.sent, &bufferBody{ctx: ctx, buf: w.body, end: end}), nil
}

// bufferWriter is the http.ResponseWriter of one exchange served by
// localTransport.
type bufferWriter struct {
	header http.Header
	head   bool // a HEAD request: the body is not kept
	status int
	sent   http.Header // header as it was at WriteHeader
	body   *bytes.Buffer
}

// Header returns the header to send; once it is sent, a map of its own
// whose changes go nowhere, as a server ignores them.
func (w *bufferWriter) Header() http.Header {
	if w.header == nil {
		w.header = make(http.Header)
	}
	return w.header
}

// WriteHeader sends the header as it is: the map itself, which is the
// response's from now on, instead of a copy.
func (w *bufferWriter) WriteHeader(code int) {
	if w.sent != nil {
		return
	}
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	w.status, w.sent, w.header = code, w.header, nil
	if w.sent == nil {
		w.sent = make(http.Header)
	}
}

func (w *bufferWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.head {
		return len(p), nil
	}
	return w.body.Write(p)
}

// serve runs h and returns how the body ends: io.EOF, or, if h panicked,
// ErrHandlerPanic (with io.ErrUnexpectedEOF once the header was written:
// the body is cut short).
func (w *bufferWriter) serve(h http.Handler, r *http.Request) (end error) {
	defer func() {
		_ = r.Body.Close()
		if v := recover(); v != nil {
			end = fmt.Errorf("%w: %v", ErrHandlerPanic, v)
			if w.sent != nil {
				end = fmt.Errorf("%w: %w", io.ErrUnexpectedEOF, end)
			}
			return
		}
		w.WriteHeader(http.StatusOK)
	}()
	h.ServeHTTP(w, r)
	return io.EOF
}

// bufferBody is the body of an exchange served by localTransport. Its
// buffer goes back to the pool when it is closed.
type bufferBody struct {
	ctx context.Context
	buf *bytes.Buffer // nil once closed
	end error         // after the last byte
}

// Read fails once the context has ended, as a streamed body does.
func (b *bufferBody) Read(p []byte) (int, error) {
	if b.buf == nil {
		return 0, http.ErrBodyReadAfterClose
	}
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	if b.buf.Len() == 0 && len(p) > 0 {
		return 0, b.end
	}
	n, _ := b.buf.Read(p)
	return n, nil
}

func (b *bufferBody) Close() error {
	if b.buf != nil {
		putBuf(b.buf)
		b.buf = nil
	}
	return nil
}
