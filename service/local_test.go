package service

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/addrclean/addrclean/api"
	"github.com/rs/zerolog"
)

// TestLocal verifies through NewLocal's transport with the api client, as
// the embedded mode of `addrclean run` does, from many goroutines at once.
func TestLocal(t *testing.T) {
	rt, key, err := NewLocal(fixtures(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	hc := api.NewHTTPClient(16, 0)
	hc.Transport = rt
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		c, err := api.New(LocalBaseURL, api.Secret(key), api.WithHTTPClient(hc), api.WithMethod(method))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for range 20 {
					resp, err := c.Verify(context.Background(), api.Address{Lines: []string{"1 Main Street"}, Country: "IE"})
					if err != nil {
						t.Error(err)
						return
					}
					if resp.Action != api.ActionAccept || !strings.HasPrefix(resp.Links[0].Href, LocalBaseURL+"/3.0/verify?") {
						t.Errorf("%s: action %q, self %q", method, resp.Action, resp.Links[0].Href)
						return
					}
				}
			})
		}
		wg.Wait()
	}
}

// TestLocalBodyLimit sends a body over the service's limit through the
// transport: the handler sees the body and answers 413.
func TestLocalBodyLimit(t *testing.T) {
	hc, tok := localClient(t, WithMaxBodyBytes(300))
	for _, tc := range []struct {
		body string
		want int
	}{
		{"token=" + tok + "&addressLine=1+Main+Street&country=IE", http.StatusOK},
		{"token=" + tok + "&addressLine=" + strings.Repeat("x", 400) + "&country=IE", http.StatusRequestEntityTooLarge},
	} {
		req, _ := http.NewRequest(http.MethodPost, LocalBaseURL+"/3.0/verify", strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want || resp.ContentLength != int64(len(body)) {
			t.Errorf("body of %d bytes: %d, Content-Length %d for %d bytes: %s", len(tc.body), resp.StatusCode, resp.ContentLength, len(body), body)
		}
	}
}

// TestTransport checks what a client can tell of an in-process exchange:
// the request the handler sees, streaming, cancellation, an early close,
// panics, HEAD.
func TestTransport(t *testing.T) {
	type result = exchange
	tests := []struct {
		name string
		// handler serves the request; step, when it blocks on it, lets the
		// test act first (cancel, close) and is closed by the test.
		handler func(w http.ResponseWriter, r *http.Request, step chan struct{})
		method  string
		act     func(cancel context.CancelFunc, body io.Closer) // after the first part of the body
		// cancelAtStep cancels the request once the handler closes step.
		cancelAtStep bool
		check        func(t *testing.T, got result, handlerErr error)
	}{
		{
			name:   "request as a server gives it",
			method: http.MethodPost,
			handler: func(w http.ResponseWriter, r *http.Request, _ chan struct{}) {
				b, _ := io.ReadAll(r.Body)
				w.WriteHeader(http.StatusTeapot)
				_, _ = io.WriteString(w, r.Host+" "+r.RequestURI+" "+r.URL.String()+" "+string(b))
				w.Header().Set("X-Late", "not sent")
			},
			check: func(t *testing.T, got result, _ error) {
				if got.status != http.StatusTeapot || got.body != "h.invalid /p?q=1 /p?q=1 in" || got.header.Get("X-Late") != "" || got.err != nil {
					t.Errorf("got %+v", got)
				}
			},
		},
		{
			name: "body streams: cancel while reading",
			handler: func(w http.ResponseWriter, r *http.Request, step chan struct{}) {
				_, _ = io.WriteString(w, "first")
				<-step
				<-r.Context().Done()
				_, _ = io.WriteString(w, "never read")
			},
			act: func(cancel context.CancelFunc, _ io.Closer) { cancel() },
			check: func(t *testing.T, got result, _ error) {
				if got.status != http.StatusOK || !errors.Is(got.err, context.Canceled) {
					t.Errorf("got %+v, want a cancelled read", got)
				}
			},
		},
		{
			name: "closing the body fails the handler's writes",
			handler: func(w http.ResponseWriter, r *http.Request, step chan struct{}) {
				_, _ = io.WriteString(w, "first")
				<-step
				if _, err := io.WriteString(w, "more"); err == nil {
					panic("write after close succeeded")
				}
			},
			act: func(_ context.CancelFunc, body io.Closer) { body.Close() },
			check: func(t *testing.T, got result, handlerErr error) {
				if handlerErr != nil {
					t.Error(handlerErr)
				}
			},
		},
		{
			name: "cancelled before the header",
			handler: func(w http.ResponseWriter, r *http.Request, step chan struct{}) {
				close(step)
				<-r.Context().Done()
			},
			cancelAtStep: true,
			check: func(t *testing.T, got result, _ error) {
				if !errors.Is(got.err, context.Canceled) {
					t.Errorf("got %+v, want context.Canceled", got)
				}
			},
		},
		{
			name:    "panic before the header",
			handler: func(http.ResponseWriter, *http.Request, chan struct{}) { panic("boom") },
			check: func(t *testing.T, got result, _ error) {
				if !errors.Is(got.err, ErrHandlerPanic) {
					t.Errorf("got %+v, want ErrHandlerPanic", got)
				}
			},
		},
		{
			name: "panic after the header",
			handler: func(w http.ResponseWriter, _ *http.Request, _ chan struct{}) {
				_, _ = io.WriteString(w, "part")
				panic(http.ErrAbortHandler)
			},
			check: func(t *testing.T, got result, _ error) {
				if got.status != http.StatusOK || !errors.Is(got.err, io.ErrUnexpectedEOF) {
					t.Errorf("got %+v, want a truncated body", got)
				}
			},
		},
		{
			name:   "HEAD has no body",
			method: http.MethodHead,
			handler: func(w http.ResponseWriter, _ *http.Request, _ chan struct{}) {
				_, _ = io.WriteString(w, "not sent")
			},
			check: func(t *testing.T, got result, _ error) {
				if got.status != http.StatusOK || got.body != "" || got.err != nil {
					t.Errorf("got %+v", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step := make(chan struct{})
			done := make(chan error, 1)
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer func() {
					if v := recover(); v != nil {
						if s, ok := v.(string); ok && strings.Contains(s, "succeeded") {
							done <- errors.New(s)
							return
						}
						done <- nil
						panic(v)
					}
					done <- nil
				}()
				tt.handler(w, r, step)
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			method := tt.method
			if method == "" {
				method = http.MethodGet
			}
			req, _ := http.NewRequestWithContext(ctx, method, "http://h.invalid/p?q=1", strings.NewReader("in"))
			if tt.cancelAtStep {
				go func() { <-step; cancel() }()
			}
			var got result
			resp, err := Transport(h).RoundTrip(req)
			if err != nil {
				got.err = err
			} else {
				got.status, got.header = resp.StatusCode, resp.Header
				var first [5]byte
				if tt.act != nil {
					if _, err := io.ReadFull(resp.Body, first[:]); err != nil {
						t.Fatal(err)
					}
					tt.act(cancel, resp.Body)
					close(step)
				}
				b, err := io.ReadAll(resp.Body)
				got.body, got.err = string(b), err
				resp.Body.Close()
			}
			tt.check(t, got, <-done)
		})
	}
}

// exchange is what a client got of an in-process exchange.
type exchange struct {
	status int
	header http.Header
	body   string
	err    error // of RoundTrip, or else of reading the body
}

// localClient returns a client of NewLocal's transport for the service
// with opts, and a token of its key.
func localClient(t *testing.T, opts ...Option) (*http.Client, string) {
	t.Helper()
	rt, key, err := NewLocal(fixtures(), zerolog.Nop(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: rt}
	req, _ := http.NewRequest(http.MethodGet, LocalBaseURL+"/3.0/createtoken", nil)
	req.SetBasicAuth(key, "")
	var tr api.TokenResponse
	getJSON(t, hc, req, &tr)
	return hc, tr.Token
}

func getJSON(t *testing.T, hc *http.Client, req *http.Request, v any) {
	t.Helper()
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d %s", req.URL.Path, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatal(fmt.Errorf("%s: %w", body, err))
	}
}

// TestLocalTransport checks what a client can tell of an exchange served
// by NewLocal's transport, in the caller's goroutine: the same as through
// Transport for a handler that does not wait.
func TestLocalTransport(t *testing.T) {
	type result = exchange
	tests := []struct {
		name    string
		method  string
		handler func(w http.ResponseWriter, r *http.Request, cancel context.CancelFunc)
		// before acts on the request before it is sent, after on the
		// response before its body is read.
		before func(cancel context.CancelFunc)
		after  func(cancel context.CancelFunc, body io.Closer)
		check  func(t *testing.T, got result)
	}{
		{
			name:   "request as a server gives it",
			method: http.MethodPost,
			handler: func(w http.ResponseWriter, r *http.Request, _ context.CancelFunc) {
				b, _ := io.ReadAll(r.Body)
				w.Header().Set("X-Early", "sent")
				w.WriteHeader(http.StatusTeapot)
				_, _ = io.WriteString(w, r.Host+" "+r.RequestURI+" "+r.URL.String()+" "+r.RemoteAddr+" "+string(b))
				w.Header().Set("X-Late", "not sent")
			},
			check: func(t *testing.T, got result) {
				if got.status != http.StatusTeapot || got.body != "h.invalid /p?q=1 /p?q=1 embedded in" ||
					got.header.Get("X-Early") != "sent" || got.header.Get("X-Late") != "" || got.err != nil {
					t.Errorf("got %+v", got)
				}
			},
		},
		{
			name:    "context ended before",
			handler: func(http.ResponseWriter, *http.Request, context.CancelFunc) { panic("served") },
			before:  func(cancel context.CancelFunc) { cancel() },
			check: func(t *testing.T, got result) {
				if !errors.Is(got.err, context.Canceled) {
					t.Errorf("got %+v, want context.Canceled", got)
				}
			},
		},
		{
			name: "context ends while serving",
			handler: func(w http.ResponseWriter, _ *http.Request, cancel context.CancelFunc) {
				cancel()
				_, _ = io.WriteString(w, "too late")
			},
			check: func(t *testing.T, got result) {
				if !errors.Is(got.err, context.Canceled) {
					t.Errorf("got %+v, want context.Canceled", got)
				}
			},
		},
		{
			name: "body fails once the context ends",
			handler: func(w http.ResponseWriter, _ *http.Request, _ context.CancelFunc) {
				_, _ = io.WriteString(w, "never read")
			},
			after: func(cancel context.CancelFunc, _ io.Closer) { cancel() },
			check: func(t *testing.T, got result) {
				if got.status != http.StatusOK || !errors.Is(got.err, context.Canceled) {
					t.Errorf("got %+v, want a cancelled read", got)
				}
			},
		},
		{
			name: "body read after close",
			handler: func(w http.ResponseWriter, _ *http.Request, _ context.CancelFunc) {
				_, _ = io.WriteString(w, "never read")
			},
			after: func(_ context.CancelFunc, body io.Closer) { body.Close() },
			check: func(t *testing.T, got result) {
				if !errors.Is(got.err, http.ErrBodyReadAfterClose) {
					t.Errorf("got %+v, want ErrBodyReadAfterClose", got)
				}
			},
		},
		{
			name:    "panic before the header",
			handler: func(http.ResponseWriter, *http.Request, context.CancelFunc) { panic("boom") },
			check: func(t *testing.T, got result) {
				if !errors.Is(got.err, ErrHandlerPanic) {
					t.Errorf("got %+v, want ErrHandlerPanic", got)
				}
			},
		},
		{
			name: "panic after the header",
			handler: func(w http.ResponseWriter, _ *http.Request, _ context.CancelFunc) {
				_, _ = io.WriteString(w, "part")
				panic(http.ErrAbortHandler)
			},
			check: func(t *testing.T, got result) {
				if got.status != http.StatusOK || got.body != "part" || !errors.Is(got.err, io.ErrUnexpectedEOF) || !errors.Is(got.err, ErrHandlerPanic) {
					t.Errorf("got %+v, want a truncated body", got)
				}
			},
		},
		{
			name:   "HEAD has no body",
			method: http.MethodHead,
			handler: func(w http.ResponseWriter, _ *http.Request, _ context.CancelFunc) {
				w.Header().Set("Content-Length", "8")
				_, _ = io.WriteString(w, "not sent")
			},
			check: func(t *testing.T, got result) {
				if got.status != http.StatusOK || got.body != "" || got.err != nil || got.header.Get("Content-Length") != "8" {
					t.Errorf("got %+v", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { tt.handler(w, r, cancel) })
			method := cmp.Or(tt.method, http.MethodGet)
			body := &closeCounter{Reader: strings.NewReader("in")}
			req, _ := http.NewRequestWithContext(ctx, method, "http://h.invalid/p?q=1", body)
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("in")), nil }
			sent := req.Header.Clone()
			if tt.before != nil {
				tt.before(cancel)
			}
			var got result
			resp, err := localTransport{h}.RoundTrip(req)
			if err != nil {
				got.err = err
			} else {
				got.status, got.header = resp.StatusCode, resp.Header
				if tt.after != nil {
					tt.after(cancel, resp.Body)
				}
				b, err := io.ReadAll(resp.Body)
				got.body, got.err = string(b), err
				resp.Body.Close()
			}
			tt.check(t, got)
			if body.closed != 1 {
				t.Errorf("request body closed %d times, want once", body.closed)
			}
			if req.URL.String() != "http://h.invalid/p?q=1" || !maps.EqualFunc(req.Header, sent, slices.Equal) {
				t.Errorf("the client's request changed: %s %v", req.URL, req.Header)
			}
		})
	}
}

// TestLocalTransportStreamsBodies: a request body that could block goes
// through Transport, so that its context still ends the exchange.
func TestLocalTransportStreamsBodies(t *testing.T) {
	reading := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(reading)
		_, _ = io.ReadAll(r.Body)
	})
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://h.invalid/p", pr)
	go func() { <-reading; cancel() }()
	if _, err := (localTransport{h}).RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

// closeCounter counts the closes of a request body.
type closeCounter struct {
	io.Reader
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return nil }
