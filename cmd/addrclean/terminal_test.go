package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/addrclean/addrclean/service/servicetest"
)

// Whether stderr is a terminal is decided once, in streams: a run that
// claims one draws the progress bar and logs in console format; one that
// does not logs JSON and draws nothing.
func TestRunProgressBarOnATerminal(t *testing.T) {
	barLine := regexp.MustCompile(`\d+ rows \d+/s rate unlimited A\d+ S\d+ C\d+ R\d+ E\d+ +\d+% \|`)
	t.Setenv("ADDRCLEAN_BASE_URL", "")
	in := sampleCSV(t)
	for _, tty := range []bool{true, false} {
		dir := t.TempDir()
		var errb bytes.Buffer
		code := runMain(t.Context(), []string{"run", "--country", "IE", "-o", filepath.Join(dir, "o.csv"),
			"--review", filepath.Join(dir, "r.csv"), in}, streams{in: strings.NewReader(""), out: &bytes.Buffer{}, err: &errb, tty: tty})
		if code != exitRowErrors {
			t.Fatalf("tty %v: exit %d: %s", tty, code, &errb)
		}
		stderr := errb.String()
		// The bar's description, its percent, then the console summary.
		bar := barLine.MatchString(stderr)
		console := strings.Contains(stderr, "Summary of") && !strings.HasPrefix(stderr, "{")
		if bar != tty || console != tty {
			t.Errorf("tty %v: bar drawn %v, console output %v:\n%s", tty, bar, console, tail(stderr, 1500))
		}
	}
}

func TestHelpAndBadFlags(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		code      int
		stdout    []string // substrings
		stderr    []string
		maxStderr int // bytes; 0 = no bound
		onceOut   string
	}{
		{name: "run --help has examples", args: []string{"run", "--help"}, code: exitOK,
			stdout: []string{"Examples:", "addrclean run --dry-run", "--header-row"}, onceOut: "Usage: addrclean run"},
		{name: "unknown flag: did you mean", args: []string{"run", "--countr", "IE", "x.csv"}, code: exitUsage,
			stderr: []string{"-countr", "did you mean --country?", "addrclean run --help"}, maxStderr: 200},
		{name: "a far-off flag gets no guess", args: []string{"run", "--xyzzy", "x.csv"}, code: exitUsage,
			stderr: []string{"-xyzzy", "addrclean run --help"}, maxStderr: 200},
		{name: "no INPUT: the error, not the usage", args: []string{"run"}, code: exitUsage,
			stderr: []string{"exactly one INPUT", "--help"}, maxStderr: 200},
		{name: "serve --help once", args: []string{"serve", "--help"}, code: exitOK, onceOut: "Usage: addrclean serve"},
		{name: "serve unknown flag", args: []string{"serve", "--listn", ":0"}, code: exitUsage,
			stderr: []string{"did you mean --listen?"}, maxStderr: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := runMain(t.Context(), tt.args, streams{in: strings.NewReader(""), out: &out, err: &errb})
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tt.code, &errb)
			}
			for _, w := range tt.stdout {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q", w)
				}
			}
			for _, w := range tt.stderr {
				if !strings.Contains(errb.String(), w) {
					t.Errorf("stderr %q lacks %q", &errb, w)
				}
			}
			if tt.maxStderr > 0 && errb.Len() > tt.maxStderr {
				t.Errorf("stderr is %d bytes, want at most %d:\n%s", errb.Len(), tt.maxStderr, &errb)
			}
			if tt.onceOut != "" {
				if n := strings.Count(out.String()+errb.String(), tt.onceOut); n != 1 {
					t.Errorf("%q printed %d times", tt.onceOut, n)
				}
			}
		})
	}
}

// An interrupted run that kept no journal said nothing true about going
// on; against the embedded service none is kept unless asked for.
func TestInterruptedWithoutJournalSaysSo(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	srv := newTestService(t, func(h http.Handler) http.Handler {
		f := servicetest.Wrap(h)
		f.Plan = func(c servicetest.Call) servicetest.Fault {
			if c.N == 3 {
				cancel() // as Ctrl-C would
			}
			return servicetest.Fault{}
		}
		return f
	})
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte(testKey), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := runMain(ctx, []string{"run", "--log-format", "console", "--no-progress", "--workers", "1", "--journal", "off",
		"--base-url", srv.URL, "--api-key-file", keyFile, "-o", filepath.Join(dir, "o.csv"), "--review", filepath.Join(dir, "r.csv"),
		sampleCSV(t)}, streams{in: strings.NewReader(""), out: &out, err: &errb})
	if code != exitInterrupted {
		t.Fatalf("exit %d, want %d: %s", code, exitInterrupted, &errb)
	}
	if s := errb.String(); strings.Contains(s, "--resume to continue") || !strings.Contains(s, "No journal was kept (--journal off)") {
		t.Errorf("message does not say that no journal was kept:\n%s", tail(s, 3))
	}
	for _, tt := range []struct {
		journal  string
		embedded bool
		want     string
	}{
		{"auto", true, "No journal is kept against the embedded service"},
		{"auto", false, "No journal was kept"},
	} {
		if got := noJournalHint(&runOptions{journal: tt.journal}, tt.embedded); !strings.Contains(got, tt.want) {
			t.Errorf("noJournalHint(%s, embedded %v) = %q, want %q", tt.journal, tt.embedded, got, tt.want)
		}
	}
}

// CSV for Excel users: --bom and --out-encoding reach the outputs, and
// contradictions are usage errors.
func TestRunBOMAndOutEncoding(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("Name,Address 1,Town,Country\nSeán,,Cork,IE\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args   []string
		prefix string
	}{
		{[]string{"--bom"}, "\xEF\xBB\xBFName,"},
		{[]string{"--out-encoding", "windows-1252"}, "Name,"},
	} {
		out := filepath.Join(dir, "out.csv")
		var errb bytes.Buffer
		args := append([]string{"run", "--log-format", "json", "--no-progress", "-o", out, "--review", filepath.Join(dir, "r.csv")}, tt.args...)
		code := runMain(t.Context(), append(args, in), streams{in: strings.NewReader(""), out: &bytes.Buffer{}, err: &errb})
		if code != exitRowErrors {
			t.Fatalf("%v: exit %d: %s", tt.args, code, &errb)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(got, []byte(tt.prefix)) {
			t.Errorf("%v: output starts %q, want %q", tt.args, got[:min(len(got), 12)], tt.prefix)
		}
		if tt.args[0] == "--out-encoding" && !bytes.Contains(got, []byte("Se\xe1n")) {
			t.Errorf("%v: no windows-1252 text in %q", tt.args, got)
		}
	}
	for _, args := range [][]string{
		{"--bom", "--out-encoding", "windows-1252"},
		{"--out-encoding", "ebcdic"},
		{"--out-encoding", "windows-1252", "--report", filepath.Join(dir, "r.html")},
	} {
		var errb bytes.Buffer
		full := append([]string{"run", "--no-progress", "-o", filepath.Join(dir, "o.csv")}, args...)
		if code := runMain(t.Context(), append(full, in), streams{in: strings.NewReader(""), out: &bytes.Buffer{}, err: &errb}); code != exitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, code, exitUsage, &errb)
		}
	}
}

// Inputs as they are: a title row above the header, --header-row, a
// trailing country, and Billing/Shipping columns, through run --dry-run.
func TestRunDryRunExportsAsTheyAre(t *testing.T) {
	dir := t.TempDir()
	book := filepath.Join(dir, "titled.xlsx")
	f := excelize.NewFile()
	for i, row := range [][]any{{"Customer export – generated 01/06/2024"}, nil, {"Full Address"}, {"1 Park Row, Leeds, LS1 0QP, UK"}} {
		if row != nil {
			cell, _ := excelize.CoordinatesToCellName(1, i+1)
			if err := f.SetSheetRow("Sheet1", cell, &row); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := f.SaveAs(book); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	sf := filepath.Join(dir, "sf.csv")
	if err := os.WriteFile(sf, []byte("Billing Street,Billing Country,Shipping Street,Shipping Country\n1 Bill St,IE,2 Ship St,UK\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"--country", "IE", book}, exitOK, []string{"header:      row 3 (detected", `addressLine=["1 Park Row, Leeds, LS1 0QP"] country="GB"`}},
		{[]string{"--country", "IE", "--header-row", "1", book}, exitUsage, []string{"no address columns", "--header-row N"}},
		{[]string{sf}, exitOK, []string{"using the Billing columns", `addressLine=["1 Bill St"]`}},
		{[]string{"--prefix", "Shipping", sf}, exitOK, []string{`addressLine=["2 Ship St"]`, `country="GB"`}},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := runMain(t.Context(), append([]string{"run", "--dry-run", "--log-format", "console"}, tt.args...),
			streams{in: strings.NewReader(""), out: &out, err: &errb})
		if code != tt.code {
			t.Errorf("%v: exit %d, want %d: %s", tt.args, code, tt.code, &errb)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(out.String()+errb.String(), w) {
				t.Errorf("%v: output lacks %q:\n%s%s", tt.args, w, &out, &errb)
			}
		}
	}
}
