package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/addrclean/addrclean/internal/pgtest"
	"github.com/addrclean/addrclean/table"
	"github.com/addrclean/addrclean/table/tabletest"
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
		recs[i][2] += " (changed)" // Address 1
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

// applyDBs are the databases the table tests of apply run against: a fresh
// PostgreSQL database (skipped without the server, outside CI) and SQLite.
func applyDBs(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"PostgreSQL": func(t *testing.T) string { return pgtest.RequireDB(t) },
		"SQLite":     func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "crm.db") },
	}
}

// TestApplyTableNightly walks the after-the-run loop over tables: a nightly
// run, a person deciding with UPDATE in the review table, a re-run that
// keeps the decisions, apply into a final table; then an address that
// changes: apply refuses the stale decision until the next run clears it.
func TestApplyTableNightly(t *testing.T) {
	// The subtests share one journal directory (t.Setenv cannot be called in a
	// parallel test); their outputs, and so their journals, differ.
	isolateJournals(t)
	for name, newDB := range applyDBs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dbURL := newDB(t)
			n := loadSample(t, dbURL, "customers")
			run := func() {
				t.Helper()
				r := runDB(t, t.TempDir(), "--country", "IE", "--table", "customers", "--id-col", "customer id",
					"--out-table", "av", "--review-table", "rv", dbURL)
				wantExit(t, r, exitOK, exitRowErrors)
			}
			apply := func(extra ...string) (int, string) {
				t.Helper()
				code, _, stderr := cli(append([]string{"apply", dbURL, "--table", "customers", "--id-col", "customer id",
					"--country", "IE", "--out-table", "av", "--review-table", "rv"}, extra...)...)
				return code, stderr
			}
			run()
			_, review := dbRows(t, dbURL, `SELECT "Customer ID", av_action, decision FROM rv ORDER BY 1`)
			if len(review) < 10 {
				t.Fatalf("%d review rows", len(review))
			}

			// Undecided: every review row is unresolved (exit 3).
			code, stderr := apply("--final-table", "final")
			if code != exitRowErrors || !strings.Contains(stderr, "undecided "+strconv.Itoa(len(review))) {
				t.Fatalf("apply before any decision: exit %d, want 3\n%s", code, stderr)
			}

			// A person decides: accept the addresses the service matched,
			// keep the rest, edit one.
			edited := review[1][0]
			dbExec(t, dbURL,
				`UPDATE rv SET decision = CASE WHEN COALESCE(av_address_id, '') <> '' THEN 'accept' ELSE 'keep' END`,
				`UPDATE rv SET decision = 'edit', edit_line1 = '1 Main Street', edit_city = 'Dublin', edit_country = 'IE' WHERE "Customer ID" = '`+edited+`'`)
			_, decided := dbRows(t, dbURL, `SELECT * FROM rv ORDER BY 1`)
			run()
			_, kept := dbRows(t, dbURL, `SELECT * FROM rv ORDER BY 1`)
			if len(kept) != len(decided) {
				t.Fatalf("the re-run left %d review rows of %d", len(kept), len(decided))
			}
			for i := range kept {
				// verified_at (the last column) is the run's; the rest stays.
				if !slices.Equal(kept[i][:len(kept[i])-1], decided[i][:len(decided[i])-1]) {
					t.Fatalf("the re-run changed a decided row:\n%q\n%q", decided[i], kept[i])
				}
			}

			final := filepath.Join(t.TempDir(), "final.csv")
			code, stderr = apply("--final-table", "final", "-o", final)
			if code != exitOK {
				t.Fatalf("apply after every decision: exit %d, want 0\n%s", code, stderr)
			}
			_, rows := dbRows(t, dbURL, `SELECT "Customer ID", final_line1, final_city, final_country, final_source FROM final ORDER BY 1`)
			if len(rows) != n {
				t.Fatalf("final table: %d rows, want %d", len(rows), n)
			}
			sources := map[string]int{}
			for _, r := range rows {
				sources[r[4]]++
				if r[0] == edited && fmt.Sprint(r[1:]) != "[1 Main Street Dublin IE person]" {
					t.Errorf("edited row %s: %q", edited, r)
				}
			}
			if sources["unresolved"] != 0 || sources["person"] != 1 || sources["service"]+sources["input"]+1 != n {
				t.Errorf("final_source counts %v", sources)
			}
			recs, err := csv.NewReader(strings.NewReader(readFile(t, final))).ReadAll()
			if err != nil || len(recs) != n+1 || recs[0][0] != "Customer ID" || recs[0][len(recs[0])-1] != "final_source" {
				t.Fatalf("-o beside --final-table: %v, %d records, header %q", err, len(recs), recs[0])
			}

			// Only some customers (--where): the review rows of the others
			// are counted and left alone, not refused.
			code, stderr = apply("--where", `"Customer ID" IN ('`+edited+`', 'C01001')`, "-o", final)
			if code != exitOK || !strings.Contains(stderr, ": 2 rows written") ||
				!strings.Contains(stderr, strconv.Itoa(len(review)-1)+" review row(s) of ids the input does not have") {
				t.Fatalf("apply --where: exit %d, want 0, 2 rows and %d review rows left alone\n%s", code, len(review)-1, stderr)
			}

			// An accepted customer moves after the run, to the address of
			// another: apply leaves the row unresolved rather than give it
			// the address verified for the old one.
			_, acc := dbRows(t, dbURL, `SELECT "Customer ID" FROM av WHERE av_action = 'Accept' ORDER BY 1`)
			moved := acc[0][0]
			addr := []string{"Address 1", "Address 2", "Town", "County", "Postcode", "Country"}
			_, from := dbRows(t, dbURL, `SELECT "`+strings.Join(addr, `", "`)+`" FROM customers WHERE "Customer ID" = '`+acc[1][0]+`'`)
			var sets []string
			for i, c := range addr {
				sets = append(sets, fmt.Sprintf(`"%s" = '%s'`, c, strings.ReplaceAll(from[0][i], "'", "''")))
			}
			dbExec(t, dbURL, `UPDATE customers SET `+strings.Join(sets, ", ")+` WHERE "Customer ID" = '`+moved+`'`)
			code, stderr = apply("--final-table", "final")
			if code != exitRowErrors || !strings.Contains(stderr, "1 row(s) changed address since the run") ||
				!strings.Contains(stderr, "ids: "+moved+" ") {
				t.Fatalf("apply after an accepted customer moved: exit %d, want 3 naming %s\n%s", code, moved, stderr)
			}
			if _, got := dbRows(t, dbURL, `SELECT final_source FROM final WHERE "Customer ID" = '`+moved+`'`); fmt.Sprint(got) != "[[unresolved]]" {
				t.Errorf("the moved customer's final_source: %q, want unresolved", got)
			}

			// The edited customer moves: the decision is stale. apply refuses
			// it, naming the id and the column, and writes nothing.
			dbExec(t, dbURL, `UPDATE customers SET "Address 1" = '9 Quay Street', "Town" = 'Galway' WHERE "Customer ID" = '`+edited+`'`)
			_, before := dbRows(t, dbURL, `SELECT * FROM final ORDER BY 1`)
			code, stderr = apply("--final-table", "final")
			if code != exitUsage || !strings.Contains(stderr, "id "+edited+": the input address changed since the run (column input_label") {
				t.Fatalf("apply over a stale decision: exit %d, want 2 naming id %s\n%s", code, edited, stderr)
			}
			if _, after := dbRows(t, dbURL, `SELECT * FROM final ORDER BY 1`); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Error("a refused apply changed the final table")
			}
			// The next run clears it (or takes the row out of the review).
			run()
			_, stale := dbRows(t, dbURL, `SELECT decision, edit_line1, input_label FROM rv WHERE "Customer ID" = '`+edited+`'`)
			if len(stale) == 1 && (stale[0][0] != "" || stale[0][1] != "") {
				t.Fatalf("the run kept a decision on an address that changed: %q", stale)
			}
			code, stderr = apply("--final-table", "final")
			want := exitOK
			if len(stale) == 1 {
				want = exitRowErrors
				if !strings.Contains(stderr, "UNRESOLVED   1 row(s), ids: "+edited+" ") {
					t.Errorf("the unresolved row is not named by id:\n%s", stderr)
				}
			}
			if code != want {
				t.Fatalf("apply after the re-run: exit %d, want %d\n%s", code, want, stderr)
			}
			_, got := dbRows(t, dbURL, `SELECT final_source FROM final WHERE "Customer ID" = '`+edited+`'`)
			if fmt.Sprint(got) == "[[person]]" {
				t.Errorf("the stale edit was applied")
			}
		})
	}
}

// TestApplyTableCharID: ids of a char(n) column come padded from the input
// and without the padding from the review table; apply matches them, and
// does not report every reviewed row's id as a cell edited by a person.
func TestApplyTableCharID(t *testing.T) {
	isolateJournals(t)
	dbURL := pgtest.RequireDB(t)
	loadSample(t, dbURL, "customers")
	dbExec(t, dbURL, `ALTER TABLE customers ALTER COLUMN "Customer ID" TYPE char(12)`)
	r := runDB(t, t.TempDir(), "--country", "IE", "--table", "customers", "--id-col", "Customer ID",
		"--out-table", "av", "--review-table", "rv", dbURL)
	wantExit(t, r, exitOK, exitRowErrors)
	dbExec(t, dbURL, `UPDATE rv SET decision = 'keep'`)
	code, _, stderr := cli("apply", dbURL, "--table", "customers", "--id-col", "Customer ID", "--country", "IE",
		"--out-table", "av", "--review-table", "rv", "--final-table", "final")
	if code != exitOK || strings.Contains(stderr, "WARNING") {
		t.Fatalf("apply over char(12) ids: exit %d, want 0 without warnings\n%s", code, stderr)
	}
}

// TestApplyTableRefuses: review rows that do not belong, and decisions
// that cannot be applied, are refused with exit 2, naming the ids (and
// the column), and the final table is not written.
func TestApplyTableRefuses(t *testing.T) {
	// The subtests share one journal directory (t.Setenv cannot be called in a
	// parallel test); their outputs, and so their journals, differ.
	isolateJournals(t)
	for name, newDB := range applyDBs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dbURL := newDB(t)
			loadSample(t, dbURL, "customers")
			r := runDB(t, t.TempDir(), "--country", "IE", "--limit", "40", "--table", "customers", "--id-col", "Customer ID",
				"--out-table", "av", "--review-table", "rv", dbURL)
			wantExit(t, r, exitOK, exitRowErrors)
			_, review := dbRows(t, dbURL, `SELECT "Customer ID" FROM rv ORDER BY 1`)
			_, accepted := dbRows(t, dbURL, `SELECT "Customer ID" FROM av WHERE av_action = 'Accept' ORDER BY 1`)
			if len(review) < 2 || len(accepted) == 0 {
				t.Fatalf("review %q, accepted %q", review, accepted)
			}
			a, b := review[0][0], review[1][0]
			for _, tc := range []struct {
				name  string
				setup []string
				want  []string
			}{
				{"unknown decision", []string{`UPDATE rv SET decision = 'maybe' WHERE "Customer ID" = '` + a + `'`},
					[]string{"id " + a + `: decision "maybe" (column decision)`}},
				{"edit without an address", []string{`UPDATE rv SET decision = 'edit' WHERE "Customer ID" = '` + b + `'`},
					[]string{"id " + b + ": decided edit, but the edit_ columns are empty"}},
				{"an id the out-table lacks", []string{`DELETE FROM av WHERE "Customer ID" = '` + a + `'`},
					[]string{"id " + a + ": the enriched data has no result for it"}},
				{"a row the run accepted", []string{`INSERT INTO rv ("Customer ID", av_action, input_label, decision) VALUES ('` + accepted[0][0] + `', 'Suggest', 'x', 'keep')`},
					[]string{"id " + accepted[0][0] + ": the enriched data has it as Accept"}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					dbExec(t, dbURL, "DELETE FROM rv", "DELETE FROM av")
					r := runDB(t, t.TempDir(), "--country", "IE", "--limit", "40", "--table", "customers", "--id-col", "Customer ID",
						"--out-table", "av", "--review-table", "rv", dbURL)
					wantExit(t, r, exitOK, exitRowErrors)
					dbExec(t, dbURL, tc.setup...)
					code, _, stderr := cli("apply", dbURL, "--table", "customers", "--id-col", "Customer ID", "--country", "IE",
						"--out-table", "av", "--review-table", "rv", "--final-table", "final")
					if code != exitUsage {
						t.Fatalf("exit %d, want 2\n%s", code, stderr)
					}
					for _, w := range tc.want {
						if !strings.Contains(stderr, w) {
							t.Errorf("stderr lacks %q:\n%s", w, stderr)
						}
					}
					if _, err := tabletest.Open(t, dbURL, true).Columns(context.Background(), table.Name{Table: "final"}); !errors.Is(err, table.ErrNoTable) {
						t.Errorf("a refused apply created the final table (%v)", err)
					}
				})
			}
		})
	}
}

// TestApplyTableUsage: the table flags are checked before anything is read.
func TestApplyTableUsage(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "none.db")
	base := []string{"apply", db, "--table", "c", "--id-col", "id", "--out-table", "av", "--review-table", "rv"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{base, "--final-table NAME or -o FINAL"},
		{[]string{"apply", db, "--id-col", "id", "--out-table", "av", "--review-table", "rv", "--final-table", "f"}, "--table NAME or --query"},
		{[]string{"apply", db, "--table", "c", "--out-table", "av", "--review-table", "rv", "--final-table", "f"}, "needs --id-col"},
		{append(slices.Clone(base), "--final-table", "av"), "same table"},
		{append(slices.Clone(base), "--final-table", "f", "--enriched", "x.csv"), "not --enriched and --review"},
		{[]string{"apply", "--enriched", "a.csv", "--review", "b.csv", "-o", "c.csv", "--final-table", "f"}, "--final-table goes with a DBURL"},
		{[]string{"apply", "--enriched", "a.csv", "--review", "-", "-o", "c.csv"}, "--review -: apply reads files; give a path"},
		{[]string{"apply", "--enriched", "-", "--review", "b.csv", "-o", "c.csv"}, "--enriched -: apply reads files; give a path"},
	} {
		code, _, stderr := cli(tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, want 2 with %q\n%s", tc.args, code, tc.want, stderr)
		}
	}
	code, _, stderr := cli(append(slices.Clone(base), "--final-table", "f")...)
	if code != exitFatal && code != exitUsage {
		t.Errorf("a missing SQLite file: exit %d\n%s", code, stderr)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
