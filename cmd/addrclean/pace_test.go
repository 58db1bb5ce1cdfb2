package main

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/addrclean/addrclean/internal/pgtest"
	"github.com/addrclean/addrclean/ratelimit/pgpace"
)

// arrivals records when the service received each verify request.
type arrivals struct {
	next http.Handler
	mu   sync.Mutex
	at   []time.Time
}

func (a *arrivals) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/verify") {
		a.mu.Lock()
		a.at = append(a.at, time.Now())
		a.mu.Unlock()
	}
	a.next.ServeHTTP(w, r)
}

// busiest returns the most requests that arrived within any window.
func (a *arrivals) busiest(window time.Duration) int {
	a.mu.Lock()
	at := slices.Clone(a.at)
	a.mu.Unlock()
	slices.SortFunc(at, func(x, y time.Time) int { return x.Compare(y) })
	most, j := 0, 0
	for i := range at {
		for at[i].Sub(at[j]) >= window {
			j++
		}
		most = max(most, i-j+1)
	}
	return most
}

// TestRunRateShared: two shards at --rate 40 --rate-shared send 40
// requests a second between them (not 80), counted by the service in
// every one-second window, through the row of their service and key in
// the shared cache's database; without a postgres:// --cache or a rate,
// --rate-shared is a usage error.
func TestRunRateShared(t *testing.T) {
	isolateJournals(t)
	dbURL := pgtest.RequireDB(t)
	loadSample(t, dbURL, "customers")
	seen := &arrivals{}
	srv := newTestService(t, func(h http.Handler) http.Handler { seen.next = h; return seen })
	common := []string{"--base-url", srv.URL, "--country", "IE", "--retries", "0", "--workers", "4", "--limit", "200",
		"--table", "customers", "--id-col", "Customer ID", "--out-table", "av", "--review-table", "rv"}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate-shared", "--rate", "40"}, "--cache postgres://"},
		{[]string{"--rate-shared", "--rate", "40", "--cache", t.TempDir() + "/answers.cache"}, "--cache postgres://"},
		{[]string{"--rate-shared", "--rate", "0", "--cache", dbURL}, "give --rate"},
	} {
		r := runDB(t, t.TempDir(), append(append(common, c.args...), dbURL)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%q: exit %d, want 2 saying %q\n%s", c.args, r.code, c.want, tail(r.stderr, 500))
		}
	}
	if n := len(seen.at); n != 0 {
		t.Fatalf("the refused runs made %d calls", n)
	}

	res := make(chan runResult, 2)
	for _, shard := range []string{"0/2", "1/2"} {
		go func() {
			res <- runDB(t, t.TempDir(), append(common, "--shard", shard, "--rate", "40", "--burst", "1",
				"--rate-shared", "--cache", dbURL, dbURL)...)
		}()
	}
	var calls int64
	for range 2 {
		r := <-res
		wantExit(t, r, exitOK, exitRowErrors)
		calls += summaryInt(r, "calls_made")
	}
	if calls < 120 || int(calls) != len(seen.at) {
		t.Fatalf("%d calls (the service saw %d): too few to measure a rate", calls, len(seen.at))
	}
	// Without sharing, each shard sends 40/s: 80 in a second. A wake-up
	// late by a few milliseconds may bring two requests closer than 25 ms;
	// the busiest second holds the rate and a few such.
	if most := seen.busiest(time.Second); most > 46 {
		t.Errorf("%d requests arrived within one second; the set's rate is 40/s", most)
	}
	_, rows := dbRows(t, dbURL, "SELECT count(*) FROM "+pgpace.Table)
	if rows[0][0] != "1" {
		t.Errorf("%s holds %s rows, want 1: one service and key", pgpace.Table, rows[0][0])
	}
}
