package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// writeBook writes a workbook whose one sheet holds a header row of
// Address, Country and Notes, then the rows rows writes, and whose shared strings
// are sst (none when empty).
func writeBook(t *testing.T, path string, sst []string, rows func(w *bufio.Writer)) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	const ns = `xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"`
	const rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
	parts := [][2]string{
		{"[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>` +
			`<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>` +
			`<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>`},
		{"_rels/.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="` + rel + `/officeDocument" Target="xl/workbook.xml"/></Relationships>`},
		{"xl/workbook.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><workbook ` + ns + ` xmlns:r="` + rel + `"><sheets><sheet name="Customers" sheetId="1" r:id="rId1"/></sheets></workbook>`},
		{"xl/_rels/workbook.xml.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="` + rel + `/worksheet" Target="worksheets/sheet1.xml"/>` +
			`<Relationship Id="rId2" Type="` + rel + `/sharedStrings" Target="sharedStrings.xml"/></Relationships>`},
	}
	if len(sst) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><sst %s count="%d" uniqueCount="%d">`, ns, len(sst), len(sst))
		for _, s := range sst {
			b.WriteString(`<si><t>` + s + `</t></si>`)
		}
		b.WriteString(`</sst>`)
		parts = append(parts, [2]string{"xl/sharedStrings.xml", b.String()})
	}
	for _, p := range parts {
		w, err := zw.Create(p[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(p[1])); err != nil {
			t.Fatal(err)
		}
	}
	w, err := zw.Create("xl/worksheets/sheet1.xml")
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	fmt.Fprintf(bw, `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet %s><sheetData><row r="1">%s%s%s</row>`,
		ns, inlineCell("A1", "Address"), inlineCell("B1", "Country"), inlineCell("C1", "Notes"))
	rows(bw)
	bw.WriteString(`</sheetData></worksheet>`)
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func inlineCell(ref, text string) string {
	return `<c r="` + ref + `" t="inlineStr"><is><t>` + text + `</t></is></c>`
}

// writeLargeBook writes a workbook of rows rows whose sheet's XML passes
// 16 MiB, the size past which excelize unpacks it to a temporary file, with
// a kilobyte of notes in each row: the bytes, not the rows, make the size,
// and a row costs the workbook check and the reader far more than a byte of
// text (150,000 short rows cost this test 13 s of CPU under -race, 16,000
// long ones 5 s).
func writeLargeBook(t *testing.T, path string, rows int) {
	note := strings.Repeat("delivery note ", 1024/len("delivery note "))
	writeBook(t, path, nil, func(w *bufio.Writer) {
		for r := 2; r <= rows+1; r++ {
			fmt.Fprintf(w, `<row r="%d">%s%s%s</row>`, r, inlineCell(fmt.Sprint("A", r), fmt.Sprintf("%d Main Street, Cork", r)), inlineCell(fmt.Sprint("B", r), "IE"),
				inlineCell(fmt.Sprint("C", r), note))
		}
	})
}

// TestRunWorkbookTextBomb: a workbook whose cells all refer to one long
// shared string (10,000 rows of 4 cells of 30,000 characters: 1.2 GB of
// text from about 100 KB) stops the run with exit 1 naming the row and the
// limit, before any call is paid and without an output.
func TestRunWorkbookTextBomb(t *testing.T) {
	t.Parallel() // no environment or package variable set: see docs/testing.md
	dir := t.TempDir()
	in := filepath.Join(dir, "bomb.xlsx")
	writeBook(t, in, []string{strings.Repeat("a", 30_000)}, func(w *bufio.Writer) {
		for r := 2; r <= 10_001; r++ {
			fmt.Fprintf(w, `<row r="%d">`, r)
			for _, c := range "ABCD" {
				fmt.Fprintf(w, `<c r="%c%d" t="s"><v>0</v></c>`, c, r)
			}
			w.WriteString(`</row>`)
		}
	})
	base, calls := loggedService(t)
	r := runCLI(t, dir, "--base-url", base, "--rate", "0", "--country", "IE", in)
	wantExit(t, r, exitFatal)
	if !strings.Contains(r.stderr, "100 times the file's size") || !strings.Contains(r.stderr, "row 561") {
		t.Errorf("stderr does not name the limit and the row:\n%s", tail(r.stderr, 2000))
	}
	if n := countAll(calls.take()); n != 0 {
		t.Errorf("%d calls paid", n)
	}
	if r.enriched != "" || r.review != "" {
		t.Errorf("outputs written: %d and %d bytes", len(r.enriched), len(r.review))
	}
}

// killAtCall runs the program with args and the environment added to env,
// and kills it (SIGKILL) at the n-th verify call the service gets.
func killAtCall(t *testing.T, calls *callLog, n int64, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), childEnv+"=1"), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	calls.killAt.Store(n)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	calls.victim.Store(cmd.Process)
	_ = cmd.Wait()
	calls.victim.Store(nil)
	calls.killAt.Store(0)
	if code := cmd.ProcessState.ExitCode(); code != -1 {
		t.Fatalf("the program was not killed (exit %d): %s", code, tail(stderr.String(), 2000))
	}
}

// TestRunKilledLeavesNoExcelizeTemps kills the real program during a run
// with a workbook input and output: excelize's temporary files (the
// unpacked sheet, 16 MiB and more) must be beside the outputs, where the
// next run removes them, not in $TMPDIR, where nothing did.
func TestRunKilledLeavesNoExcelizeTemps(t *testing.T) {
	t.Parallel() // no environment or package variable set: see docs/testing.md
	if testing.Short() {
		t.Skip("runs the program in a subprocess")
	}
	dir, tmp := t.TempDir(), t.TempDir()
	in := filepath.Join(dir, "big.xlsx")
	writeLargeBook(t, in, 16_000)
	base, calls := loggedService(t)
	keyFile := writeFile(t, dir, "key", testKey)
	out, review := filepath.Join(dir, "out.xlsx"), filepath.Join(dir, "review.xlsx")
	args := []string{"run", "--log-format", "json", "--no-progress", "--api-key-file", keyFile, "--journal", "off",
		"--base-url", base, "--rate", "0", "-o", out, "--review", review, in}
	killAtCall(t, calls, 50, []string{"TMPDIR=" + tmp}, args...)
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Fatalf("the run left %d files in $TMPDIR, e.g. %s", len(left), left[0].Name())
	}
	unpacked, _ := filepath.Glob(filepath.Join(dir, ".out.xlsx.tmp-excelize-*", "excelize-*"))
	if len(unpacked) == 0 {
		t.Fatalf("no unpacked sheet beside the outputs: the test proves nothing")
	}
	r := runCLI(t, dir, "--journal", "off", "--base-url", base, "--rate", "0", "--limit", "5", "-o", out, "--review", review, in)
	wantExit(t, r, exitOK)
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(tmps) > 0 {
		t.Fatalf("temporary files of the killed run are still there: %v", tmps)
	}
}
