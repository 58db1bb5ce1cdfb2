package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/internal/sqlitefile/filetest"
)

// writeFile writes text to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// closedURL is the URL of a loopback port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "http://" + addr
}

// TestRunServiceUnreachable: a service that cannot be reached before any row
// is verified is fatal (exit 1): the last run's outputs stay as they were,
// and no journal is left, instead of exit 3 with every row Error.
func TestRunServiceUnreachable(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "in.csv", "Address,Country\n1 Main Street,IE\n2 Main Street,IE\n3 Main Street,IE\n")
	out, review := filepath.Join(dir, "out.csv"), filepath.Join(dir, "review.csv")
	for _, p := range []string{out, review} {
		if err := os.WriteFile(p, []byte("last night's good output\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := runCLI(t, dir, "--base-url", closedURL(t), "--retries", "1", "--rate", "0", in)
	wantExit(t, r, exitFatal)
	if !strings.Contains(r.stderr, "could not reach") || !strings.Contains(r.stderr, "outputs were left as they were") {
		t.Errorf("stderr does not say the service was not reached:\n%s", tail(r.stderr, 2000))
	}
	if r.enriched != "last night's good output\n" || r.review != "last night's good output\n" {
		t.Errorf("the outputs were replaced:\n%s\n%s", r.enriched, r.review)
	}
	if stopped, _ := r.summary["stopped"].(string); stopped != "service_unreachable" {
		t.Errorf("summary stopped = %q", stopped)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*.journal"))
	tmps, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	if len(left)+len(tmps) > 0 {
		t.Errorf("left behind: %v %v", left, tmps)
	}
}

// TestRunRefusedLeavesNoJournal: a run refused with a usage error after its
// journal was created removes the empty journal.
func TestRunRefusedLeavesNoJournal(t *testing.T) {
	dir := t.TempDir()
	base, _ := loggedService(t)
	in := writeFile(t, dir, "in.csv", "Address,Country\n1 Main Street,IE\n")
	r := runCLI(t, dir, "--base-url", base, "--method", "PUT", in)
	wantExit(t, r, exitUsage)
	if m, _ := filepath.Glob(filepath.Join(dir, "*.journal")); len(m) > 0 {
		t.Fatalf("a refused run left %v", m)
	}
}

// TestRunXLSXTooWide: an XLSX output wider than a sheet is refused (exit 2)
// before any call is paid.
func TestRunXLSXTooWide(t *testing.T) {
	dir := t.TempDir()
	base, calls := loggedService(t)
	var b strings.Builder
	b.WriteString("Address,Country")
	for i := range 16_384 {
		b.WriteString(",c" + strconv.Itoa(i))
	}
	b.WriteString("\n1 Main Street,IE\n")
	in := writeFile(t, dir, "wide.csv", b.String())
	r := runCLI(t, dir, "--base-url", base, "--rate", "0", "-o", filepath.Join(dir, "wide.xlsx"), in)
	wantExit(t, r, exitUsage)
	if !strings.Contains(r.stderr, "more columns than an XLSX sheet holds") {
		t.Errorf("stderr:\n%s", tail(r.stderr, 2000))
	}
	if n := countAll(calls.take()); n != 0 {
		t.Fatalf("%d calls paid before the refusal", n)
	}
}

// TestRunKilledWithoutJournalLeavesNoTemps kills the real program, with no
// journal, in the middle of a run; the next run removes the temporary
// outputs it left.
func TestRunKilledWithoutJournalLeavesNoTemps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the program in a subprocess")
	}
	dir := t.TempDir()
	base, calls := loggedService(t)
	keyFile := writeFile(t, dir, "key", testKey)
	out, review := filepath.Join(dir, "out.csv"), filepath.Join(dir, "review.csv")
	args := []string{"run", "--log-format", "json", "--no-progress", "--api-key-file", keyFile, "--journal", "off",
		"--base-url", base, "--rate", "0", "--country", "IE", "-o", out, "--review", review, sampleCSV(t)}
	killAtCall(t, calls, 50, nil, args...)
	tmps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	// The enriched output's spool (held-back rows) is a third temporary file.
	if len(tmps) < 2 {
		t.Fatalf("the kill left %v: the test proves nothing", tmps)
	}
	r := runCLI(t, dir, "--journal", "off", "--base-url", base, "--rate", "0", "--country", "IE", sampleCSV(t))
	wantExit(t, r, exitRowErrors)
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(tmps) > 0 {
		t.Fatalf("temporary outputs of the killed run are still there: %v", tmps)
	}
}

// TestRunResumeSkipsDamagedJournalRecords: bytes changed inside records of
// a journal cost only the rows of the damaged records; the run says how many.
func TestRunResumeSkipsDamagedJournalRecords(t *testing.T) {
	t.Parallel() // no environment or package variable set: see docs/testing.md
	dir := t.TempDir()
	base, calls := loggedService(t)
	in := sampleCSV(t)
	common := []string{"--base-url", base, "--rate", "0", "--country", "IE", "--journal", "on", "--keep-journal"}
	first := runCLI(t, dir, append(common, in)...)
	wantExit(t, first, exitRowErrors)
	paid := countAll(calls.take())
	jpath := filepath.Join(dir, "out.csv.journal")
	// Change the answer inside each of three records in the middle of the
	// journal, as a bad disk block would (journal/FORMAT.md: table
	// journal_rows): the JSON stays valid, the checksum fails.
	n := len(strings.Split(first.enriched, "\n")) - 2
	if n < 100 {
		t.Fatalf("journal of %d rows", n)
	}
	filetest.Exec(t, jpath, fmt.Sprintf("UPDATE journal_rows SET answer = answer || ' ' WHERE row IN "+
		"(SELECT row FROM journal_rows WHERE answer IS NOT NULL ORDER BY row LIMIT 3 OFFSET %d)", n/3))
	again := runCLI(t, dir, append(common, "--resume", in)...)
	wantExit(t, again, exitRowErrors)
	if !strings.Contains(again.stderr, "3 damaged records skipped") {
		t.Errorf("stderr does not count the damaged records:\n%s", tail(again.stderr, 2000))
	}
	if n := countAll(calls.take()); n == 0 || n > 3 || paid < 400 {
		t.Errorf("the resumed run paid %d calls (the first %d), want 1 to 3: the damaged rows only", n, paid)
	}
	if again.enriched != first.enriched || again.review != first.review {
		t.Error("the outputs differ from the first run's")
	}
}

// TestRunDamagedWorkbookIsFatal: a workbook whose sheet is cut mid-row used
// to lose the rows after the cut with exit 0; now the run fails (exit 1)
// naming the file, before any call.
func TestRunDamagedWorkbookIsFatal(t *testing.T) {
	dir := t.TempDir()
	src, err := zip.OpenReader("../../sample_data/customers.xlsx")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(dir, "cut.xlsx")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	cut := false
	for _, e := range src.File {
		b, err := readZipEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(e.Name, "xl/worksheets/sheet") && !cut {
			// Cut inside the middle row's XML.
			i := bytes.Index(b[len(b)/2:], []byte("<row"))
			b = b[:len(b)/2+i+10]
			cut = true
		}
		w, err := zw.Create(e.Name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	base, calls := loggedService(t)
	r := runCLI(t, dir, "--base-url", base, "--rate", "0", "--country", "IE", path)
	wantExit(t, r, exitFatal)
	if !strings.Contains(r.stderr, "cut.xlsx") {
		t.Errorf("the error does not name the file:\n%s", tail(r.stderr, 2000))
	}
	if n := countAll(calls.take()); n != 0 {
		t.Errorf("%d calls paid for a damaged file", n)
	}
}

func readZipEntry(e *zip.File) ([]byte, error) {
	rc, err := e.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}
