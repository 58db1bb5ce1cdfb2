package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// writeLargeBook writes a workbook of Address, Country and rows rows,
// whose sheet's XML passes 16 MiB, the size past which excelize unpacks it
// to a temporary file.
func writeLargeBook(t *testing.T, path string, rows int) {
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
			`<Relationship Id="rId1" Type="` + rel + `/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`},
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
	cell := func(ref, text string) string {
		return `<c r="` + ref + `" t="inlineStr"><is><t>` + text + `</t></is></c>`
	}
	fmt.Fprintf(bw, `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet %s><sheetData><row r="1">%s%s</row>`, ns, cell("A1", "Address"), cell("B1", "Country"))
	for r := 2; r <= rows+1; r++ {
		fmt.Fprintf(bw, `<row r="%d">%s%s</row>`, r, cell(fmt.Sprint("A", r), fmt.Sprintf("%d Main Street, Cork", r)), cell(fmt.Sprint("B", r), "IE"))
	}
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
	if testing.Short() {
		t.Skip("runs the program in a subprocess")
	}
	dir, tmp := t.TempDir(), t.TempDir()
	in := filepath.Join(dir, "big.xlsx")
	writeLargeBook(t, in, 150_000)
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
