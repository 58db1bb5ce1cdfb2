package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// cli runs any subcommand in-process.
func cli(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = runMain(context.Background(), args, streams{in: strings.NewReader(""), out: &o, err: &e})
	return code, o.String(), e.String()
}

// embeddedRun runs the sample against the embedded service, writing the
// review as XLSX, and returns the paths.
func embeddedRun(t *testing.T, dir string, extra ...string) (enriched, review string) {
	t.Helper()
	enriched, review = filepath.Join(dir, "cleaned.csv"), filepath.Join(dir, "review.xlsx")
	args := append([]string{"run", "--log-format", "json", "--no-progress", "--limit", "60", "-o", enriched, "--review", review}, extra...)
	code, _, stderr := cli(append(args, sampleCSV(t))...)
	if code != exitOK && code != exitRowErrors {
		t.Fatalf("run exit %d\n%s", code, tail(stderr, 2000))
	}
	return enriched, review
}

// decideAll fills the decision column of every review row with decide(row,
// action), as a person would in a spreadsheet, and returns the rows.
func decideAll(t *testing.T, review string, decide func(row int, action string) string) []int {
	t.Helper()
	f, err := excelize.OpenFile(review)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows("Review")
	if err != nil {
		t.Fatal(err)
	}
	dcol := slices.Index(rows[0], "decision") + 1
	acol := slices.Index(rows[0], "av_action")
	var nums []int
	for i, r := range rows[1:] {
		n, _ := strconv.Atoi(r[0])
		nums = append(nums, n)
		cell, _ := excelize.CoordinatesToCellName(dcol, i+2)
		if err := f.SetCellStr("Review", cell, decide(n, r[acol])); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	return nums
}

func TestApplyCommand(t *testing.T) {
	dir := t.TempDir()
	enriched, review := embeddedRun(t, dir)
	final := filepath.Join(dir, "final.csv")

	// First pass: the person decided on the Suggest rows only.
	nums := decideAll(t, review, func(_ int, action string) string {
		if action == "Suggest" {
			return "accept"
		}
		return ""
	})
	if len(nums) == 0 {
		t.Fatal("the sample run has no review rows")
	}
	code, _, stderr := cli("apply", "--enriched", enriched, "--review", review, "-o", final)
	if code != exitRowErrors || !strings.Contains(stderr, "UNRESOLVED") {
		t.Fatalf("apply with undecided rows: exit %d, want %d\n%s", code, exitRowErrors, stderr)
	}

	// Second pass: every row decided; Error rows kept as they are.
	decideAll(t, review, func(_ int, action string) string {
		if action == "Suggest" {
			return "accept"
		}
		return "keep"
	})
	code, _, stderr = cli("apply", "--enriched", enriched, "--review", review, "-o", final)
	if code != exitOK {
		t.Fatalf("apply exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "decisions    accept") || !strings.Contains(stderr, "final_source service") {
		t.Errorf("stderr does not report the decisions by kind:\n%s", stderr)
	}
	b, err := os.ReadFile(final)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 61 || recs[0][len(recs[0])-1] != "final_source" {
		t.Fatalf("final file: %d records, header %q", len(recs), recs[0])
	}
	// The input columns are the input's, unchanged.
	in, err := os.ReadFile(sampleCSV(t))
	if err != nil {
		t.Fatal(err)
	}
	inRecs, err := csv.NewReader(bytes.NewReader(in)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if !slices.Equal(recs[i][:len(inRecs[0])], inRecs[i]) {
			t.Fatalf("record %d: input cells %q, want %q", i, recs[i][:len(inRecs[0])], inRecs[i])
		}
	}
}

func TestApplyCommandRefusesForeignReview(t *testing.T) {
	dir := t.TempDir()
	enriched, _ := embeddedRun(t, dir)
	// A review of another run: the first 60 rows of another input.
	other := filepath.Join(dir, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.ReadFile(sampleCSV(t))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(in)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []int
	for i := 1; i < len(recs) && len(rows) < 3; i++ {
		recs[i][1] += " (changed)"
		rows = append(rows, i)
	}
	var buf bytes.Buffer
	_ = csv.NewWriter(&buf).WriteAll(recs)
	otherIn := filepath.Join(other, "customers.csv")
	if err := os.WriteFile(otherIn, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	review := filepath.Join(other, "review.xlsx")
	code, _, stderr := cli("run", "--log-format", "json", "--no-progress", "--limit", "60", "-o", filepath.Join(other, "c.csv"), "--review", review, otherIn)
	if code != exitOK && code != exitRowErrors {
		t.Fatalf("run exit %d\n%s", code, tail(stderr, 2000))
	}
	final := filepath.Join(dir, "final.csv")
	code, _, stderr = cli("apply", "--enriched", enriched, "--review", review, "-o", final)
	if code != exitUsage {
		t.Fatalf("apply of a foreign review: exit %d, want %d\n%s", code, exitUsage, stderr)
	}
	if !strings.Contains(stderr, "does not fit the enriched file") || !strings.Contains(stderr, "row ") {
		t.Errorf("the refusal does not name rows:\n%s", stderr)
	}
	if _, err := os.Stat(final); err == nil {
		t.Error("a final file was written")
	}
}

func TestApplyCommandUsage(t *testing.T) {
	dir := t.TempDir()
	enriched, review := embeddedRun(t, dir)
	tests := []struct {
		name string
		args []string
	}{
		{"no flags", nil},
		{"no review", []string{"--enriched", enriched, "-o", filepath.Join(dir, "f.csv")}},
		{"overwrite the enriched file", []string{"--enriched", enriched, "--review", review, "-o", enriched}},
		{"bad output extension", []string{"--enriched", enriched, "--review", review, "-o", filepath.Join(dir, "f.doc")}},
		{"review is not a review", []string{"--enriched", enriched, "--review", enriched, "-o", filepath.Join(dir, "f.csv")}},
		{"enriched is not enriched", []string{"--enriched", sampleCSV(t), "--review", review, "-o", filepath.Join(dir, "f.csv")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := cli(append([]string{"apply"}, tt.args...)...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d\n%s", code, exitUsage, stderr)
			}
		})
	}
}
