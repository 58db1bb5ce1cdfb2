package service

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/addrclean/addrclean/api"
	"github.com/rs/zerolog"
)

// discardWriter is a ResponseWriter that keeps nothing, so the benchmark
// measures the handler.
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(code int)        { w.code = code }

// BenchmarkServeHTTP measures one verify answer through the handler with a
// matcher that costs nothing: the service's own overhead per request.
func BenchmarkServeHTTP(b *testing.B) {
	s := newTestService(b, fixtures(), nil)
	tok := token(b, s, testKey)
	for _, bc := range []struct{ name, method, target, body string }{
		{"GET", http.MethodGet, "/3.0/verify?" + query([]string{"1 Mian Street", "Dun Laoghaire"}, "country", "IE", "token", tok).Encode(), ""},
		{"POST", http.MethodPost, "/3.0/verify", query([]string{"1 Mian Street", "Dun Laoghaire"}, "country", "IE", "token", tok).Encode()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				var body io.Reader
				if bc.body != "" {
					body = strings.NewReader(bc.body)
				}
				r := httptest.NewRequest(bc.method, bc.target, body)
				if bc.body != "" {
					r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				}
				clear(w.h)
				s.ServeHTTP(w, r)
				if w.code != 200 {
					b.Fatalf("status %d", w.code)
				}
			}
		})
	}
}

// BenchmarkHTTPThroughput runs the service on loopback (as `addrclean
// serve` does) with as many concurrent keep-alive clients as -cpu × 8;
// req/s is the figure. BenchmarkLocalThroughput is the same in process.
func BenchmarkHTTPThroughput(b *testing.B) {
	benchThroughput(b, fixtures(), false)
}

func BenchmarkLocalThroughput(b *testing.B) {
	benchThroughput(b, fixtures(), true)
}

func benchThroughput(b *testing.B, m Matcher, local bool) {
	rt, key, err := NewLocal(m, zerolog.Nop())
	if err != nil {
		b.Fatal(err)
	}
	client := &http.Client{Transport: rt}
	base := LocalBaseURL
	if !local {
		srv := httptest.NewServer(rt.(localTransport).h)
		defer srv.Close()
		base = srv.URL
		client = &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}}
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/3.0/createtoken", nil)
	req.SetBasicAuth(key, "")
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	var tr api.TokenResponse
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	target := base + "/3.0/verify?" + query([]string{"1 Mian Street", "Dun Laoghaire"}, "country", "IE", "token", tr.Token).Encode()
	b.SetParallelism(8)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Get(target)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer() // the deferred shutdown is not part of the figure
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
}

// BenchmarkServeHTTPSample is BenchmarkServeHTTP over the real gazetteer
// and the bundled sample reference (matching included).
func BenchmarkServeHTTPSample(b *testing.B) {
	s := newTestService(b, sampleIndex(b), nil)
	tok := token(b, s, testKey)
	target := "/3.0/verify?" + query([]string{"1 orchard ave", "dun laoghaire"}, "country", "IE", "token", tok).Encode()
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		clear(w.h)
		s.ServeHTTP(w, r)
		if w.code != 200 {
			b.Fatalf("status %d", w.code)
		}
	}
}

// BenchmarkHTTPThroughputSample is BenchmarkHTTPThroughput over the real
// gazetteer and the bundled sample reference.
func BenchmarkHTTPThroughputSample(b *testing.B) {
	benchThroughput(b, sampleIndex(b), false)
}

// BenchmarkToken measures issuing and checking one token.
func BenchmarkToken(b *testing.B) {
	sg := newSigner(testSecret)
	kid := sg.keyID(testKey)
	now := time.Now()
	b.Run("issue", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := sg.issue(kid, now.Add(time.Minute)); err != nil {
				b.Fatal(err)
			}
		}
	})
	tok, _ := sg.issue(kid, now.Add(time.Minute))
	b.Run("check", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := sg.check(tok, now); err != nil {
				b.Fatal(err)
			}
		}
	})
}
