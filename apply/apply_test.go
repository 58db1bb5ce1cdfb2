package apply

import (
	"bytes"
	"cmp"
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

	"github.com/addrclean/addrclean/internal/golden"

	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding/charmap"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/writers"
)

var header = []string{"id", "street", "town", "county", "eircode", "country"}

func resp(action api.Action, id string, line string) *api.VerifyResponse {
	return &api.VerifyResponse{
		Action: action,
		Information: api.Information{
			Status: api.StatusVerified, MatchLevel: api.LevelBuilding,
		},
		Address: api.MatchedAddress{
			ID:       id,
			Lines:    []api.Line{{Value: line}},
			City:     &api.Value{Value: "Dublin"},
			Region:   &api.Value{Value: "Co. Dublin"},
			Postcode: &api.Value{Value: "D02 X285"},
			Country:  &api.Country{Value: "Ireland", ISO: "IE"},
			Label:    []string{line, "Dublin"},
		},
	}
}

// runResults is a run: Accept, Suggest, Confirm, Reject, Error, Accept,
// Suggest, a formula-like input cell in row 8 (Suggest).
func runResults() []writers.Result {
	rs := []writers.Result{
		{Cells: []string{"C1", "1 Main St", "Dublin", "Dublin", "D02 X285", "Ireland"}, Response: resp(api.ActionAccept, "A1", "1 Main Street")},
		{Cells: []string{"C2", "2 Main St", "Dublin", "Dublin", "", "Ireland"}, Response: resp(api.ActionSuggest, "A2", "2 Main Street")},
		{Cells: []string{"C3", "3 Main St\nFlat 2", "Dublin", "", "", ""}, Response: resp(api.ActionConfirm, "A3", "3 Main Street")},
		{Cells: []string{"C4", "PO Box 4", "Cork", "Cork", "", "IE"}, Response: resp(api.ActionReject, "", "PO Box 4")},
		{Cells: []string{"C5", "", "", "", "", ""}, Err: "no address"},
		{Cells: []string{"C6", "1 Main St", "Dublin", "Dublin", "D02 X285", "Ireland"}, Response: resp(api.ActionAccept, "A1", "1 Main Street")},
		{Cells: []string{"C7", "7 Main St", "Dublin", "", "", "Ireland"}, Response: resp(api.ActionSuggest, "A7", "7 Main Street")},
		{Cells: []string{"=C8", "8 Main St", "Dublin", "", "", "Ireland"}, Response: resp(api.ActionSuggest, "A8", "8 Main Street")},
	}
	for i := range rs {
		rs[i].Row = i + 1
		rs[i].InputLabel = strings.Join(slices.DeleteFunc(slices.Clone(rs[i].Cells[1:]), func(s string) bool { return s == "" }), ", ")
	}
	return rs
}

// writeRun writes the enriched and review outputs of rs in format ext.
func writeRun(t *testing.T, dir, ext string, rs []writers.Result) (enriched, review string) {
	t.Helper()
	enriched, review = filepath.Join(dir, "cleaned."+ext), filepath.Join(dir, "review."+ext)
	en, err := writers.NewEnriched(enriched, header, writers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rv, err := writers.NewReview(review, header, writers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		for _, w := range []writers.Writer{en, rv} {
			if err := w.Write(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, w := range []writers.Writer{en, rv} {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return enriched, review
}

// decide records decisions in a review file as a person would: per row,
// the column values to set (decision, edit_*).
func decide(t *testing.T, path string, set map[int]map[string]string) {
	t.Helper()
	switch filepath.Ext(path) {
	case ".csv":
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs[1:] {
			n, _ := strconv.Atoi(rec[0])
			for col, v := range set[n] {
				rec[slices.Index(recs[0], col)] = v
			}
		}
		var out bytes.Buffer
		w := csv.NewWriter(&out)
		_ = w.WriteAll(recs)
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	case ".xlsx":
		f, err := excelize.OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rows, err := f.GetRows("Review")
		if err != nil {
			t.Fatal(err)
		}
		for i, row := range rows[1:] {
			n, _ := strconv.Atoi(row[0])
			for col, v := range set[n] {
				cell, _ := excelize.CoordinatesToCellName(slices.Index(rows[0], col)+1, i+2)
				if err := f.SetCellStr("Review", cell, v); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := f.Save(); err != nil {
			t.Fatal(err)
		}
	case ".jsonl":
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i, l := range lines {
			for n, cols := range set {
				if !strings.HasPrefix(l, fmt.Sprintf(`{"row":%d,`, n)) {
					continue
				}
				for col, v := range cols {
					l = strings.Replace(l, `"`+col+`":""`, fmt.Sprintf(`"%s":%q`, col, v), 1)
				}
				lines[i] = l
			}
		}
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var decisions = map[int]map[string]string{
	2: {"decision": "accept"},
	3: {"decision": " Keep "},
	4: {"decision": "edit", "edit_line1": "Unit 4", "edit_line2": "Cork Business Park", "edit_city": "Cork", "edit_postcode": "T12 AB34", "edit_country": "IE"},
	// 5 (Error) and 7 left undecided
	8: {"decision": "keep"},
}

// TestApplyGolden applies one set of decisions to a run written in each
// format; every format gives the same final CSV, checked against a golden
// file.
func TestApplyGolden(t *testing.T) {
	for _, ext := range []string{"csv", "xlsx", "jsonl"} {
		t.Run(ext, func(t *testing.T) {
			dir := t.TempDir()
			en, rv := writeRun(t, dir, ext, runResults())
			decide(t, rv, decisions)
			out := filepath.Join(dir, "final.csv")
			rep, err := Run(context.Background(), en, rv, out, Options{})
			if err != nil {
				t.Fatal(err)
			}
			wantSources := map[string]int64{SourceService: 3, SourceInput: 2, SourcePerson: 1, SourceUnresolved: 2}
			wantDecisions := map[string]int64{"accept": 1, "keep": 2, "edit": 1, Undecided: 2}
			if rep.Rows != 8 || !mapsEqual(rep.Sources, wantSources) || !mapsEqual(rep.Decisions, wantDecisions) ||
				!slices.Equal(rep.UnresolvedRows, []int{5, 7}) || rep.NotInReview != 0 {
				t.Fatalf("report = %+v", rep)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			// JSONL holds "=C8" raw, the others "'=C8": the final CSV
			// neutralises both the same.
			golden.Check(t, "final.csv", got)
		})
	}
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestApplyOutputFormats writes the final file as XLSX and JSONL too.
func TestApplyOutputFormats(t *testing.T) {
	dir := t.TempDir()
	en, rv := writeRun(t, dir, "csv", runResults())
	decide(t, rv, decisions)
	for _, name := range []string{"final.xlsx", "final.jsonl"} {
		out := filepath.Join(dir, name)
		if _, err := Run(context.Background(), en, rv, out, Options{}); err != nil {
			t.Fatal(err)
		}
		if name == "final.jsonl" {
			b, _ := os.ReadFile(out)
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			if len(lines) != 8 || !strings.Contains(lines[3], `"final_line1":"Unit 4"`) || !strings.Contains(lines[3], `"final_source":"person"`) {
				t.Fatalf("final.jsonl:\n%s", b)
			}
			continue
		}
		f, err := excelize.OpenFile(out)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := f.GetRows("Final")
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 9 || rows[0][len(header)] != "final_line1" || rows[2][len(rows[2])-1] != SourceService {
			t.Fatalf("final.xlsx rows: %q", rows)
		}
	}
}

// TestApplyRefuses checks the reviews that must be refused, each naming
// the rows, and that nothing is written.
func TestApplyRefuses(t *testing.T) {
	tests := []struct {
		name     string
		other    func([]writers.Result) []writers.Result // the run the review comes from
		set      map[int]map[string]string
		wantRows []int
		wantMsg  string
	}{
		{
			name: "input cells differ",
			other: func(rs []writers.Result) []writers.Result {
				rs[2].Cells = slices.Clone(rs[2].Cells)
				rs[2].Cells[1] = "33 Main St"
				return rs
			},
			wantRows: []int{3}, wantMsg: `column "street"`,
		},
		{
			name: "review row is Accept in the enriched file",
			other: func(rs []writers.Result) []writers.Result {
				rs[0].Response = resp(api.ActionSuggest, "A1", "1 Main Street")
				return rs
			},
			wantRows: []int{1}, wantMsg: "Accept",
		},
		{
			name: "rows beyond the enriched file",
			other: func(rs []writers.Result) []writers.Result {
				return append(rs, writers.Result{Row: 9, Cells: []string{"C9"}, Err: "x"})
			},
			wantRows: []int{9}, wantMsg: "only 8 rows",
		},
		{
			name: "a row deleted",
			other: func(rs []writers.Result) []writers.Result {
				return slices.Delete(rs, 6, 7) // row 7 is Suggest
			},
			wantRows: []int{7}, wantMsg: "the review has no row for it (Suggest)",
		},
		{
			name: "a row of another record",
			other: func(rs []writers.Result) []writers.Result {
				rs[1].Cells = slices.Clone(rs[1].Cells)
				rs[1].Cells[0] = "X2"
				return rs
			},
			wantRows: []int{2}, wantMsg: `another record (column "id"`,
		},
		{
			name: "a row repeated",
			other: func(rs []writers.Result) []writers.Result {
				return slices.Insert(rs, 3, rs[2])
			},
			wantRows: []int{3}, wantMsg: "the review holds it twice",
		},
		{name: "unknown decision", set: map[int]map[string]string{2: {"decision": "maybe"}}, wantRows: []int{2}, wantMsg: `"maybe"`},
		{name: "edit without an address", set: map[int]map[string]string{3: {"decision": "edit"}}, wantRows: []int{3}, wantMsg: "edit_ columns are empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			en, _ := writeRun(t, dir, "csv", runResults())
			rs := runResults()
			if tt.other != nil {
				rs = tt.other(rs)
			}
			_, rv := writeRun(t, filepath.Join(dir, mkdir(t, dir, "other")), "csv", rs)
			decide(t, rv, tt.set)
			out := filepath.Join(dir, "final.csv")
			_, err := Run(context.Background(), en, rv, out, Options{})
			var me *MismatchError
			if !errors.As(err, &me) {
				t.Fatalf("err = %v, want a MismatchError", err)
			}
			if !slices.Equal(me.Rows(), tt.wantRows) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("rows %v, error:\n%v\nwant rows %v and %q", me.Rows(), err, tt.wantRows, tt.wantMsg)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("final file: %v, want none", err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 3 {
				t.Fatalf("directory holds %d entries, want the run's two and other/ (no temporary file)", len(ents))
			}
		})
	}
}

func mkdir(t *testing.T, dir, name string) string {
	t.Helper()
	if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestApplyReviewEncoding: a CSV review saved by a spreadsheet as
// windows-1252 fits its UTF-8 enriched file once its encoding is given, and
// is refused when it is not.
func TestApplyReviewEncoding(t *testing.T) {
	dir := t.TempDir()
	rs := runResults()
	rs[1].Cells = slices.Clone(rs[1].Cells)
	rs[1].Cells[1] = "2 Sráid Mhór"
	en, rv := writeRun(t, dir, "csv", rs)
	decide(t, rv, decisions)
	b, err := os.ReadFile(rv)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := charmap.Windows1252.NewEncoder().Bytes(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rv, enc, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "final.csv")
	if _, err := Run(context.Background(), en, rv, out, Options{}); err == nil || !strings.Contains(err.Error(), "utf-8") {
		t.Fatalf("without the encoding: %v, want an encoding error", err)
	}
	if _, err := Run(context.Background(), en, rv, out, Options{ReadReview: readers.Options{Encoding: "windows-1252"}}); err != nil {
		t.Fatal(err)
	}
}

// Rows returns the row numbers named by the problems, for the tests.
func (e *MismatchError) Rows() []int {
	var rows []int
	for _, p := range e.Problems {
		if p.Row > 0 && !slices.Contains(rows, p.Row) {
			rows = append(rows, p.Row)
		}
	}
	return rows
}

// actionResults are one row per kind of answer: Accept with and without
// an address id, Suggest, Confirm with an id, Confirm without one (the
// service found no address and echoed the input back, as for a French
// address it does not cover), Reject, Error.
func actionResults() []writers.Result {
	noID := func(action api.Action, msg string) *api.VerifyResponse {
		r := resp(action, "", "Rue de la Paix")
		r.Address.Lines = append(r.Address.Lines, api.Line{Value: "69003"})
		r.Address.Postcode = nil
		r.Address.Country = &api.Country{Value: "France", ISO: "FR"}
		r.Form.Message.Value = msg
		return r
	}
	rs := []writers.Result{
		{Cells: []string{"C1", "1 Main St", "Dublin", "", "", "IE"}, Response: resp(api.ActionAccept, "A1", "1 Main Street")},
		{Cells: []string{"C2", "2 Main St", "Dublin", "", "", "IE"}, Response: noID(api.ActionAccept, "")},
		{Cells: []string{"C3", "3 Main St", "Dublin", "", "", "IE"}, Response: resp(api.ActionSuggest, "A3", "3 Main Street")},
		{Cells: []string{"C4", "4 Main St", "Dublin", "", "", "IE"}, Response: resp(api.ActionConfirm, "A4", "4 Main Street")},
		{Cells: []string{"C5", "Rue de la Paix", "Lyon", "", "69003", "France"}, Response: noID(api.ActionConfirm, "Address not found")},
		{Cells: []string{"C6", "PO Box 6", "Cork", "", "", "IE"}, Response: noID(api.ActionReject, "Not a deliverable address")},
		{Cells: []string{"C7", "", "", "", "", ""}, Err: "no address"},
	}
	for i := range rs {
		rs[i].Row = i + 1
		rs[i].InputLabel = strings.Join(slices.DeleteFunc(slices.Clone(rs[i].Cells[1:]), func(s string) bool { return s == "" }), ", ")
	}
	return rs
}

// TestApplyOnlyVerifiedAddresses: accept takes the service's address only
// where the service verified one (an address id, and an action that places
// the row); elsewhere the row is unresolved with the reason, never given
// the lines the service echoed back. Every action against every decision,
// in each review format.
func TestApplyOnlyVerifiedAddresses(t *testing.T) {
	// The final_source of rows 1..7 per decision on the review rows (3..7).
	want := map[string][]string{
		"accept": {SourceService, SourceUnresolved, SourceService, SourceService, SourceUnresolved, SourceUnresolved, SourceUnresolved},
		"keep":   {SourceService, SourceUnresolved, SourceInput, SourceInput, SourceInput, SourceInput, SourceInput},
		"edit":   {SourceService, SourceUnresolved, SourcePerson, SourcePerson, SourcePerson, SourcePerson, SourcePerson},
		"":       {SourceService, SourceUnresolved, SourceUnresolved, SourceUnresolved, SourceUnresolved, SourceUnresolved, SourceUnresolved},
	}
	for _, ext := range []string{"csv", "xlsx", "jsonl"} {
		for decision, sources := range want {
			t.Run(ext+"/"+cmp.Or(decision, "undecided"), func(t *testing.T) {
				dir := t.TempDir()
				en, rv := writeRun(t, dir, ext, actionResults())
				set := map[int]map[string]string{}
				for row := 3; row <= 7; row++ {
					set[row] = map[string]string{"decision": decision}
					if decision == "edit" {
						set[row]["edit_line1"] = "Typed " + strconv.Itoa(row)
					}
				}
				decide(t, rv, set)
				out := filepath.Join(dir, "final.csv")
				rep, err := Run(context.Background(), en, rv, out, Options{})
				if err != nil {
					t.Fatal(err)
				}
				recs := readCSV(t, out)
				src := len(recs[0]) - 1
				var got []string
				for _, r := range recs[1:] {
					got = append(got, r[src])
					if r[src] == SourceUnresolved && strings.Join(r[len(header):src], "") != "" {
						t.Errorf("row %s is unresolved with an address: %q", r[0], r[len(header):])
					}
				}
				if !slices.Equal(got, sources) {
					t.Fatalf("final_source = %q, want %q", got, sources)
				}
				// The case: row 5, Confirm "Address not found"
				// without an id, decided accept: unresolved, with the reason.
				wantNo := int64(1)
				if decision == "accept" {
					wantNo = 4
					if !slices.ContainsFunc(rep.Unresolved, func(u Unresolved) bool {
						return u.Row == 5 && strings.Contains(u.Reason, "no matched address") && strings.Contains(u.Reason, "Address not found")
					}) {
						t.Errorf("row 5 is not listed with its reason: %+v", rep.Unresolved)
					}
				}
				if rep.NoServiceAddress != wantNo {
					t.Errorf("NoServiceAddress = %d, want %d", rep.NoServiceAddress, wantNo)
				}
				if int64(len(rep.Unresolved)) != rep.Sources[SourceUnresolved] {
					t.Errorf("%d unresolved listed, %d counted", len(rep.Unresolved), rep.Sources[SourceUnresolved])
				}
			})
		}
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// reshape rewrites a CSV or XLSX review as a person might leave it: f gets
// the records, the header first, and returns the new ones.
func reshape(t *testing.T, path string, f func([][]string) [][]string) {
	t.Helper()
	switch filepath.Ext(path) {
	case ".csv":
		recs := f(readCSV(t, path))
		var out bytes.Buffer
		_ = csv.NewWriter(&out).WriteAll(recs)
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	case ".xlsx":
		in, err := excelize.OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := in.GetRows("Review")
		in.Close()
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows { // GetRows leaves trailing empty cells out
			for len(rows[i]) < len(rows[0]) {
				rows[i] = append(rows[i], "")
			}
		}
		out := excelize.NewFile()
		defer out.Close()
		if err := out.SetSheetName("Sheet1", "Review"); err != nil {
			t.Fatal(err)
		}
		for i, r := range f(rows) {
			vals := make([]any, len(r))
			for k, c := range r {
				vals[k] = c
			}
			cell, _ := excelize.CoordinatesToCellName(1, i+1)
			if err := out.SetSheetRow("Review", cell, &vals); err != nil {
				t.Fatal(err)
			}
		}
		if err := out.SaveAs(path); err != nil {
			t.Fatal(err)
		}
	}
}

// TestApplyReviewAsReturned: a review sorted by another column, with a
// column added, gives the same final file as the review as written; so
// does one longer than a sort chunk (sorted on disk and merged).
func TestApplyReviewAsReturned(t *testing.T) {
	reverse := func(recs [][]string) [][]string {
		slices.Reverse(recs[1:])
		return recs
	}
	addColumn := func(recs [][]string) [][]string {
		for i, r := range recs {
			v := "checked"
			if i == 0 {
				v = "notes"
			}
			recs[i] = slices.Insert(r, 3, v)
		}
		return recs
	}
	for _, ext := range []string{"csv", "xlsx"} {
		for _, tc := range []struct {
			name  string
			f     func([][]string) [][]string
			chunk int
		}{
			{"sorted by street, descending", func(recs [][]string) [][]string {
				street := slices.Index(recs[0], "street")
				slices.SortStableFunc(recs[1:], func(a, b []string) int { return strings.Compare(b[street], a[street]) })
				return recs
			}, 0},
			{"reversed, sorted on disk", reverse, 2},
			{"a column added", addColumn, 0},
			{"row moved to the end", func(recs [][]string) [][]string {
				for i, r := range recs {
					recs[i] = append(r[1:], r[0])
				}
				return recs
			}, 0},
		} {
			t.Run(ext+"/"+tc.name, func(t *testing.T) {
				if tc.chunk > 0 {
					defer func(n int) { chunkRows = n }(chunkRows)
					chunkRows = tc.chunk
				}
				tmp := t.TempDir()
				t.Setenv("TMPDIR", tmp) // where the sort spills
				dir := t.TempDir()
				en, rv := writeRun(t, dir, ext, runResults())
				decide(t, rv, decisions)
				reshape(t, rv, tc.f)
				out := filepath.Join(dir, "final.csv")
				rep, err := Run(context.Background(), en, rv, out, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if rep.EditedCells != 0 {
					t.Errorf("edited cells: %+v", rep.Edited)
				}
				got, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				golden.Check(t, "final.csv", got)
				if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
					t.Errorf("the sort left %d temporary file(s) behind", len(ents))
				}
			})
		}
	}
}

// TestApplyPreviousLayout: reviews written by the previous version (row,
// the input columns, then the review and decision columns), decided, are
// still applied, with the same result as a review in this layout.
func TestApplyPreviousLayout(t *testing.T) {
	for _, ext := range []string{"csv", "xlsx"} {
		t.Run(ext, func(t *testing.T) {
			dir := t.TempDir()
			en, _ := writeRun(t, dir, "csv", runResults())
			out := filepath.Join(dir, "final.csv")
			rep, err := Run(context.Background(), en, filepath.Join("testdata", "review-previous-layout."+ext), out, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.ExtraColumns)+len(rep.MissingColumns) > 0 || rep.EditedCells > 0 {
				t.Errorf("report %+v", rep)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "final.csv", got)
		})
	}
}
