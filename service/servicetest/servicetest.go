package servicetest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/gazetteer"
	sampledata "github.com/addrclean/addrclean/sample_data"
	"github.com/addrclean/addrclean/service"
)

// Call is one request, as a Plan or a TokenPlan sees it.
type Call struct {
	N    int64      // the request's number among those of its endpoint, from 1
	Form url.Values // its parameters, from the query or the form body
	// Request is the request as received, for its method, URL, headers
	// and context; its body is the service's to read: the bytes are in
	// Body.
	Request *http.Request
	Body    []byte
}

// Fault is what to do to one request; the zero Fault serves it.
type Fault struct {
	// Status answers with this status instead of the service: with Body,
	// that body as is; else with Message, an error envelope with that
	// text; else no body. RetryAfter sets the Retry-After header and
	// Header adds others (a Content-Type, a Location): what a proxy or a
	// stranger in front of the service could answer.
	Status     int
	Message    string
	Body       string
	RetryAfter string
	Header     http.Header
	// Drop closes the connection before any answer.
	Drop bool
	// Truncate lets the service answer, sends half of its body and then
	// closes the connection.
	Truncate bool
	// Delay lets the service answer after this pause: a slow answer. A
	// request whose client gives up first gets none.
	Delay time.Duration
}

func (f Fault) none() bool {
	return f.Status == 0 && f.Message == "" && f.Body == "" && f.RetryAfter == "" && f.Header == nil &&
		!f.Drop && !f.Truncate && f.Delay == 0
}

// Faults wraps a service handler. Set Plan before the first request.
type Faults struct {
	// Plan, when set, picks the fault of each verify request. It is called
	// concurrently, and may also act (cancel a run, record a time, hold
	// the request until the test lets it go).
	Plan func(Call) Fault
	// TokenPlan does the same for createtoken requests.
	TokenPlan func(Call) Fault

	next     http.Handler
	requests atomic.Int64
	verifies atomic.Int64
	creates  atomic.Int64
	injected atomic.Int64
	mu       sync.Mutex
	tokens   []string
}

// Wrap returns next with fault injection.
func Wrap(next http.Handler) *Faults { return &Faults{next: next} }

// Requests is the number of requests received, of every endpoint.
func (f *Faults) Requests() int64 { return f.requests.Load() }

// Verifies is the number of verify requests received.
func (f *Faults) Verifies() int64 { return f.verifies.Load() }

// TokenRequests is the number of createtoken requests received.
func (f *Faults) TokenRequests() int64 { return f.creates.Load() }

// Injected is the number of faults injected.
func (f *Faults) Injected() int64 { return f.injected.Load() }

// Tokens returns the tokens the service issued.
func (f *Faults) Tokens() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.tokens...)
}

func (f *Faults) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	var n int64
	var plan func(Call) Fault
	next := f.next
	switch {
	case strings.HasSuffix(r.URL.Path, "/createtoken"):
		n, plan, next = f.creates.Add(1), f.TokenPlan, http.HandlerFunc(f.createToken)
	case strings.HasSuffix(r.URL.Path, "/verify"):
		n, plan = f.verifies.Add(1), f.Plan
	default:
		f.next.ServeHTTP(w, r)
		return
	}
	if plan == nil {
		next.ServeHTTP(w, r)
		return
	}
	c := Call{N: n, Request: r}
	c.Form, c.Body = form(r)
	fault := plan(c)
	if fault.none() {
		next.ServeHTTP(w, r)
		return
	}
	f.injected.Add(1)
	switch {
	case fault.Drop:
		panic(http.ErrAbortHandler) // net/http and service.Transport both drop the exchange
	case fault.Status != 0:
		maps.Copy(w.Header(), fault.Header)
		if fault.RetryAfter != "" {
			w.Header().Set("Retry-After", fault.RetryAfter)
		}
		if fault.Body != "" {
			w.WriteHeader(fault.Status)
			_, _ = io.WriteString(w, fault.Body)
			return
		}
		writeEnvelope(w, fault.Status, fault.Message)
	case fault.Truncate:
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		copyResponse(w, rec, rec.Body.Len()/2)
	default:
		// A slow answer, not a wait for an event; it ends with the
		// request, as a server's work for a client that left does.
		t := time.NewTimer(fault.Delay)
		defer t.Stop()
		select {
		case <-t.C:
			next.ServeHTTP(w, r)
		case <-r.Context().Done():
		}
	}
}

// createToken serves a createtoken request and keeps the token issued.
func (f *Faults) createToken(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	f.next.ServeHTTP(rec, r)
	var tr api.TokenResponse
	if json.Unmarshal(rec.Body.Bytes(), &tr) == nil && tr.Token != "" {
		f.mu.Lock()
		f.tokens = append(f.tokens, tr.Token)
		f.mu.Unlock()
	}
	copyResponse(w, rec, -1)
}

// form returns r's parameters and body, and leaves the body for the
// handler to read.
func form(r *http.Request) (url.Values, []byte) {
	q := r.URL.Query()
	if r.Method != http.MethodPost || r.Body == nil {
		return q, nil
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return q, body
	}
	if f, err := url.ParseQuery(string(body)); err == nil {
		for k, v := range f {
			q[k] = append(q[k], v...)
		}
	}
	return q, body
}

// writeEnvelope answers status with the service's error envelope for msg,
// or with no body if msg is empty.
func writeEnvelope(w http.ResponseWriter, status int, msg string) {
	if msg == "" {
		w.WriteHeader(status)
		return
	}
	b, _ := json.Marshal(struct {
		Type string   `json:"type"`
		Form api.Form `json:"form"`
	}{"error", api.Form{Language: "en", Message: api.Message{ID: status * 10, Severity: api.SeverityError, Value: msg}}})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// copyResponse writes rec to w; a limit >= 0 sends only that much of the
// body and then drops the connection.
func copyResponse(w http.ResponseWriter, rec *httptest.ResponseRecorder, limit int) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	body := rec.Body.Bytes()
	if limit < 0 {
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body[:limit])
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	panic(http.ErrAbortHandler)
}

var (
	sampleOnce sync.Once
	sampleIx   *gazetteer.Index
	sampleErr  error
)

// SampleIndex is the gazetteer of the sample reference, loaded once per
// test binary.
func SampleIndex(t testing.TB) *gazetteer.Index {
	t.Helper()
	sampleOnce.Do(func() {
		sampleIx, sampleErr = gazetteer.Load(context.Background(), sampledata.Reference())
	})
	if sampleErr != nil {
		t.Fatal(sampleErr)
	}
	return sampleIx
}

// New returns the real service for in over the sample reference, wrapped
// by Faults.
func New(t testing.TB, in service.Integration, opts ...service.Option) *Faults {
	t.Helper()
	svc, err := service.New(SampleIndex(t), []service.Integration{in}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return Wrap(svc)
}

// Start serves f on a loopback httptest server, closed when the test ends.
func Start(t testing.TB, f *Faults) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv
}
