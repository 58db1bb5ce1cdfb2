package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/addrclean/addrclean/internal/pgtest"
)

// overlappingInputs writes three CSV files of n rows each: the first half of
// each is the same n/2 addresses, the second half its own, so that each
// overlaps each other by half and the three start on the same addresses at
// the same time. It returns the paths and the distinct requests of the
// union (2n).
func overlappingInputs(t *testing.T, n int) ([]string, int) {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for r := range 3 {
		var b strings.Builder
		b.WriteString("id,street,city,postcode\n")
		for i := range n {
			house := i + 1 // shared
			if r == 1 && i < n/2 {
				// The second runner goes through them the other way, so
				// that it claims some the others wait for.
				house = n/2 - i
			}
			if i >= n/2 {
				house = 1000*(r+1) + i // the runner's own
			}
			fmt.Fprintf(&b, "%d,%d Hanover Way,Cork,T12 X%03d\n", i+1, house, house%1000)
		}
		p := filepath.Join(dir, fmt.Sprintf("in%d.csv", r))
		if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths, n/2 + 3*(n-n/2)
}

// hanoverHouse is the house number of a request for an address of
// overlappingInputs, or 0.
func hanoverHouse(q url.Values) int {
	for _, vs := range q {
		for _, v := range vs {
			if num, rest, _ := strings.Cut(v, " "); strings.HasPrefix(rest, "Hanover Way") {
				if h, err := strconv.Atoi(num); err == nil {
					return h
				}
			}
		}
	}
	return 0
}

// sharedRunner starts the real program on in with the shared cache.
func sharedRunner(t *testing.T, in, cacheURL, base, keyFile string, extra ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	out := strings.TrimSuffix(in, ".csv")
	args := append([]string{"run", "--log-format", "json", "--no-progress", "--api-key-file", keyFile,
		"--base-url", base, "--rate", "0", "--country", "IE", "--workers", "4", "--retries", "0",
		"--cache", cacheURL, "-o", out + ".out.csv", "--review", out + ".review.csv"}, extra...)
	cmd := exec.Command(os.Args[0], append(args, in)...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stderr
}

// TestSharedCacheThreeRunners: three processes over inputs that overlap by
// half, at the same time, with one cache in PostgreSQL: the service is paid
// once per distinct request of the union. With one of them killed (SIGKILL)
// in the middle, the two others finish, taking over its claims when their
// lease runs out, and the union is still paid once, but for the calls the
// killed runner had in flight.
func TestSharedCacheThreeRunners(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the program in subprocesses")
	}
	for _, kill := range []bool{false, true} {
		name := "all finish"
		if kill {
			name = "one killed"
		}
		t.Run(name, func(t *testing.T) {
			const n, workers = 400, 4
			dbURL := pgtest.RequireDB(t)
			base, calls := loggedService(t)
			keyFile := filepath.Join(t.TempDir(), "key")
			if err := os.WriteFile(keyFile, []byte(testKey), 0o600); err != nil {
				t.Fatal(err)
			}
			ins, distinct := overlappingInputs(t, n)
			var (
				cmds    []*exec.Cmd
				stderrs []*bytes.Buffer
			)
			// The runners start at different moments on a busy machine: the
			// others' calls are held until the victim (runner 1, which
			// goes through the shared half from its end) makes its first,
			// so that the three overlap, and the victim is killed at its
			// 11th shared address, holding claims the others reach later.
			started := make(chan struct{})
			var once sync.Once
			hook := func(ctx context.Context, q url.Values) {
				switch h := hanoverHouse(q); {
				case h > n/4 && h <= n/2: // the victim's, long before the others'
					once.Do(func() { close(started) })
					if p := calls.victim.Load(); p != nil && h == n/2-10 {
						_ = p.Kill() // SIGKILL: no deferred function, no flush runs
					}
				default:
					select {
					case <-started:
					case <-ctx.Done():
					}
				}
			}
			calls.hook.Store(&hook)
			defer calls.hook.Store(nil)
			for _, in := range ins {
				// A short lease, so that the killed runner's claims run out
				// within the test.
				c, e := sharedRunner(t, in, dbURL, base, keyFile, "--cache-lease", "2s")
				cmds, stderrs = append(cmds, c), append(stderrs, e)
			}
			const victim = 1
			if kill {
				calls.victim.Store(cmds[victim].Process)
			}
			for i, c := range cmds {
				err := c.Wait()
				code := c.ProcessState.ExitCode()
				if kill && i == victim {
					if code != -1 {
						t.Fatalf("runner %d was not killed (exit %d, %v)", i, code, err)
					}
					continue
				}
				if code != exitOK {
					t.Fatalf("runner %d: exit %d\n%s", i, code, tail(stderrs[i].String(), 3000))
				}
			}
			paid := calls.take()
			total, repeated := 0, 0
			for _, k := range paid {
				total += k
				repeated += k - 1
			}
			waits, takeovers := 0, 0
			for _, e := range stderrs {
				for _, line := range strings.Split(e.String(), "\n") {
					var ev struct {
						Waited    *int `json:"waited_for_other_runners"`
						TakenOver int  `json:"claims_taken_over"`
					}
					if json.Unmarshal([]byte(line), &ev) == nil && ev.Waited != nil {
						waits += *ev.Waited
						takeovers += ev.TakenOver
					}
				}
			}
			t.Logf("%d lookups waited for another runner, %d claims taken over", waits, takeovers)
			t.Logf("%d calls for %d distinct requests of the union, %d repeated", total, distinct, repeated)
			if !kill {
				if total != distinct || repeated != 0 {
					t.Fatalf("%d calls (%d repeated) for %d distinct requests", total, repeated, distinct)
				}
			} else {
				// The victim's own half may be partly unpaid: it is not in the
				// union of the runners that finished. What was paid, was paid
				// once, but for the victim's calls in flight.
				if repeated > workers {
					t.Fatalf("%d calls repeated after killing a runner with %d workers", repeated, workers)
				}
				if len(paid) < distinct-(n-n/2) {
					t.Fatalf("%d requests paid; the two finished runners need %d", len(paid), distinct-(n-n/2))
				}
			}
			if waits == 0 {
				t.Fatal("no runner waited for another's answer: the runners did not overlap in time")
			}
			if kill != (takeovers > 0) {
				t.Fatalf("%d claims taken over (a runner killed: %v)", takeovers, kill)
			}
			// No claim is left behind by the runners that finished, and the
			// cache holds every answer paid.
			conn, err := pgx.Connect(context.Background(), dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			var claims, answers int
			if err := conn.QueryRow(context.Background(), "SELECT (SELECT count(*) FROM cache_claims WHERE expires > clock_timestamp()), (SELECT count(*) FROM cache_answers)").
				Scan(&claims, &answers); err != nil {
				t.Fatal(err)
			}
			left := 0
			if kill {
				left = workers // the victim's, until their lease runs out
			}
			if claims > left || answers < len(paid)-workers {
				t.Fatalf("%d live claims, %d answers for %d requests paid", claims, answers, len(paid))
			}
		})
	}
}

// TestSharedCacheCommands: a run with --cache postgres://... (the password in
// the URL) pays once, a second run pays nothing; cache stats, prune and clear
// work on the database; the password appears in no output, log or error.
func TestSharedCacheCommands(t *testing.T) {
	dbURL := pgtest.RequireDB(t)
	if !strings.Contains(dbURL, pgtest.Password) {
		t.Fatal("the test URL holds no password")
	}
	base, calls := loggedService(t)
	ins, _ := overlappingInputs(t, 40)
	noSecret := func(what, s string) {
		t.Helper()
		if strings.Contains(s, pgtest.Password) {
			t.Fatalf("%s shows the password:\n%s", what, s)
		}
	}
	args := []string{"--base-url", base, "--rate", "0", "--country", "IE", "--cache", dbURL, ins[0]}
	// A dry run before the cache's tables exist: it answers nothing, says
	// so, and names the database without its password.
	dry := runCLI(t, t.TempDir(), append([]string{"--dry-run"}, args...)...)
	wantExit(t, dry, exitOK)
	noSecret("a dry run before the cache exists", dry.stdout+dry.stderr)
	if !strings.Contains(dry.stderr, "does not exist yet") {
		t.Fatalf("the dry run did not say the cache does not exist yet:\n%s", tail(dry.stderr, 2000))
	}
	first := runCLI(t, t.TempDir(), args...)
	wantExit(t, first, exitOK)
	if n := len(calls.take()); n != 40 {
		t.Fatalf("first run: %d requests paid, want 40", n)
	}
	second := runCLI(t, t.TempDir(), args...)
	wantExit(t, second, exitOK)
	if n := len(calls.take()); n != 0 {
		t.Fatalf("second run: %d requests paid, want 0", n)
	}
	for _, r := range []runResult{first, second} {
		sum, _ := json.Marshal(r.summary)
		noSecret("a run", r.stdout+r.stderr+r.enriched+r.review+string(sum))
	}
	if !strings.Contains(second.stderr, "password") { // the process-list warning
		t.Errorf("no warning about the password in the URL:\n%s", tail(second.stderr, 2000))
	}

	code, out, errOut := runCache("stats", "--cache", dbURL)
	noSecret("cache stats", out+errOut)
	if code != exitOK || !strings.Contains(out, "40 entries") || !strings.Contains(out, "postgres://app@") {
		t.Fatalf("cache stats: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCache("stats", "--json", "--cache", dbURL)
	noSecret("cache stats --json", out+errOut)
	var st struct{ Entries int }
	if code != exitOK || json.Unmarshal([]byte(out), &st) != nil || st.Entries != 40 {
		t.Fatalf("cache stats --json: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCache("prune", "--cache-ttl", "1h", "--cache", dbURL)
	noSecret("cache prune", out+errOut)
	if code != exitOK || !strings.Contains(out, "pruned 0 entries") {
		t.Fatalf("cache prune: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCache("clear", "--cache", dbURL)
	noSecret("cache clear", out+errOut)
	if code != exitOK || !strings.Contains(out, "cleared 40 entries") {
		t.Fatalf("cache clear: exit %d\n%s%s", code, out, errOut)
	}

	// A refused password: exit 1, and neither password is shown.
	bad := strings.Replace(dbURL, pgtest.Password, "not-the-Pass-42", 1)
	code, out, errOut = runCache("stats", "--cache", bad)
	if code != exitFatal || strings.Contains(out+errOut, "not-the-Pass-42") {
		t.Fatalf("wrong password: exit %d\n%s%s", code, out, errOut)
	}
	r := runCLI(t, t.TempDir(), "--base-url", base, "--country", "IE", "--cache", bad, ins[0])
	wantExit(t, r, exitFatal)
	if strings.Contains(r.stderr+r.stdout, "not-the-Pass-42") {
		t.Fatalf("a run with a wrong password shows it:\n%s", r.stderr)
	}
	// The housekeeping commands do not create the tables.
	other := pgtest.RequireDB(t)
	if code, out, errOut = runCache("stats", "--cache", other); code != exitFatal || !strings.Contains(errOut, "no cache tables") {
		t.Fatalf("stats on a database without a cache: exit %d\n%s%s", code, out, errOut)
	}
	// --cache-lease is for a shared cache.
	r = runCLI(t, t.TempDir(), "--cache", filepath.Join(t.TempDir(), "c.db"), "--cache-lease", "10s", ins[0])
	wantExit(t, r, exitUsage)
}
