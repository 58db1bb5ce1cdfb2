package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/pipeline"
	"github.com/addrclean/addrclean/runs"
	"github.com/addrclean/addrclean/runstats"
	"github.com/addrclean/addrclean/service"
	"github.com/addrclean/addrclean/service/servicetest"
	"github.com/addrclean/addrclean/writers"
	"github.com/xuri/excelize/v2"
)

const testKey = "pub_0d5e2c1f-test-key-never-printed"

func sampleIx(t *testing.T) *gazetteer.Index { return servicetest.SampleIndex(t) }

// tokenUses has tokens expire after a number of uses, as a lifetime of a
// few seconds would under load, but never before their first use (that
// would rightly be fatal), and without a clock to move.
type tokenUses struct {
	mu   sync.Mutex
	max  int
	uses map[string]int
}

func (u *tokenUses) plan(c servicetest.Call) servicetest.Fault {
	u.mu.Lock()
	tok := c.Form.Get("token")
	u.uses[tok]++
	expired := u.uses[tok] > u.max
	u.mu.Unlock()
	if expired {
		return servicetest.Fault{Status: http.StatusUnauthorized, Message: "The token has expired."}
	}
	return faultPlan(c)
}

// faultPlan breaks some verify calls in the ways a real network and service
// break: 5xx, dropped connections, truncated bodies, bursts of 429, slow
// answers. Faults are chosen by the call's sequence number, so a run is
// reproducible; every fault is transient, so a faulty run must produce
// exactly the outputs of a clean one.
func faultPlan(c servicetest.Call) servicetest.Fault {
	switch n := c.N; {
	case n%17 == 3:
		return servicetest.Fault{Status: http.StatusServiceUnavailable, Message: "injected"}
	case n%37 == 6:
		return servicetest.Fault{Status: http.StatusInternalServerError}
	case n%41 == 5:
		return servicetest.Fault{Drop: true} // connection dropped before an answer
	case n%43 == 7:
		return servicetest.Fault{Truncate: true}
	case n%150 >= 10 && n%150 < 13:
		// A burst of 429s; each pauses every worker.
		return servicetest.Fault{Status: http.StatusTooManyRequests, RetryAfter: "0"}
	case n%31 == 1:
		return servicetest.Fault{Delay: 20 * time.Millisecond}
	}
	return servicetest.Fault{}
}

// newTestService starts the real service handler for testKey, wrapped by
// wrap when it is not nil.
func newTestService(t *testing.T, wrap func(http.Handler) http.Handler) *httptest.Server {
	t.Helper()
	in := service.NewIntegration(testKey)
	in.Location = true
	svc, err := service.New(sampleIx(t), []service.Integration{in})
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = svc
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

type runResult struct {
	code             int
	stdout, stderr   string
	enriched, review string
	summary          map[string]any
}

// runCLI runs 'addrclean run' in-process with a key file for testKey.
func runCLI(t *testing.T, dir string, args ...string) runResult {
	t.Helper()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := filepath.Join(dir, "summary.json")
	res := runCLIQuiet(dir, append([]string{"--summary", sum}, args...)...)
	if b, err := os.ReadFile(sum); err == nil {
		_ = json.Unmarshal(b, &res.summary)
	}
	return res
}

func sampleCSV(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../sample_data/customers.csv")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunFaultyServiceMatchesCleanRun(t *testing.T) {
	t.Parallel() // no environment or package variable set: see docs/testing.md
	in := sampleCSV(t)
	clean := newTestService(t, nil)
	want := runCLI(t, t.TempDir(), "--base-url", clean.URL, "--rate", "0", "--country", "IE", "--limit", "300", in)
	if want.code != exitOK && want.code != exitRowErrors {
		t.Fatalf("clean run exit %d\n%s", want.code, want.stderr)
	}

	// A token expires after 100 uses: several times in the run.
	uses := &tokenUses{max: 100, uses: map[string]int{}}
	var f *servicetest.Faults
	faulty := newTestService(t, func(h http.Handler) http.Handler {
		f = servicetest.Wrap(h)
		f.Plan = uses.plan
		return f
	})
	got := runCLI(t, t.TempDir(), "--base-url", faulty.URL, "--rate", "0", "--country", "IE", "--retries", "8", "--limit", "300", in)
	if got.code != want.code {
		t.Fatalf("faulty run exit %d, clean %d\n%s", got.code, want.code, tail(got.stderr, 3000))
	}
	if got.enriched != want.enriched {
		t.Errorf("enriched output of the faulty run differs from the clean run")
	}
	if got.review != want.review {
		t.Errorf("review output of the faulty run differs from the clean run")
	}
	checkEveryRowOnceInOrder(t, in, got.enriched, 300)
	for _, k := range []string{"retries", "rate_limited", "token_refreshes"} {
		if v, _ := got.summary[k].(float64); v == 0 {
			t.Errorf("summary %s = 0, want > 0 (faults injected: %d)", k, f.Injected())
		}
	}
	secrets := append([]string{testKey}, f.Tokens()...)
	for _, s := range secrets {
		if s == "" {
			continue
		}
		for name, text := range map[string]string{"stderr": got.stderr, "stdout": got.stdout, "enriched": got.enriched, "review": got.review} {
			if strings.Contains(text, s) {
				t.Errorf("%s contains the key or a token", name)
			}
		}
	}
	// Every stderr line is one JSON object with --log-format json.
	for _, line := range strings.Split(strings.TrimSpace(got.stderr), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("stderr line is not JSON: %q", line)
			break
		}
	}
}

// checkEveryRowOnceInOrder checks that the enriched output has the input's
// rows, each once, in order, with the input cells unchanged.
func checkEveryRowOnceInOrder(t *testing.T, inPath, enriched string, limit int) {
	t.Helper()
	inF, err := os.Open(inPath)
	if err != nil {
		t.Fatal(err)
	}
	defer inF.Close()
	inRecs, err := csv.NewReader(inF).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if limit > 0 && len(inRecs) > limit+1 {
		inRecs = inRecs[:limit+1]
	}
	outRecs, err := csv.NewReader(strings.NewReader(enriched)).ReadAll()
	if err != nil {
		t.Fatalf("enriched output is not CSV: %v", err)
	}
	if len(outRecs) != len(inRecs) {
		t.Fatalf("enriched has %d records, input %d", len(outRecs), len(inRecs))
	}
	for i := range inRecs {
		for j, c := range inRecs[i] {
			got := outRecs[i][j]
			if got != c && got != "'"+c {
				t.Fatalf("record %d column %d: got %q, input %q", i, j, got, c)
			}
		}
	}
}

func TestRunBadKeyStopsAtOnce(t *testing.T) {
	srv, calls := countRequests(t)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "badkey")
	if err := os.WriteFile(keyFile, []byte("pub_wrong-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := runMain(context.Background(), []string{"run", "--log-format", "json", "--no-progress", "--base-url", srv.URL,
		"--api-key-file", keyFile, "--rate", "0", "--country", "IE", "-o", filepath.Join(dir, "o.csv"), "--review", filepath.Join(dir, "r.csv"),
		"--summary", filepath.Join(dir, "s.json"), sampleCSV(t)},
		streams{in: strings.NewReader(""), out: &stdout, err: &stderr})
	if code != exitFatal {
		t.Fatalf("exit %d, want %d\n%s", code, exitFatal, stderr.String())
	}
	if !strings.Contains(stderr.String(), "API key") {
		t.Errorf("message does not say what to fix: %s", tail(stderr.String(), 500))
	}
	if strings.Contains(stderr.String(), "pub_wrong-key") {
		t.Error("the key appears in stderr")
	}
	if n := calls.Requests(); n > 20 {
		t.Errorf("%d requests after a refused key; the run should stop at once", n)
	}
	for _, f := range []string{"o.csv", "r.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s left behind by a failed run", f)
		}
	}
	var sum map[string]any
	if b, err := os.ReadFile(filepath.Join(dir, "s.json")); err != nil {
		t.Errorf("no --summary after a fatal stop: %v", err)
	} else if err := json.Unmarshal(b, &sum); err != nil || sum["enriched"] != nil {
		t.Errorf("summary after a fatal stop: %s (%v)", b, err)
	}
}

func TestRunUsageErrors(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("Address 1,Town,Country\n1 Main St,Cork,IE\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	xls := filepath.Join(dir, "old.xls")
	if err := os.WriteFile(xls, []byte("not read"), 0o600); err != nil {
		t.Fatal(err)
	}
	book := filepath.Join(dir, "book.xlsx")
	f := excelize.NewFile()
	if err := f.SetSheetRow("Sheet1", "A1", &[]any{"Address", "Country"}); err != nil {
		t.Fatal(err)
	}
	if err := f.SaveAs(book); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no input", []string{"run"}, "exactly one INPUT"},
		{"two inputs", []string{"run", in, in}, "exactly one INPUT"},
		{"key on the command line", []string{"run", "--api-key", "pub_x", "--base-url", "https://example.com", in}, "--api-key is refused"},
		{"live without key", []string{"run", "--base-url", "https://example.com", in}, "needs an API key"},
		{"bad base url", []string{"run", "--base-url", "ftp://x", "--api-key-file", in, in}, "--base-url"},
		{"overwrite input", []string{"run", "-o", in, in}, "would overwrite INPUT"},
		{"unknown output format", []string{"run", "-o", filepath.Join(dir, "x.pdf"), in}, "--out"},
		{"bad workers", []string{"run", "--workers", "0", in}, "--workers"},
		{"missing column", []string{"run", "--city-col", "Nope", in}, "Nope"},
		{"stdin without outputs", []string{"run", "-"}, "pass -o"},
		{"xls input: the input is named, not the output", []string{"run", xls}, ".xls (Excel 97-2003) cannot be read; save it as .xlsx or CSV"},
		{"missing input", []string{"run", filepath.Join(dir, "nope.csv")}, "nope.csv: no such file"},
		{"unknown sheet", []string{"run", "--sheet", "Nope", book}, `no sheet named`},
		{"missing output directory", []string{"run", "-o", filepath.Join(dir, "nodir", "out.csv"), in}, "the directory " + filepath.Join(dir, "nodir") + " does not exist"},
		{"missing review directory", []string{"run", "--review", filepath.Join(dir, "nodir", "r.csv"), in}, "the directory " + filepath.Join(dir, "nodir") + " does not exist"},
		{"negative header row", []string{"run", "--header-row", "-1", in}, "--header-row -1"},
		{"summary to stdout", []string{"run", "--summary", "-", in}, "--summary cannot be stdout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("ADDRCLEAN_API_KEY", "")
			t.Setenv("ADDRCLEAN_BASE_URL", "")
			var stdout, stderr bytes.Buffer
			code := runMain(context.Background(), tt.args, streams{in: strings.NewReader(""), out: &stdout, err: &stderr})
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr: %s", code, exitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q does not mention %q", stderr.String(), tt.want)
			}
		})
	}
}

func TestRunEmbeddedStdinToStdout(t *testing.T) {
	dir := t.TempDir()
	in := "Address 1,Town,Postcode,Country\n=cmd|' /C calc'!A0,Cork,,IE\n,,,\n"
	var stdout, stderr bytes.Buffer
	code := runMain(context.Background(), []string{"run", "--log-format", "json", "--no-progress", "-o", "-", "--review", filepath.Join(dir, "r.csv"), "-"},
		streams{in: strings.NewReader(in), out: &stdout, err: &stderr})
	if code != exitRowErrors {
		t.Fatalf("exit %d, want %d (the empty row is Error)\n%s", code, exitRowErrors, stderr.String())
	}
	recs, err := csv.NewReader(&stdout).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("stdout has %d records, want header + 2", len(recs))
	}
	if got := recs[1][0]; got != "'=cmd|' /C calc'!A0" {
		t.Errorf("formula cell written as %q, want it neutralised", got)
	}
	if !regexp.MustCompile(`"message":"no --base-url`).MatchString(stderr.String()) {
		t.Errorf("the embedded service is not announced in the log")
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// How a run ended becomes its exit code and message; the messages are
// those users script against and read in cron mails.
func TestRunExitError(t *testing.T) {
	unavailable := fmt.Errorf("20 calls failed: %w", pipeline.ErrServiceUnavailable)
	tooMany := fmt.Errorf("%w: 3 of 10", pipeline.ErrTooManyErrors)
	unreachable := fmt.Errorf("dial: %w", pipeline.ErrServiceUnreachable)
	boom := errors.New("boom")
	st := runstats.Stats{RowsWritten: 7}
	withErrors := runstats.Stats{Actions: map[string]int64{writers.ActionError: 1}}
	tests := []struct {
		name    string
		o       runOptions
		end     runs.Outcome
		st      runstats.Stats
		runErr  error
		code    int
		message string
	}{
		{"finished", runOptions{}, runs.Outcome{End: runs.Finished}, st, nil, exitOK, ""},
		{"finished with Error rows", runOptions{}, runs.Outcome{End: runs.Finished}, withErrors, nil, exitRowErrors, ""},
		{"outputs not finished", runOptions{}, runs.Outcome{End: runs.OutputsFailed, Resumable: true, Err: boom}, st, nil, exitFatal,
			"finishing outputs: boom; the finished rows are journalled: fix the cause and run again with --resume"},
		{"unreachable live service", runOptions{baseURL: "HTTPS://Api.Example.com/"}, runs.Outcome{End: runs.Unreachable}, st, unreachable, exitFatal,
			"could not reach https://api.example.com: " + unreachable.Error() + "; the outputs were left as they were"},
		{"unreachable embedded service", runOptions{}, runs.Outcome{End: runs.Unreachable}, st, unreachable, exitFatal,
			"could not reach the embedded service: " + unreachable.Error() + "; the outputs were left as they were"},
		{"fatal", runOptions{}, runs.Outcome{End: runs.Failed, Resumable: true}, st, boom, exitFatal,
			"boom; the finished rows are journalled: fix the cause and run again with --resume"},
		{"interrupted, resumable", runOptions{}, runs.Outcome{End: runs.Interrupted, Resumable: true}, st, context.Canceled, exitInterrupted,
			"interrupted after 7 rows; the outputs hold rows 1 to 7; run the same command with --resume to continue"},
		{"interrupted, no journal", runOptions{journal: "off"}, runs.Outcome{End: runs.Interrupted}, st, context.Canceled, exitInterrupted,
			"interrupted after 7 rows; the outputs hold rows 1 to 7. No journal was kept (--journal off): run the command again to start from the first row"},
		{"unavailable, resumable", runOptions{}, runs.Outcome{End: runs.Unavailable, Resumable: true}, st, unavailable, exitFatal,
			"service unavailable: resume with --resume once it is back (" + unavailable.Error() + "); the outputs hold the first 7 rows"},
		{"unavailable", runOptions{}, runs.Outcome{End: runs.Unavailable}, st, unavailable, exitFatal,
			"service unavailable: run again once it is back (" + unavailable.Error() + "); the outputs hold the first 7 rows"},
		{"too many errors, resumable", runOptions{maxErrors: "2"}, runs.Outcome{End: runs.TooManyErrors, Resumable: true}, st, tooMany, exitFatal,
			tooMany.Error() + " (--max-errors 2); the review file r.csv lists them. To go on, raise --max-errors and run again with --resume: " +
				"the rows done are journalled, and rows that failed after retries are tried again; after fixing the input instead, run it with --restart"},
		{"too many errors", runOptions{maxErrors: "2"}, runs.Outcome{End: runs.TooManyErrors}, st, tooMany, exitFatal,
			tooMany.Error() + " (--max-errors 2); the review file r.csv lists them"},
	}
	for _, tt := range tests {
		err := tt.o.exitError(tt.end, tt.st, tt.runErr, "r.csv", false)
		if code := exitCode(err); code != tt.code {
			t.Errorf("%s: exit %d, want %d", tt.name, code, tt.code)
		}
		if got := ""; err != nil && !isSilent(err) {
			if got = err.Error(); got != tt.message {
				t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.message)
			}
		} else if tt.message != "" {
			t.Errorf("%s: no message, want %q", tt.name, tt.message)
		}
	}
}
