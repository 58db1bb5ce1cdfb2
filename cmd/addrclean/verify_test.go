package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/api"
)

func TestVerify(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string
		wantErr  string
	}{
		{"human", []string{"--country", "Ireland", "1 victoria pl", "swords", "co. dublin"}, exitOK,
			[]string{"Accept", "matched:  1 Victoria Place, Swords, Dublin, [K67 2TD5]", "id:       IE"}, ""},
		{"no country", []string{"1 victoria pl"}, exitUsage, nil, "--country"},
		{"no line", []string{"--country", "IE"}, exitUsage, nil, "at least one address LINE"},
		{"key as flag", []string{"--country", "IE", "--api-key", "pub_x", "x"}, exitUsage, nil, "--api-key is refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("ADDRCLEAN_BASE_URL", "")
			var stdout, stderr bytes.Buffer
			code := runMain(context.Background(), append([]string{"verify", "--log-format", "json"}, tt.args...),
				streams{in: strings.NewReader(""), out: &stdout, err: &stderr})
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr %s", code, tt.wantCode, stderr.String())
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout.String())
				}
			}
			if tt.wantErr != "" && !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("stderr lacks %q: %s", tt.wantErr, stderr.String())
			}
		})
	}
}

func TestVerifyJSON(t *testing.T) {
	t.Setenv("ADDRCLEAN_BASE_URL", "")
	var stdout, stderr bytes.Buffer
	code := runMain(context.Background(), []string{"verify", "--json", "--country", "GB", "--postcode", "ZZ9 9ZZ", "nowhere at all"},
		streams{in: strings.NewReader(""), out: &stdout, err: &stderr})
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var r api.VerifyResponse
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("--json output does not decode: %v", err)
	}
	if r.Type != "verify" || r.Action == "" {
		t.Errorf("unexpected answer %+v", r)
	}
	if got := r.Input.Lines; len(got) != 2 || got[1].Value != "ZZ9 9ZZ" {
		t.Errorf("postcode not sent as the last line: %+v", got)
	}
}

// TestVerifyInterruptedLive: a signal while verify waits for its token is
// exit 130 (it was exit 1: "api: waiting for a token: context canceled").
func TestVerifyInterruptedLive(t *testing.T) {
	t.Parallel() // no environment or package variable set: see docs/testing.md
	srv, vc := countingService(t)
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	code := runMain(ctx, []string{"verify", "--base-url", srv.URL, "--api-key-file", keyFile, "--country", "IE", "12 Main Street", "Ennis"},
		streams{in: strings.NewReader(""), out: &stdout, err: &stderr})
	if code != exitInterrupted || !strings.Contains(stderr.String(), "context canceled") {
		t.Fatalf("exit %d, want %d; stderr: %.500s", code, exitInterrupted, stderr.String())
	}
	if n := vc.calls.Load(); n != 0 {
		t.Errorf("%d verify calls after the signal, want 0", n)
	}
}
