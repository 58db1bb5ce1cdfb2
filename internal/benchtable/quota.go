package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/addrclean/addrclean/gazetteer"
)

// quotaRun is the quota row of the table: a run at --rate against a
// separate `addrclean serve` whose key admits fewer requests per second.
type quotaRun struct {
	rows  int
	rps   float64 // the key's requestsPerSecond
	burst int     // the key's burst
	rate  float64 // the run's --rate
}

// serveLog counts the verify answers of `addrclean serve` from its debug log
// (one JSON object per request), noting when each line was read.
type serveLog struct {
	mu      sync.Mutex
	addr    string
	ready   chan struct{}
	limited int64
	calls   []time.Time // every verify answer, 200 or 429
	answers []time.Time // the 200s
	tail    strings.Builder
}

func (s *serveLog) scan(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		now := time.Now()
		var ev struct {
			Message string `json:"message"`
			Addr    string `json:"addr"`
			Path    string `json:"path"`
			Status  int    `json:"status"`
		}
		line := sc.Bytes()
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		s.mu.Lock()
		switch {
		case ev.Message == "listening" && s.addr == "":
			s.addr = ev.Addr
			close(s.ready)
		case ev.Message == "request" && ev.Path == "/3.0/verify":
			s.calls = append(s.calls, now)
			switch ev.Status {
			case 200:
				s.answers = append(s.answers, now)
			case 429:
				s.limited++
			}
		case ev.Message != "request":
			if s.tail.Len() < 4000 {
				s.tail.Write(line)
				s.tail.WriteByte('\n')
			}
		}
		s.mu.Unlock()
	}
}

// measure starts `addrclean serve` with one key limited to q.rps (burst
// q.burst), runs q.rows rows at --rate q.rate with the default workers
// against it, and counts the answers on the service's side: answered per
// second (first to last answer) as a share of the quota, and the share of
// 429s among the verify calls.
func (q quotaRun) measure(ctx context.Context, bin, dir, refPath string, refs []gazetteer.Record) (measurement, error) {
	const key = "pub_benchtable-quota-key"
	keys := filepath.Join(dir, "quota-keys.json")
	body := fmt.Sprintf(`{"integrations":[{"key":%q,"name":"bench quota","requestsPerSecond":%g,"burst":%d}]}`, key, q.rps, q.burst)
	if err := os.WriteFile(keys, []byte(body), 0o600); err != nil {
		return measurement{}, err
	}
	keyFile := filepath.Join(dir, "quota-key")
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
		return measurement{}, err
	}
	in := filepath.Join(dir, "quota.csv")
	distinct, err := writeInput(in, refs, q.rows)
	if err != nil {
		return measurement{}, err
	}

	sctx, stop := context.WithCancel(ctx)
	defer stop()
	srv := exec.CommandContext(sctx, bin, "serve", "--listen", "127.0.0.1:0", "--keys", keys,
		"--reference", refPath, "--log-format", "json", "--log-level", "debug")
	srv.Cancel = func() error { return srv.Process.Signal(os.Interrupt) }
	srv.WaitDelay = 10 * time.Second
	stderr, err := srv.StderrPipe()
	if err != nil {
		return measurement{}, err
	}
	srv.Stdout = io.Discard
	log := &serveLog{ready: make(chan struct{})}
	if err := srv.Start(); err != nil {
		return measurement{}, fmt.Errorf("addrclean serve: %w", err)
	}
	scanned := make(chan struct{})
	go func() {
		log.scan(stderr)
		close(scanned)
	}()
	exited := make(chan error, 1)
	go func() {
		<-scanned // Wait closes the pipe: read it all first
		exited <- srv.Wait()
	}()
	select {
	case <-log.ready:
	case err := <-exited:
		return measurement{}, fmt.Errorf("addrclean serve exited before listening: %v\n%s", err, log.tail.String())
	case <-time.After(time.Minute):
		return measurement{}, errors.New("addrclean serve did not listen within a minute")
	}

	name := fmt.Sprintf("serve, quota %g/s burst %d, --rate %g, 8 workers", q.rps, q.burst, q.rate)
	m, err := measure(ctx, bin, name, q.rows, "run", "--no-progress", "--log-format", "json", "--log-level", "warn",
		"--base-url", "http://"+log.addr, "--api-key-file", keyFile, "--rate", fmt.Sprint(q.rate),
		"-o", filepath.Join(dir, "quota.out.csv"), "--review", filepath.Join(dir, "quota.review.csv"), in)
	stop()   // an interrupt: serve logs its last requests and stops
	<-exited // and Wait reports the interrupt, not a failure
	if err != nil {
		return measurement{}, err
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	m.distinct, m.answered, m.limited = distinct, int64(len(log.answers)), log.limited
	m.utilisation, m.peak = utilisation(log.answers, q.rps), busiestSecond(log.calls)
	return m, nil
}
