package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/gazetteer"
	sampledata "github.com/addrclean/addrclean/sample_data"
)

func TestServeUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		out  string // expected in stdout
		err  string // expected in stderr
	}{
		{"help", []string{"--help"}, exitOK, "Usage: addrclean serve", ""},
		{"unknown flag", []string{"--nope"}, exitUsage, "", "flag provided but not defined"},
		{"argument", []string{"extra"}, exitUsage, "", "serve takes no arguments"},
		{"negative rate", []string{"--rate", "-1"}, exitUsage, "", "--rate"},
		{"bad ttl", []string{"--token-ttl", "10ms"}, exitUsage, "", "--token-ttl"},
		{"bad duration", []string{"--token-ttl", "soon"}, exitUsage, "", "invalid value"},
		{"bad log level", []string{"--log-level", "loud"}, exitUsage, "", "--log-level"},
		{"bad log format", []string{"--log-format", "xml"}, exitUsage, "", "--log-format"},
		{"missing keys file", []string{"--keys", "/nonexistent/keys.json", "--listen", "127.0.0.1:0"}, exitFatal, "", "keys file"},
		{"missing reference", []string{"--reference", "/nonexistent/ref.csv", "--listen", "127.0.0.1:0"}, exitFatal, "", "ref.csv"},
		{"short secret", []string{"--secret-file", writeTemp(t, "secret", "short\n"), "--listen", "127.0.0.1:0"}, exitFatal, "", "at least 16 bytes"},
		{"bad listen", []string{"--listen", "no-port"}, exitFatal, "", "listen"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := runMain(context.Background(), append([]string{"serve"}, tc.args...), streams{in: strings.NewReader(""), out: &out, err: &errb})
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, &out, &errb)
			}
			if !strings.Contains(out.String(), tc.out) || !strings.Contains(errb.String(), tc.err) {
				t.Errorf("stdout %q (want %q)\nstderr %q (want %q)", &out, tc.out, &errb, tc.err)
			}
		})
	}
}

func writeTemp(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// serveProc is 'addrclean serve' running in a goroutine.
type serveProc struct {
	base   string
	start  []map[string]any // the log lines before "listening"
	stdout *bytes.Buffer
	logs   chan map[string]any
	cancel context.CancelFunc
	code   chan int
}

// startServe runs serve with JSON logs and waits for its "listening" log
// line; it fails the test if serve exits first.
func startServe(t *testing.T, args ...string) *serveProc {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	p := &serveProc{stdout: new(bytes.Buffer), logs: make(chan map[string]any, 64), cancel: cancel, code: make(chan int, 1)}
	args = append([]string{"serve", "--listen", "127.0.0.1:0", "--log-format", "json"}, args...)
	go func() {
		p.code <- runMain(ctx, args, streams{in: strings.NewReader(""), out: p.stdout, err: pw})
		pw.Close()
	}()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(p.logs)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"message": "not JSON: " + sc.Text()}
			}
			p.logs <- m
		}
	}()
	t.Cleanup(func() {
		cancel()
		for range p.logs {
		}
		wg.Wait()
	})
	for m := range p.logs {
		if m["message"] == "listening" {
			p.base, _ = m["url"].(string)
			return p
		}
		p.start = append(p.start, m)
		if s, _ := m["message"].(string); strings.HasPrefix(s, "not JSON") {
			t.Errorf("stderr line %s", s)
		}
	}
	t.Fatalf("serve exited with %d before listening", <-p.code)
	return nil
}

// stop cancels serve (as SIGTERM does) and returns its exit code and the
// remaining log lines.
func (p *serveProc) stop() (int, []map[string]any) {
	p.cancel()
	var rest []map[string]any
	for m := range p.logs {
		rest = append(rest, m)
	}
	return <-p.code, rest
}

func serveToken(t *testing.T, base, key string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/3.0/createtoken", nil)
	req.SetBasicAuth(key, "")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tr api.TokenResponse
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil || resp.StatusCode != 200 {
		t.Fatalf("createtoken: %d %v", resp.StatusCode, err)
	}
	return tr.Token
}

func TestServeDevKeyEndToEnd(t *testing.T) {
	p := startServe(t)
	key := strings.TrimSpace(p.stdout.String())
	if !strings.HasPrefix(key, "pub_") || strings.Count(p.stdout.String(), "\n") != 1 {
		t.Fatalf("stdout %q, want the development key once", p.stdout)
	}
	resp, err := http.Get(p.base + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	tok := serveToken(t, p.base, key)
	rec := serveSampleRecord(t)
	form := url.Values{"token": {tok}, "addressLine": append(rec.Lines(), rec.City, rec.Postcode), "country": {rec.Country}}
	resp, err = http.PostForm(p.base+"/3.0/verify", form)
	if err != nil {
		t.Fatal(err)
	}
	var v api.VerifyResponse
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if v.Action != api.ActionAccept || v.Address.ID != rec.ID {
		t.Fatalf("verify: %s %q %+v", v.Action, v.Address.ID, v.Form)
	}
	code, logs := p.stop()
	if code != exitOK {
		t.Fatalf("exit %d after cancel", code)
	}
	var stopped bool
	for _, m := range logs {
		stopped = stopped || m["message"] == "stopped"
		b, _ := json.Marshal(m)
		if strings.Contains(string(b), key) || strings.Contains(string(b), tok) {
			t.Errorf("log line carries a secret: %s", b)
		}
	}
	if !stopped {
		t.Errorf("no 'stopped' log line: %v", logs)
	}
}

// serveSampleRecord picks a plain house of the sample reference.
func serveSampleRecord(t *testing.T) *gazetteer.Record {
	t.Helper()
	ix, err := gazetteer.Load(context.Background(), sampledata.Reference())
	if err != nil {
		t.Fatal(err)
	}
	var found *gazetteer.Record
	ix.Records(func(r *gazetteer.Record) bool {
		if r.Country == "IE" && r.BuildingNumber != "" && r.Street != "" && r.SubBuilding == "" &&
			r.BuildingName == "" && r.Organisation == "" && r.Type == gazetteer.Residential {
			found = r
			return false
		}
		return true
	})
	if found == nil {
		t.Fatal("no plain house in the sample reference")
	}
	return found
}

func TestServeKeysFileAndFlags(t *testing.T) {
	keys := writeTemp(t, "keys.json", `{"integrations":[{"key":"pub_test-key","name":"crm","allowedCountries":["GB"]}]}`)
	secret := writeTemp(t, "secret", "a shared secret of enough length\n")
	p := startServe(t, "--keys", keys, "--rate", "1", "--burst", "1", "--secret-file", secret)
	if p.stdout.Len() != 0 {
		t.Errorf("stdout %q: a keys file needs no printed key", p.stdout)
	}
	tok := serveToken(t, p.base, "pub_test-key")
	// The burst of 1 is spent on the token: verify is rate limited.
	resp, err := http.Get(p.base + "/3.0/verify?" + url.Values{"token": {tok}, "addressLine": {"x"}, "country": {"IE"}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("verify after the burst: %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if code, _ := p.stop(); code != exitOK {
		t.Fatalf("exit %d", code)
	}
}

// TestServePublicURL: without --public-url, serve warns at start and its
// links follow the request's Host; with it, the links start with it and
// there is no warning; one that cannot start a link is refused.
func TestServePublicURL(t *testing.T) {
	rec := serveSampleRecord(t)
	tests := []struct {
		name     string
		args     []string
		warns    bool
		linkHost string // the link for a request with Host spoofed.example
	}{
		{"from the Host header", nil, true, "http://spoofed.example/3.0/verify?"},
		{"--public-url", []string{"--public-url", "https://addr.example.com/"}, false, "https://addr.example.com/3.0/verify?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startServe(t, tt.args...)
			var warned bool
			for _, m := range p.start {
				msg, _ := m["message"].(string)
				warned = warned || (m["level"] == "warn" && strings.Contains(msg, "--public-url") && strings.Contains(msg, "Host"))
			}
			if warned != tt.warns {
				t.Errorf("warning at start %v, want %v: %v", warned, tt.warns, p.start)
			}
			key := strings.TrimSpace(p.stdout.String())
			form := url.Values{"token": {serveToken(t, p.base, key)}, "addressLine": rec.Lines(), "country": {rec.Country}}
			req, _ := http.NewRequest(http.MethodPost, p.base+"/3.0/verify", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Host = "spoofed.example"
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var v api.VerifyResponse
			if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
				t.Fatal(err)
			}
			if len(v.Links) == 0 || !strings.HasPrefix(v.Links[0].Href, tt.linkHost) {
				t.Errorf("links %+v, want one starting %s", v.Links, tt.linkHost)
			}
			if code, _ := p.stop(); code != exitOK {
				t.Fatalf("exit %d", code)
			}
		})
	}
}

func TestServeHelpShowsPublicURL(t *testing.T) {
	code, stdout, _ := cli("serve", "--help")
	if code != exitOK || !strings.Contains(stdout, "addrclean serve --listen 0.0.0.0:8080 --public-url https://") {
		t.Errorf("exit %d; --help has no example with --public-url:\n%s", code, stdout)
	}
	for _, bad := range []string{"addr.example.com", "ftp://addr.example.com", "https://addr.example.com/?x=1", "https://user:secret@addr.example.com"} {
		// An unusable --listen too: refused first, the URL leaves no serve
		// running, whatever the order of the checks.
		code, _, stderr := cli("serve", "--listen", "no-port", "--public-url", bad)
		if code != exitUsage || !strings.Contains(stderr, "--public-url") || strings.Contains(stderr, "secret@") {
			t.Errorf("--public-url %s: exit %d, stderr %q", bad, code, stderr)
		}
	}
}
