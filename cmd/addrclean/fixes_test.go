package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/addrclean/addrclean/service"
)

// A redirecting base URL must not lead the client, and the token with it,
// to another host: the run stops as a wrong base URL.
func TestRunDoesNotFollowRedirects(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.WriteHeader(http.StatusTeapot)
	}))
	defer other.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	res := runCLI(t, t.TempDir(), "--base-url", redirector.URL, "--rate", "0", "--country", "IE", "--limit", "5", sampleCSV(t))
	if res.code != exitFatal {
		t.Fatalf("exit %d, want %d\n%s", res.code, exitFatal, res.stderr)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("%d requests followed the redirect to another host", n)
	}
	if !strings.Contains(res.stderr, "base") {
		t.Errorf("message does not point at the base URL: %s", tail(res.stderr, 400))
	}
}

// Against a service whose quota is lower than --rate, the run adapts to the
// 429s and finishes with the same outputs as an unlimited run.
func TestRunAdaptsToServiceQuota(t *testing.T) {
	in := sampleCSV(t)
	clean := newTestService(t, nil)
	want := runCLI(t, t.TempDir(), "--base-url", clean.URL, "--rate", "0", "--country", "IE", "--limit", "120", in)

	integ := service.NewIntegration(testKey)
	integ.RequestsPerSecond, integ.Burst, integ.Location = 30, 2, true
	svc, err := service.New(sampleIx(t), []service.Integration{integ})
	if err != nil {
		t.Fatal(err)
	}
	limited := httptest.NewServer(svc)
	defer limited.Close()
	got := runCLI(t, t.TempDir(), "--base-url", limited.URL, "--rate", "40", "--workers", "8", "--country", "IE", "--limit", "120", in)
	if got.code != want.code {
		t.Fatalf("exit %d, want %d\n%s", got.code, want.code, tail(got.stderr, 2000))
	}
	if got.enriched != want.enriched {
		t.Error("enriched output under a quota differs from the unlimited run")
	}
	t.Logf("429s: %v, calls: %v, final rate limit: %v", got.summary["rate_limited"], got.summary["calls_made"], got.summary["rate_limit"])
	// The quota must actually have pressed: 429s came, and the limit was
	// cut under --rate. Without them the test would pass on any limiter.
	if n, _ := got.summary["rate_limited"].(float64); n < 1 {
		t.Errorf("no 429s under a 30/s quota at --rate 40: the test did not exercise the adaptation")
	}
	if r, _ := got.summary["rate_limit"].(float64); r <= 0 || r >= 40 {
		t.Errorf("rate limit at the end = %v, want cut under --rate 40", got.summary["rate_limit"])
	}
}

func TestRunFlagFixes(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("Address 1,Town,Country\n1 Victoria Place,Swords,IE\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"encoding in capitals", []string{"--encoding", "UTF-8"}, exitOK, ""},
		{"cp1252 alias", []string{"--encoding", "cp1252"}, exitOK, ""},
		{"resume without a journal starts afresh", []string{"--resume"}, exitOK, "starting from the first row"},
		{"cache-ttl without cache", []string{"--cache-ttl", "1h"}, exitUsage, "--cache-ttl needs --cache"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("ADDRCLEAN_BASE_URL", "")
			var stdout, stderr bytes.Buffer
			args := append([]string{"run", "--log-format", "json", "--no-progress",
				"-o", filepath.Join(dir, "o.csv"), "--review", filepath.Join(dir, "r.csv")}, tt.args...)
			code := runMain(context.Background(), append(args, in), streams{in: strings.NewReader(""), out: &stdout, err: &stderr})
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d: %s", code, tt.wantCode, stderr.String())
			}
			if tt.wantErr != "" && !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("stderr lacks %q: %s", tt.wantErr, stderr.String())
			}
		})
	}
}
