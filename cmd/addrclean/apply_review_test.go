package main

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// nightlyRun loads the sample into a new database of newDB and runs over
// it into the tables av and rv, keyed by "Customer ID"; it returns the
// database's URL. The caller isolates the journals (isolateJournals).
func nightlyRun(t *testing.T, newDB func(*testing.T) string, extra ...string) string {
	t.Helper()
	dbURL := newDB(t)
	loadSample(t, dbURL, "customers")
	args := append([]string{"--country", "IE", "--table", "customers", "--id-col", "Customer ID",
		"--out-table", "av", "--review-table", "rv"}, extra...)
	wantExit(t, runDB(t, t.TempDir(), append(args, dbURL)...), exitOK, exitRowErrors)
	return dbURL
}

// TestApplyTableOnlyVerifiedAddresses: over tables as over files, accept
// gives a row the service's address only where the service verified one.
// The sample run has Suggest rows (with an address id), Confirm rows
// without one (row 18 of the issue: France, "Address not found") and Error
// rows; one Suggest row is made a Reject, one Confirm row is given an id,
// and one Accept row loses its id, so that every action is met. Every
// review row is decided accept.
func TestApplyTableOnlyVerifiedAddresses(t *testing.T) {
	// The subtests share one journal directory (t.Setenv cannot be called in a
	// parallel test); their outputs, and so their journals, differ.
	isolateJournals(t)
	for name, newDB := range applyDBs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dbURL := nightlyRun(t, newDB)
			first := func(q string) string {
				t.Helper()
				_, rows := dbRows(t, dbURL, q)
				if len(rows) == 0 {
					t.Fatalf("no row: %s", q)
				}
				return rows[0][0]
			}
			suggest := first(`SELECT "Customer ID" FROM av WHERE av_action = 'Suggest' ORDER BY 1`)
			reject := first(`SELECT "Customer ID" FROM av WHERE av_action = 'Suggest' ORDER BY 1 DESC`)
			confirmNoID := first(`SELECT "Customer ID" FROM av WHERE av_action = 'Confirm' AND COALESCE(av_address_id, '') = '' AND COALESCE(av_line1, '') <> '' ORDER BY 1`)
			confirmID := first(`SELECT "Customer ID" FROM av WHERE av_action = 'Confirm' AND COALESCE(av_address_id, '') = '' ORDER BY 1 DESC`)
			errorRow := first(`SELECT "Customer ID" FROM av WHERE av_action = 'Error' ORDER BY 1`)
			accept := first(`SELECT "Customer ID" FROM av WHERE av_action = 'Accept' ORDER BY 1`)
			acceptNoID := first(`SELECT "Customer ID" FROM av WHERE av_action = 'Accept' ORDER BY 1 DESC`)
			where := func(id string) string { return ` WHERE "Customer ID" = '` + id + `'` }
			dbExec(t, dbURL,
				`UPDATE av SET av_action = 'Reject'`+where(reject),
				`UPDATE rv SET av_action = 'Reject'`+where(reject),
				`UPDATE av SET av_address_id = 'IE-CONFIRMED'`+where(confirmID),
				`UPDATE av SET av_address_id = ''`+where(acceptNoID),
				`UPDATE rv SET decision = 'accept'`)
			code, _, stderr := cli("apply", dbURL, "--table", "customers", "--id-col", "Customer ID", "--country", "IE",
				"--out-table", "av", "--review-table", "rv", "--final-table", "final")
			if code != exitRowErrors {
				t.Fatalf("exit %d, want 3 (rows unresolved)\n%s", code, stderr)
			}
			for id, want := range map[string]string{
				suggest: "service", confirmID: "service", accept: "service",
				confirmNoID: "unresolved", reject: "unresolved", errorRow: "unresolved", acceptNoID: "unresolved",
			} {
				_, got := dbRows(t, dbURL, `SELECT final_source, COALESCE(final_line1, ''), COALESCE(final_postcode, '') FROM final`+where(id))
				if len(got) != 1 || got[0][0] != want {
					t.Errorf("id %s: final %q, want final_source %s", id, got, want)
				}
				if want == "unresolved" && len(got) == 1 && got[0][1]+got[0][2] != "" {
					t.Errorf("id %s is unresolved with an address: %q", id, got)
				}
			}
			// final_source=service only ever carries a verified address.
			_, bad := dbRows(t, dbURL, `SELECT f."Customer ID", a.av_action FROM final AS f JOIN av AS a ON a."Customer ID" = f."Customer ID"
				WHERE f.final_source = 'service' AND (COALESCE(a.av_address_id, '') = '' OR a.av_action NOT IN ('Accept', 'Suggest', 'Confirm'))`)
			if len(bad) > 0 {
				t.Errorf("service addresses the service did not verify: %q", bad)
			}
			// The same through --query and quoted table names: the same
			// final rows.
			code, _, stderr2 := cli("apply", dbURL, "--query", `SELECT * FROM "customers"`, "--id-col", "Customer ID", "--country", "IE",
				"--out-table", `"av"`, "--review-table", `"rv"`, "--final-table", `"final2"`)
			if code != exitRowErrors {
				t.Fatalf("through --query: exit %d, want 3\n%s", code, stderr2)
			}
			_, a := dbRows(t, dbURL, `SELECT "Customer ID", final_source, COALESCE(final_line1, '') FROM final ORDER BY 1`)
			_, b := dbRows(t, dbURL, `SELECT "Customer ID", final_source, COALESCE(final_line1, '') FROM final2 ORDER BY 1`)
			if !slices.EqualFunc(a, b, slices.Equal) {
				t.Error("apply through --query and quoted names wrote other final rows")
			}
			for _, w := range []string{
				"id " + confirmNoID + ": decided accept, but the service returned no matched address (Confirm",
				"id " + errorRow + ": decided accept, but the service did not verify an address (Error",
				"row(s) decided accept have no address the service verified",
			} {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// reviewRecords reads a CSV file whole.
func reviewRecords(t *testing.T, path string) [][]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(readFile(t, path))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func writeRecords(t *testing.T, path string, recs [][]string) {
	t.Helper()
	var b bytes.Buffer
	_ = csv.NewWriter(&b).WriteAll(recs)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestApplyReviewAsPeopleReturnIt: a CSV review decided, then sorted by
// Name, a Name typo fixed, a column added, a row deleted, a row from
// another run. The first three give the final file of the review as
// written (the typo a warning naming the row and the column); the last two
// are refused, naming the row.
func TestApplyReviewAsPeopleReturnIt(t *testing.T) {
	dir := t.TempDir()
	enriched, review := filepath.Join(dir, "cleaned.csv"), filepath.Join(dir, "review.csv")
	code, _, stderr := cli("run", "--log-format", "json", "--no-progress", "--limit", "60", "-o", enriched, "--review", review, sampleCSV(t))
	if code != exitOK && code != exitRowErrors {
		t.Fatalf("run exit %d\n%s", code, tail(stderr, 2000))
	}
	recs := reviewRecords(t, review)
	h := recs[0]
	// Laid out for a person: the id the run detected beside row, then the
	// decision and what it is about.
	if want := "row,Customer ID,decision,av_action,av_changes,input_label,matched_label,av_message,edit_line1"; !strings.HasPrefix(strings.Join(h, ","), want) {
		t.Fatalf("review header %q, want it to start %s", h, want)
	}
	col := func(name string) int {
		i := slices.Index(h, name)
		if i < 0 {
			t.Fatalf("review header %q lacks %s", h, name)
		}
		return i
	}
	for _, r := range recs[1:] {
		r[col("decision")] = "keep"
		if r[col("av_address_id")] != "" {
			r[col("decision")] = "accept"
		}
	}
	writeRecords(t, review, recs)
	apply := func(rv string) (int, string, string) {
		t.Helper()
		final := filepath.Join(t.TempDir(), "final.csv")
		code, _, stderr := cli("apply", "--enriched", enriched, "--review", rv, "-o", final)
		out := ""
		if code == exitOK || code == exitRowErrors {
			out = readFile(t, final)
		}
		return code, out, stderr
	}
	code, want, stderr := apply(review)
	if code != exitOK {
		t.Fatalf("the review as written: exit %d\n%s", code, stderr)
	}
	// A row of another run: the first review row's address, the second's
	// row number and id.
	other := slices.Clone(recs[1])
	other[col("row")], other[col("Customer ID")] = recs[2][col("row")], recs[2][col("Customer ID")]
	typo := recs[3][col("row")]
	for _, tc := range []struct {
		name     string
		change   func([][]string) [][]string
		wantCode int
		want     []string
	}{
		{"sorted by Name", func(r [][]string) [][]string {
			slices.SortStableFunc(r[1:], func(a, b []string) int { return strings.Compare(a[col("Name")], b[col("Name")]) })
			return r
		}, exitOK, nil},
		{"a Name typo fixed", func(r [][]string) [][]string {
			r[3][col("Name")] += " Jr"
			return r
		}, exitOK, []string{"WARNING      1 review cell(s) outside the address", "row " + typo + `, column "Name": `}},
		{"a column added", func(r [][]string) [][]string {
			for i := range r {
				// Among the input columns, beside Name.
				r[i] = slices.Insert(r[i], col("Name")+1, cmp.Or(map[bool]string{true: "checked by"}[i == 0], "AM"))
			}
			return r
		}, exitOK, []string{"ignored the review's column(s) the input does not have: checked by"}},
		{"a row deleted", func(r [][]string) [][]string { return slices.Delete(r, 2, 3) }, exitUsage,
			[]string{"row " + recs[2][col("row")] + ": the review has no row for it"}},
		{"a row of another run", func(r [][]string) [][]string {
			r[2] = other
			return r
		}, exitUsage, []string{"row " + recs[2][col("row")] + `: the address differs from the enriched file's (column "Address 1"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rv := filepath.Join(t.TempDir(), "review.csv")
			rs := reviewRecords(t, review)
			writeRecords(t, rv, tc.change(rs))
			code, got, stderr := apply(rv)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\n%s", code, tc.wantCode, stderr)
			}
			if code == exitOK && got != want {
				t.Errorf("the final file differs from the one of the review as written")
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// TestApplyTablesOfThePreviousVersion: an out-table and a review table a
// run of the previous version wrote (no av_changes) are applied and
// reported before the next run adds the column.
func TestApplyTablesOfThePreviousVersion(t *testing.T) {
	// The subtests share one journal directory (t.Setenv cannot be called in a
	// parallel test); their outputs, and so their journals, differ.
	isolateJournals(t)
	for name, newDB := range applyDBs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dbURL := nightlyRun(t, newDB, "--limit", "40")
			dbExec(t, dbURL, `ALTER TABLE av DROP COLUMN av_changes`, `ALTER TABLE rv DROP COLUMN av_changes`)
			code, _, stderr := cli("apply", dbURL, "--table", "customers", "--id-col", "Customer ID", "--country", "IE",
				"--out-table", "av", "--review-table", "rv", "--final-table", "final")
			if code != exitRowErrors || !strings.Contains(stderr, "undecided") {
				t.Fatalf("apply: exit %d, want 3 (undecided rows)\n%s", code, stderr)
			}
			code, _, stderr = cli("report", dbURL, "--out-table", "av", "-o", filepath.Join(t.TempDir(), "run.html"))
			if code != exitOK {
				t.Fatalf("report: exit %d\n%s", code, stderr)
			}
		})
	}
}
