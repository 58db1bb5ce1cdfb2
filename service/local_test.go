package service

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/addrclean/addrclean/api"
	"github.com/rs/zerolog"
)

func TestStartLocal(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, key, stop, err := StartLocal(ctx, fixtures(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/3.0/createtoken", nil)
	req.SetBasicAuth(key, "")
	var tr api.TokenResponse
	getJSON(t, req, &tr)
	q := query([]string{"1 Main Street"}, "country", "IE", "token", tr.Token)
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, base+"/3.0/verify?"+q.Encode(), nil)
	var v api.VerifyResponse
	getJSON(t, req, &v)
	if v.Action != api.ActionAccept {
		t.Fatalf("action %q", v.Action)
	}
	stop()
	stop() // idempotent
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Fatal("server still answers after stop")
	}
}

func TestStartLocalStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	base, _, stop, err := StartLocal(ctx, fixtures(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cancel()
	stop() // waits for the shutdown the cancel started
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Fatal("server still answers after cancel")
	}
}

func getJSON(t *testing.T, req *http.Request, v any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d %s", req.URL.Path, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatal(err)
	}
}
