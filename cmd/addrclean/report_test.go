package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/internal/cliflag"
	"github.com/addrclean/addrclean/report"
	"github.com/addrclean/addrclean/table"
)

// TestRunReport: run --report writes the page from the run's own
// statistics, and addrclean report rebuilds the same page from the
// enriched file and the --summary JSON.
func TestRunReport(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	sum := filepath.Join(dir, "summary.json")
	enriched, _ := embeddedRun(t, dir, "--report", page, "--summary", sum)
	got, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		CallsMade  int64 `json:"calls_made"`
		Duplicates struct {
			Groups int64 `json:"groups"`
		} `json:"duplicates"`
	}
	b, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if st.CallsMade == 0 || !bytes.Contains(got, fmt.Appendf(nil, "<b>%d</b><span>calls made</span>", st.CallsMade)) {
		t.Errorf("the page does not show the run's %d calls", st.CallsMade)
	}
	if !bytes.Contains(got, fmt.Appendf(nil, "<b>%d</b><span>places with several rows</span>", st.Duplicates.Groups)) {
		t.Errorf("the page does not show the summary's %d duplicate groups", st.Duplicates.Groups)
	}

	again := filepath.Join(dir, "again.html")
	code, _, stderr := cli("report", "--summary", sum, "-o", again, enriched)
	if code != exitOK {
		t.Fatalf("report exit %d\n%s", code, stderr)
	}
	rebuilt, err := os.ReadFile(again)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, rebuilt) {
		t.Error("addrclean report with the summary differs from run --report")
	}

	// Without the summary the cost is said to be unknown, not zero.
	code, _, stderr = cli("report", "-o", again, enriched)
	if code != exitOK {
		t.Fatalf("report exit %d\n%s", code, stderr)
	}
	if b, _ := os.ReadFile(again); !strings.Contains(string(b), "Not known: pass the run's --summary") {
		t.Error("a report without a summary does not say the cost is unknown")
	}
}

// TestRunOutputsRepeatable: two runs of one input give byte-identical
// enriched files, duplicate columns included (a resumed run writes its
// outputs from row 1 again and must match).
func TestRunOutputsRepeatable(t *testing.T) {
	var outs [][]byte
	for range 2 {
		enriched, _ := embeddedRun(t, t.TempDir())
		b, err := os.ReadFile(enriched)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, b)
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Fatal("two runs of one input wrote different enriched files")
	}
	if !bytes.Contains(outs[0], []byte("av_duplicates,av_first_row,av_changes\n")) {
		t.Fatal("the enriched file has no duplicate columns")
	}
}

func TestReportUsage(t *testing.T) {
	dir := t.TempDir()
	enriched, _ := embeddedRun(t, dir)
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"no output", []string{"report", enriched}, exitUsage},
		{"not html", []string{"report", "-o", filepath.Join(dir, "r.txt"), enriched}, exitUsage},
		{"not an enriched file", []string{"report", "-o", filepath.Join(dir, "r.html"), sampleCSV(t)}, exitUsage},
		{"missing summary", []string{"report", "--summary", filepath.Join(dir, "none.json"), "-o", filepath.Join(dir, "r.html"), enriched}, exitFatal},
		{"run --report to stdout", []string{"run", "--report", filepath.Join(dir, "r.html"), "-o", "-", "--review", filepath.Join(dir, "rv.csv"), sampleCSV(t)}, exitUsage},
		{"run --report not html", []string{"run", "--report", filepath.Join(dir, "r.pdf"), sampleCSV(t)}, exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := cli(tt.args...)
			if code != tt.want {
				t.Fatalf("exit %d, want %d\n%s", code, tt.want, stderr)
			}
		})
	}
}

// TestReportTable: the page built from a run's out-table is the page built
// from the same run's enriched file, numbers, duplicates and map alike;
// only the title differs.
func TestReportTable(t *testing.T) {
	// The subtests share one journal directory (t.Setenv cannot be called in a
	// parallel test); their outputs, and so their journals, differ.
	isolateJournals(t)
	for name, newDB := range applyDBs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dbURL := newDB(t)
			loadSample(t, dbURL, "customers")
			dir := t.TempDir()
			enriched := filepath.Join(dir, "cleaned.csv")
			r := runDB(t, dir, "--country", "IE", "--table", "customers", "--id-col", "Customer ID",
				"--out-table", "av", "-o", enriched, dbURL)
			wantExit(t, r, exitOK, exitRowErrors)
			fromFile, fromTable := filepath.Join(dir, "file.html"), filepath.Join(dir, "table.html")
			// The run's summary: from the --summary file for the file, from
			// the runs table next to the out-table for the table.
			if code, _, stderr := cli("report", "--summary", filepath.Join(dir, "summary.json"), "-o", fromFile, enriched); code != exitOK {
				t.Fatalf("report of the file: exit %d\n%s", code, stderr)
			}
			if code, _, stderr := cli("report", "-o", fromTable, "--out-table", "av", dbURL); code != exitOK {
				t.Fatalf("report of the table: exit %d\n%s", code, stderr)
			}
			u, _ := table.ParseURL(dbURL)
			page := strings.ReplaceAll(readFile(t, fromTable), "table av in "+html.EscapeString(u.Display), enriched)
			if want := readFile(t, fromFile); page != want {
				t.Errorf("the table's page differs from the file's:\n%s", firstDiff(want, page))
			}
			if !strings.Contains(page, "<b>27</b><span>places with several rows</span>") {
				t.Error("the duplicates section lacks its golden number: 27 places with several rows")
			}
			for _, args := range [][]string{
				{"report", "-o", fromTable, dbURL},
				{"report", "-o", fromTable, "--out-table", "av", enriched},
			} {
				if code, _, _ := cli(args...); code != exitUsage {
					t.Errorf("%q: exit %d, want 2", args, code)
				}
			}
			if code, _, stderr := cli("report", "-o", fromTable, "--out-table", "nope", dbURL); code != exitUsage || !strings.Contains(stderr, "nope") {
				t.Errorf("a missing out-table: exit %d, want 2 naming it\n%s", code, stderr)
			}
		})
	}
}

// firstDiff shows where two texts part.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-200)
	return fmt.Sprintf("at byte %d:\n want ...%s\n  got ...%s", i, a[lo:min(len(a), i+200)], b[lo:min(len(b), i+200)])
}

// TestRunReportFromTable: run --report over a table run builds the page
// from the out-table when the run writes no enriched file, and from the
// file when it writes one beside the tables (cmdRun's outPath then names
// both, which writeReport once took for a file's path).
func TestRunReportFromTable(t *testing.T) {
	isolateJournals(t)
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "crm.db")
	loadSample(t, dbURL, "customers")
	dir := t.TempDir()
	enriched := filepath.Join(dir, "cleaned.csv")
	args := []string{"--country", "IE", "--table", "customers", "--id-col", "Customer ID", "--out-table", "av"}
	wantExit(t, runDB(t, dir, append(append(slices.Clone(args), "-o", enriched), dbURL)...), exitOK, exitRowErrors)
	// The pages below are built without the run's statistics: the want
	// page too, so without the summary the run kept next to the table.
	dropTable(t, dbURL, table.RunsName(table.Name{Table: "av"}))
	want := filepath.Join(dir, "want.html")
	if code, _, stderr := cli("report", "-o", want, "--out-table", "av", dbURL); code != exitOK {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	for _, tc := range []struct {
		name  string
		extra []string
		title string
	}{
		{"tables only", nil, "table av in " + dbURL},
		{"a file beside", []string{"-o", enriched}, enriched},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o runOptions
			fs := newRunFlags(&o, io.Discard)
			pos, err := cliflag.Interspersed(fs, append(append(slices.Clone(args), tc.extra...), dbURL))
			if err != nil || len(pos) != 1 {
				t.Fatal(err, pos)
			}
			o.input = pos[0]
			if err := o.setupTables(); err != nil {
				t.Fatal(err)
			}
			o.report = filepath.Join(t.TempDir(), "run.html")
			if err := o.writeRunReport(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			got := strings.ReplaceAll(readFile(t, o.report), html.EscapeString(tc.title), "table av in "+dbURL)
			if w := readFile(t, want); got != w {
				t.Errorf("run --report differs from addrclean report of the out-table:\n%s", firstDiff(w, got))
			}
		})
	}
}

// TestRunReportTablesOnly runs the program over a table with no file
// output and --report: the page comes from the out-table and matches what
// addrclean report builds from the same table and the run's summary.
func TestRunReportTablesOnly(t *testing.T) {
	isolateJournals(t)
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "crm.db")
	loadSample(t, dbURL, "customers")
	dir := t.TempDir()
	page := filepath.Join(dir, "run.html")
	wantExit(t, runDB(t, dir, "--country", "IE", "--table", "customers", "--id-col", "Customer ID",
		"--out-table", "av", "--report", page, dbURL), exitOK, exitRowErrors)
	want := filepath.Join(dir, "want.html")
	if code, _, stderr := cli("report", "-o", want, "--summary", filepath.Join(dir, "summary.json"), "--out-table", "av", dbURL); code != exitOK {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	if got, w := readFile(t, page), readFile(t, want); got != w {
		t.Errorf("run --report over a table differs from addrclean report --out-table:\n%s", firstDiff(w, got))
	}
}

// dropTable drops table n of the database at dbURL.
func dropTable(t *testing.T, dbURL string, n table.Name) {
	t.Helper()
	u, err := table.ParseURL(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	db, err := table.Open(context.Background(), u, table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Exec(context.Background(), "DROP TABLE "+n.SQL()); err != nil {
		t.Fatal(err)
	}
}

// TestReportTableKeepsRunSummary: a run into an out-table, named as users
// write it (schema-qualified, a name that needs quotes), records its
// summary in the _runs table next to it; addrclean report over the table
// then shows the header's run facts, the cost and the errors by kind with
// no --summary file, the numbers of the run's own summary. A table with no
// runs table (an older version's) still gets its page, the cost not known.
func TestReportTableKeepsRunSummary(t *testing.T) {
	// The subtests share one journal directory (t.Setenv cannot be called in a
	// parallel test); their outputs, and so their journals, differ.
	isolateJournals(t)
	for name, newDB := range applyDBs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dbURL := newDB(t)
			loadSample(t, dbURL, "customers")
			schema := "main"
			if name == "PostgreSQL" {
				schema = "public"
			}
			outTable := schema + `."Av Out"`
			dir := t.TempDir()
			r := runDB(t, dir, "--country", "IE", "--table", "customers", "--id-col", "Customer ID", "--out-table", outTable, dbURL)
			wantExit(t, r, exitOK, exitRowErrors)
			sum, err := report.ReadSummary(filepath.Join(dir, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			page := filepath.Join(dir, "table.html")
			if code, _, stderr := cli("report", "-o", page, "--out-table", outTable, dbURL); code != exitOK {
				t.Fatalf("report: exit %d\n%s", code, stderr)
			}
			got := readFile(t, page)
			for _, want := range []string{
				fmt.Sprintf("<b>%d</b><span>calls made</span>", sum.CallsMade),
				fmt.Sprintf("<b>%d</b><span>saved by dedup</span>", sum.CallsSaved),
				"<h3>By kind</h3>",
				"<dd>" + sum.Started.Format("2 Jan 2006 15:04 UTC"),
				"<dd>" + version + "</dd>",
				"<dd>embedded service, bundled sample reference</dd>",
			} {
				if !strings.Contains(got, want) {
					t.Errorf("the table's page lacks %q", want)
				}
			}
			if strings.Contains(got, "Not known: pass the run") {
				t.Error("the table's page says the cost is not known")
			}
			n, _ := table.ParseName(outTable)
			dropTable(t, dbURL, table.RunsName(n))
			if code, _, stderr := cli("report", "-o", page, "--out-table", outTable, dbURL); code != exitOK {
				t.Fatalf("report without a runs table: exit %d\n%s", code, stderr)
			}
			if !strings.Contains(readFile(t, page), "Not known: pass the run") {
				t.Error("without a runs table, the page should say the cost is not known")
			}
		})
	}
}
