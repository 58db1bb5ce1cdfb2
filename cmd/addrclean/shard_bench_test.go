package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/internal/pgtest"
	sampledata "github.com/addrclean/addrclean/sample_data"
)

// BenchmarkShards runs one table through 'addrclean serve --rate QUOTA' (a
// separate process: one key, one quota) three ways, every runner a process
// of its own: one runner at --rate QUOTA; three shards at --rate QUOTA/3;
// three shards each asking the whole QUOTA, which the service's 429s cut
// back; three shards pacing together at QUOTA (and 0.9 QUOTA) with
// --rate-shared through a --cache postgres:// database. It reports the wall time, the calls and the 429s of each, summed
// over the runners. ADDRCLEAN_SHARD_BENCH_ROWS (default 1500, distinct
// addresses of the sample reference) and ADDRCLEAN_SHARD_BENCH_QUOTA
// (default 100 requests per second) set the size, ADDRCLEAN_SHARD_BENCH_BURST
// the service's burst (default 1: a strict per-second quota). Run it with
// -benchtime=1x: each round pays for the whole table again.
func BenchmarkShards(b *testing.B) {
	rows, quota, burst := 1500, 100.0, 1
	if v, err := strconv.Atoi(os.Getenv("ADDRCLEAN_SHARD_BENCH_ROWS")); err == nil {
		rows = v
	}
	if v, err := strconv.ParseFloat(os.Getenv("ADDRCLEAN_SHARD_BENCH_QUOTA"), 64); err == nil {
		quota = v
	}
	if v, err := strconv.Atoi(os.Getenv("ADDRCLEAN_SHARD_BENCH_BURST")); err == nil {
		burst = v
	}
	dbURL := pgtest.RequireDB(b)
	loadReferenceTable(b, dbURL, rows)
	base, keyFile := startQuotaServe(b, quota, burst)
	for _, sc := range []struct {
		name   string
		shards int
		rate   float64
		shared bool // --rate-shared: rate is the set's, paced through a --cache postgres://
	}{
		{"one_runner_rate_quota", 1, quota, false},
		{"three_shards_rate_quota_over_3", 3, quota / 3, false},
		{"three_shards_rate_90pc_of_quota_over_3", 3, 0.9 * quota / 3, false},
		{"three_shards_rate_quota_each", 3, quota, false},
		{"three_shards_rate_shared_quota", 3, quota, true},
		{"three_shards_rate_shared_90pc_of_quota", 3, 0.9 * quota, true},
	} {
		b.Run(sc.name, func(b *testing.B) {

			var calls, limited int64
			for b.Loop() {
				calls, limited = 0, 0
				var shared []string
				if sc.shared {
					// A database of its own: the cache would answer a
					// later round, or scenario, without a call.
					shared = []string{"--rate-shared", "--cache", pgtest.RequireDB(b)}
				}
				// A fresh out-table each round, so every round writes all.
				out := fmt.Sprintf("av_%s_%d", sc.name, time.Now().UnixNano())
				done := make(chan map[string]any, sc.shards)
				for i := range sc.shards {
					args := []string{"run", "--log-format", "json", "--no-progress", "--journal", "off", "--base-url", base,
						"--api-key-file", keyFile, "--rate", strconv.FormatFloat(sc.rate, 'f', -1, 64), "--burst", "1",
						"--table", "addresses", "--id-col", "id", "--out-table", out}
					if sc.shards > 1 {
						args = append(args, "--shard", fmt.Sprintf("%d/%d", i, sc.shards))
					}
					args = append(args, shared...)
					go func() { done <- runShardChild(b, append(args, dbURL)) }()
				}
				for range sc.shards {
					s := <-done
					calls += int64(s["calls_made"].(float64))
					limited += int64(s["rate_limited"].(float64))
				}
			}
			b.ReportMetric(float64(calls), "calls")
			b.ReportMetric(float64(limited), "429s")
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "wall_s")
		})
	}
}

// runShardChild runs the real program and returns its summary.
func runShardChild(b *testing.B, args []string) map[string]any {
	sum := filepath.Join(b.TempDir(), "summary.json")
	cmd := exec.Command(os.Args[0], append([]string{args[0], "--summary", sum}, args[1:]...)...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() != exitRowErrors {
		b.Errorf("%v: %s", err, tail(messages(stderr.String()), 2000))
	}
	var s map[string]any
	raw, err := os.ReadFile(sum)
	if err == nil {
		err = json.Unmarshal(raw, &s)
	}
	if err != nil {
		b.Fatalf("summary: %v", err)
	}
	return s
}

// loadReferenceTable creates table addresses holding the first rows
// addresses of the sample reference, each once, keyed by id.
func loadReferenceTable(b *testing.B, dbURL string, rows int) {
	ctx := context.Background()
	ix, err := gazetteer.Load(ctx, sampledata.Reference())
	if err != nil {
		b.Fatal(err)
	}
	var src [][]any
	ix.Records(func(r *gazetteer.Record) bool {
		src = append(src, []any{fmt.Sprintf("A%06d", len(src)+1), strings.TrimSpace(r.BuildingNumber + " " + r.Street),
			r.Locality, r.City, r.Region, r.Postcode, r.Country})
		return len(src) < rows
	})
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE addresses (id text PRIMARY KEY, "Address 1" text, "Address 2" text,
		"Town" text, "County" text, "Postcode" text, "Country" text)`); err != nil {
		b.Fatal(err)
	}
	cols := []string{"id", "Address 1", "Address 2", "Town", "County", "Postcode", "Country"}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"addresses"}, cols, pgx.CopyFromRows(src)); err != nil {
		b.Fatal(err)
	}
}

// startQuotaServe starts 'addrclean serve --rate quota --burst burst' on a free port and
// returns its URL and a file holding its development key.
func startQuotaServe(b *testing.B, quota float64, burst int) (base, keyFile string) {
	cmd := exec.Command(os.Args[0], "serve", "--listen", "127.0.0.1:0", "--log-format", "json",
		"--rate", strconv.FormatFloat(quota, 'f', -1, 64), "--burst", strconv.Itoa(burst))
	cmd.Env = append(os.Environ(), childEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	key, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	keyFile = filepath.Join(b.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(key), 0o600); err != nil {
		b.Fatal(err)
	}
	// The "listening" line gives the port.
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		var ev struct{ Message, URL string }
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Message == "listening" {
			base = ev.URL
			break
		}
	}
	if base == "" {
		b.Fatal("serve did not say where it listens")
	}
	go func() { // drain the rest, or serve blocks on a full pipe
		for sc.Scan() {
		}
	}()
	return base, keyFile
}
