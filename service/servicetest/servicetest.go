package servicetest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
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

// Call is one verify request, as a Plan sees it.
type Call struct {
	N    int64      // the verify request's number, from 1
	Form url.Values // its parameters, from the query or the form body
}

// Fault is what to do to one verify request; the zero Fault serves it.
type Fault struct {
	// Status answers with this status instead of the service; with
	// Message, the body is an error envelope with that text, and with
	// RetryAfter, the answer has that Retry-After header.
	Status     int
	Message    string
	RetryAfter string
	// Drop closes the connection before any answer.
	Drop bool
	// Truncate lets the service answer, sends half of its body and then
	// closes the connection.
	Truncate bool
	// Delay lets the service answer after this pause: a slow answer.
	Delay time.Duration
}

func (f Fault) none() bool { return f == Fault{} }

// Faults wraps a service handler. Set Plan before the first request.
type Faults struct {
	// Plan, when set, picks the fault of each verify request. It is called
	// concurrently, and may also act (cancel a run, record a time).
	Plan func(Call) Fault

	next     http.Handler
	requests atomic.Int64
	verifies atomic.Int64
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
	switch {
	case strings.HasSuffix(r.URL.Path, "/createtoken"):
		rec := httptest.NewRecorder()
		f.next.ServeHTTP(rec, r)
		var tr api.TokenResponse
		if json.Unmarshal(rec.Body.Bytes(), &tr) == nil && tr.Token != "" {
			f.mu.Lock()
			f.tokens = append(f.tokens, tr.Token)
			f.mu.Unlock()
		}
		copyResponse(w, rec, -1)
		return
	case !strings.HasSuffix(r.URL.Path, "/verify"):
		f.next.ServeHTTP(w, r)
		return
	}
	n := f.verifies.Add(1)
	if f.Plan == nil {
		f.next.ServeHTTP(w, r)
		return
	}
	fault := f.Plan(Call{N: n, Form: form(r)})
	if fault.none() {
		f.next.ServeHTTP(w, r)
		return
	}
	f.injected.Add(1)
	switch {
	case fault.Drop:
		panic(http.ErrAbortHandler) // net/http and service.Transport both drop the exchange
	case fault.Status != 0:
		if fault.RetryAfter != "" {
			w.Header().Set("Retry-After", fault.RetryAfter)
		}
		writeEnvelope(w, fault.Status, fault.Message)
	case fault.Truncate:
		rec := httptest.NewRecorder()
		f.next.ServeHTTP(rec, r)
		copyResponse(w, rec, rec.Body.Len()/2)
	default:
		time.Sleep(fault.Delay) // a slow answer, not a wait for an event
		f.next.ServeHTTP(w, r)
	}
}

// form returns r's parameters and leaves its body for the handler to read.
func form(r *http.Request) url.Values {
	q := r.URL.Query()
	if r.Method != http.MethodPost || r.Body == nil {
		return q
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return q
	}
	if f, err := url.ParseQuery(string(body)); err == nil {
		for k, v := range f {
			q[k] = append(q[k], v...)
		}
	}
	return q
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
