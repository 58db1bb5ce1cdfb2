package api

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// testKey looks like a real key so that scrubbing is exercised.
const testKey = "pub_3f6c1a2e-9b7d-4c5e-8a1f-0d2b4e6f8a9c"

// fakeService is a small stand-in for the service: createtoken checks the
// key, verify checks the token and answers the golden sample. Hooks let a
// test take over either endpoint.
type fakeService struct {
	t      testing.TB
	srv    *httptest.Server
	sample []byte

	tokenCalls  atomic.Int64
	verifyCalls atomic.Int64

	mu     sync.Mutex
	valid  map[string]bool
	issued []string

	// onToken and onVerify, when set, handle the request if they return
	// true. tok is the token the request carried.
	onToken  func(w http.ResponseWriter, r *http.Request) bool
	onVerify func(w http.ResponseWriter, r *http.Request, tok string) bool
}

func newFakeService(t testing.TB) *fakeService {
	t.Helper()
	sample, err := os.ReadFile("testdata/verify_response.json")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeService{t: t, sample: sample, valid: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/3.0/createtoken", f.createToken)
	mux.HandleFunc("/3.0/verify", f.verify)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeService) createToken(w http.ResponseWriter, r *http.Request) {
	f.tokenCalls.Add(1)
	if f.onToken != nil && f.onToken(w, r) {
		return
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(testKey+":"))
	if r.Header.Get("Authorization") != want {
		writeEnvelope(w, http.StatusUnauthorized, 4011, "Invalid API key "+r.Header.Get("Authorization"))
		return
	}
	f.mu.Lock()
	tok := fmt.Sprintf("tok_5e1d9c7b2a4f8e6d_%03d", len(f.issued)+1)
	f.issued = append(f.issued, tok)
	f.valid[tok] = true
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(TokenResponse{Token: tok, Type: "Token Create", TransactionID: "6f1c"})
}

func (f *fakeService) verify(w http.ResponseWriter, r *http.Request) {
	f.verifyCalls.Add(1)
	if err := r.ParseForm(); err != nil {
		writeEnvelope(w, http.StatusBadRequest, 4000, err.Error())
		return
	}
	tok := r.Form.Get("token")
	if f.onVerify != nil && f.onVerify(w, r, tok) {
		return
	}
	f.mu.Lock()
	ok := f.valid[tok]
	f.mu.Unlock()
	if !ok {
		// Echo the token, as a careless service might: the client must
		// scrub it.
		writeEnvelope(w, http.StatusUnauthorized, 4012, "Token "+tok+" expired")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(f.sample)
}

// expire makes every token issued so far invalid.
func (f *fakeService) expire() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.valid)
}

// secrets returns the key, its Basic form and every token issued.
func (f *fakeService) secrets() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string{testKey, base64.StdEncoding.EncodeToString([]byte(testKey + ":"))}, f.issued...)
}

func (f *fakeService) client(t testing.TB, opts ...Option) *Client {
	t.Helper()
	c, err := New(f.srv.URL, testKey, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func writeEnvelope(w http.ResponseWriter, status, id int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"type": "error",
		"form": map[string]any{
			"language": "en",
			"message":  map[string]any{"id": id, "severity": "Error", "value": msg},
		},
	})
}

// assertNoSecrets fails if err's text, or that of anything it wraps,
// contains the key or a token.
func assertNoSecrets(t testing.TB, err error, secrets []string) {
	t.Helper()
	if err == nil {
		return
	}
	texts := []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)}
	for _, s := range texts {
		for _, sec := range secrets {
			if sec != "" && strings.Contains(s, sec) {
				t.Errorf("error text leaks a secret: %q", s)
			}
		}
	}
}

var testAddress = Address{Lines: []string{"12 Georges St Upr"}, City: "Dún Laoghaire", Country: "IE"}
