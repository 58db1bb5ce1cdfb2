package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/service"
	"github.com/addrclean/addrclean/service/servicetest"
)

const testKey = "pub_0b9d6c1e-7f3a-4c2e-9a51-3d8e2f6a1b47"

// faultPlan has the real service fail verify requests on purpose according
// to their first address line:
//
//	"Flaky ..."  503 on the first two attempts
//	"Busy ..."   429 with Retry-After: 1 on the first attempt
//	"Drop ..."   the connection is closed without an answer, first attempt
//	"Bad ..."    400 with an error envelope, always
//
// and lets the service answer anything else. busyAt says when the "Busy"
// row's attempts came.
type faultPlan struct {
	mu       sync.Mutex
	attempts map[string]int
	busyAt   []time.Time
}

func (p *faultPlan) fault(c servicetest.Call) servicetest.Fault {
	line := c.Form.Get("addressLine")
	p.mu.Lock()
	p.attempts[line]++
	n := p.attempts[line]
	if strings.HasPrefix(line, "Busy") {
		p.busyAt = append(p.busyAt, time.Now())
	}
	p.mu.Unlock()
	switch {
	case strings.HasPrefix(line, "Flaky") && n <= 2:
		return servicetest.Fault{Status: http.StatusServiceUnavailable, Message: "Try again."}
	case strings.HasPrefix(line, "Busy") && n == 1:
		return servicetest.Fault{Status: http.StatusTooManyRequests, Message: "Slow down.", RetryAfter: "1"}
	case strings.HasPrefix(line, "Drop") && n == 1:
		return servicetest.Fault{Drop: true}
	case strings.HasPrefix(line, "Bad"):
		return servicetest.Fault{Status: http.StatusBadRequest, Message: "addressLine is not valid."}
	}
	return servicetest.Fault{}
}

// TestWithAPIClient runs the pipeline through the real api.Client against
// a faulty service: every row once and in order, failures classified as the
// api package says, and neither key nor token in any result or log line.
func TestWithAPIClient(t *testing.T) {
	lines := []string{"1 Main Street", "Flaky 2 Road", "Busy 3 Lane", "Drop 4 Way", "Bad 5 Place", "1 main  street", "6 Last Row"}
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		// In a synctest bubble, with the service in process (no socket), the
		// 429's one-second Retry-After passes at once and exactly.
		t.Run(method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				plan := &faultPlan{attempts: map[string]int{}}
				svc := servicetest.New(t, service.NewIntegration(testKey))
				svc.Plan = plan.fault
				var logs bytes.Buffer
				log := zerolog.New(zerolog.SyncWriter(&logs)).Level(zerolog.DebugLevel)
				client, err := api.New(service.LocalBaseURL, api.Secret(testKey), api.WithMethod(method), api.WithLogger(log),
					api.WithHTTPClient(&http.Client{Transport: service.Transport(svc)}))
				if err != nil {
					t.Fatal(err)
				}
				w := &memWriter{}
				st, err := Run(testCtx(t), Config{
					Source:   &genSource{n: len(lines), cells: func(i int) []string { return []string{lines[i-1], "IE"} }},
					Mapper:   cellMapper,
					Verifier: client,
					Workers:  3,
					Logger:   log,
					Jitter:   noJitter,
				}.with(w))
				if err != nil {
					t.Fatal(err)
				}
				got := w.rows()
				checkPrefix(t, got)
				if len(got) != len(lines) {
					t.Fatalf("wrote %d rows", len(got))
				}
				for _, r := range got {
					wantErr := ""
					if strings.HasPrefix(lines[r.Row-1], "Bad") {
						wantErr = "service answered 400: addressLine is not valid."
					}
					if r.Err != wantErr {
						t.Errorf("row %d: av_error %q, want %q", r.Row, r.Err, wantErr)
					}
				}
				// Two retries for Flaky, one for Drop.
				if st.RateLimited != 1 || st.Retries != 3 || st.CallsSaved != 1 {
					t.Errorf("429s %d, retries %d, saved %d; want 1, 3, 1", st.RateLimited, st.Retries, st.CallsSaved)
				}
				plan.mu.Lock()
				defer plan.mu.Unlock()
				if len(plan.busyAt) != 2 || plan.busyAt[1].Sub(plan.busyAt[0]) < time.Second {
					t.Errorf("attempts at %v: the 429's Retry-After of 1s was not honoured", plan.busyAt)
				}
				out, _ := json.Marshal(got)
				tokens := svc.Tokens()
				if len(tokens) == 0 {
					t.Fatal("the service issued no token")
				}
				for _, secret := range append([]string{testKey}, tokens...) {
					if bytes.Contains(out, []byte(secret)) || bytes.Contains(logs.Bytes(), []byte(secret)) {
						t.Fatalf("a secret leaked into the results or the logs:\n%s", logs.String())
					}
				}
			})
		})
	}
}

// TestBadKeyIsFatal checks that a refused key stops the run at once with an
// error that wraps api.ErrUnauthorized, after very few requests.
func TestBadKeyIsFatal(t *testing.T) {
	svc := servicetest.New(t, service.NewIntegration(testKey))
	srv := servicetest.Start(t, svc)
	client, err := api.New(srv.URL, api.Secret("pub_wrong-key-0000"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := Run(testCtx(t), Config{
		Source: &genSource{n: 1_000_000, cells: distinct}, Mapper: cellMapper, Verifier: client, Workers: 8,
	}.with(&memWriter{}))
	if !errors.Is(err, api.ErrUnauthorized) {
		t.Fatalf("err = %v, want one wrapping api.ErrUnauthorized", err)
	}
	if strings.Contains(err.Error(), "pub_wrong-key-0000") {
		t.Fatal("the key is in the error")
	}
	if n := svc.Requests(); n > 16 || st.RowsWritten != 0 {
		t.Fatalf("%d requests, %d rows written after a refused key", n, st.RowsWritten)
	}
}
