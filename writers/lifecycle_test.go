package writers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/api"
	"github.com/rs/zerolog"
	"github.com/xuri/excelize/v2"
)

var outputNames = []string{"out.csv", "out.tsv", "out.txt", "out.xlsx", "out.jsonl"}

func acceptRow(n int) Result {
	return Result{
		Row:        n,
		Cells:      []string{"C", "Name", "1 Main St", "", "Dublin", "", "", "", "", "", ""},
		InputLabel: "1 Main St, Dublin",
		Response:   response(api.ActionAccept, []string{"1 Main St"}, []string{"1 Main St", "Dublin"}, nil),
	}
}

// dirNames lists a directory, to check that nothing was left behind.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestAbortLeavesNothing(t *testing.T) {
	for _, name := range outputNames {
		for _, ctor := range []constructor{NewEnriched, NewReview} {
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				w, err := ctor(filepath.Join(dir, name), fixtureHeader, Options{})
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range fixtureResults() {
					if err := w.Write(context.Background(), r); err != nil {
						t.Fatal(err)
					}
				}
				// The enriched output also has its spool of held-back rows,
				// and an XLSX output excelize's TempDir, named like the
				// temporary file.
				got := dirNames(t, dir)
				if len(got) == 0 || len(got) > 3 {
					t.Fatalf("while writing, directory holds %q; want only temporary files", got)
				}
				for _, g := range got {
					if !strings.HasPrefix(g, "."+name+".tmp-") {
						t.Fatalf("while writing, directory holds %q; want only temporary files", got)
					}
				}
				if err := w.Abort(); err != nil {
					t.Fatal(err)
				}
				if got := dirNames(t, dir); len(got) != 0 {
					t.Fatalf("after Abort, directory holds %q", got)
				}
				if err := w.Abort(); err != nil {
					t.Fatalf("second Abort: %v", err)
				}
				if err := w.Close(); !errors.Is(err, errAborted) {
					t.Fatalf("Close after Abort = %v, want errAborted", err)
				}
				if err := w.Write(context.Background(), acceptRow(1)); !errors.Is(err, errClosed) {
					t.Fatalf("Write after Abort = %v, want errClosed", err)
				}
			})
		}
	}
}

func TestCloseReplacesAtomically(t *testing.T) {
	for _, name := range outputNames {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, []byte("old"), 0o640); err != nil {
				t.Fatal(err)
			}
			w, err := NewEnriched(path, fixtureHeader, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(context.Background(), acceptRow(1)); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(path); string(b) != "old" {
				t.Fatalf("final file changed before Close: %q", b)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(path)
			if string(b) == "old" || len(b) == 0 {
				t.Fatalf("final file not replaced: %q", b)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o640 {
				t.Fatalf("mode = %v, want the replaced file's 0640", fi.Mode().Perm())
			}
			if got := dirNames(t, dir); len(got) != 1 {
				t.Fatalf("directory holds %q, want only %s", got, name)
			}
			if err := w.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			if err := w.Abort(); err != nil {
				t.Fatalf("Abort after Close: %v", err)
			}
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("Abort after Close removed the output: %v", err)
			}
			if err := w.Write(context.Background(), acceptRow(2)); !errors.Is(err, errClosed) {
				t.Fatalf("Write after Close = %v, want errClosed", err)
			}
		})
	}
}

func TestNewFileMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.csv")
	w, err := NewEnriched(path, []string{"a"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode = %v, want 0644", fi.Mode().Perm())
	}
}

func TestCloseFailsWhenRenameFails(t *testing.T) {
	for _, name := range outputNames {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			// A non-empty directory under the final name makes the rename fail.
			if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil {
				t.Fatal(err)
			}
			w, err := NewEnriched(path, fixtureHeader, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(context.Background(), acceptRow(1)); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err == nil {
				t.Fatal("Close succeeded; want the rename error")
			}
			if got := dirNames(t, dir); len(got) != 1 || got[0] != name {
				t.Fatalf("directory holds %q; the temporary file should be gone", got)
			}
		})
	}
}

func TestFailedWriteLeavesNothing(t *testing.T) {
	for _, name := range outputNames {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := NewEnriched(filepath.Join(dir, name), fixtureHeader, Options{})
			if err != nil {
				t.Fatal(err)
			}
			// Break the temporary file under the writer, as a full disk would.
			g := w.(*guarded)
			var out *output
			switch fw := g.fw.(type) {
			case *csvWriter:
				out = fw.out
			case *jsonlWriter:
				out = fw.out
			case *xlsxWriter:
				out = fw.out
			}
			_ = out.file.Close()
			var werr error
			for i := 1; i <= 300 && werr == nil; i++ {
				werr = w.Write(context.Background(), acceptRow(i))
			}
			cerr := w.Close()
			if werr == nil && cerr == nil {
				t.Fatal("neither Write nor Close reported the broken file")
			}
			if werr != nil && !errors.Is(cerr, werr) && cerr != werr {
				t.Fatalf("Close = %v, want the write error %v", cerr, werr)
			}
			if got := dirNames(t, dir); len(got) != 0 {
				t.Fatalf("directory holds %q after a failed run", got)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, path string
		opts       Options
		want       string
	}{
		{"unknown extension", filepath.Join(dir, "a.xls"), Options{}, "unknown extension"},
		{"missing directory", filepath.Join(dir, "no", "such", "a.csv"), Options{}, "create output"},
		{"missing directory xlsx", filepath.Join(dir, "no", "a.xlsx"), Options{}, "create output"},
		{"quote delimiter", filepath.Join(dir, "a.csv"), Options{Delimiter: '"'}, "invalid CSV delimiter"},
		{"newline delimiter", filepath.Join(dir, "a.csv"), Options{Delimiter: '\n'}, "invalid CSV delimiter"},
		{"invalid rune delimiter", filepath.Join(dir, "a.csv"), Options{Delimiter: 0xD800}, "invalid CSV delimiter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, ctor := range []constructor{NewEnriched, NewReview} {
				w, err := ctor(tt.path, []string{"a"}, tt.opts)
				if err == nil {
					_ = w.Abort()
					t.Fatal("no error")
				}
				if !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("error %q does not say %q", err, tt.want)
				}
			}
		})
	}
	if got := dirNames(t, dir); len(got) != 0 {
		t.Fatalf("failed constructors left %q", got)
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	w, err := NewEnriched(filepath.Join(dir, "a.csv"), fixtureHeader, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(ctx, acceptRow(1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Write = %v, want context.Canceled", err)
	}
	// A cancelled write does not poison the output: the caller may still
	// decide to finish it.
	if err := w.Write(context.Background(), acceptRow(1)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestStdout(t *testing.T) {
	t.Run("abort sends whole records", func(t *testing.T) {
		var out bytes.Buffer
		w, err := NewEnriched("-", []string{"a"}, Options{Stdout: &out})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(context.Background(), Result{Row: 1, Cells: []string{"x"}, Err: "boom"}); err != nil {
			t.Fatal(err)
		}
		if err := w.Abort(); err != nil {
			t.Fatal(err)
		}
		// The enriched rows wait for the duplicate counts until Close, so
		// an aborted output on stdout is the header alone.
		if !strings.HasSuffix(out.String(), "av_first_row,av_changes\n") {
			t.Fatalf("stdout = %q", out.String())
		}
	})
	t.Run("write error is reported", func(t *testing.T) {
		w, err := NewEnriched("-", []string{"a"}, Options{Stdout: failingWriter{}})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err == nil || !strings.Contains(err.Error(), "broken pipe") {
			t.Fatalf("Close = %v, want the pipe error", err)
		}
	})
}

// TestWarnings checks the warnings about rows wider than the header: CSV
// and XLSX, which leave the extra cells out, warn for the first warnLimit
// rows and give the total at Close; JSONL keeps the cells and says nothing.
func TestWarnings(t *testing.T) {
	const summary = "row(s) had more cells than the header; their extra cells are in no CSV/XLSX output column (JSONL keeps them)"
	tests := []struct {
		name     string
		ctor     constructor
		file     string
		rows     int
		wantRows int // rows that warn
		wantSum  string
	}{
		{"enriched csv", NewEnriched, "a.csv", 2 * warnLimit, warnLimit, `"rows":20`},
		{"enriched xlsx", NewEnriched, "a.xlsx", 3, 3, `"rows":3`},
		{"review csv", NewReview, "a.csv", warnLimit + 1, warnLimit, `"rows":11`},
		{"review xlsx", NewReview, "a.xlsx", 2 * warnLimit, warnLimit, `"rows":20`},
		{"enriched jsonl", NewEnriched, "a.jsonl", 2 * warnLimit, 0, ""},
		{"review jsonl", NewReview, "a.jsonl", 2 * warnLimit, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			log := zerolog.New(&logs)
			w, err := tt.ctor(filepath.Join(t.TempDir(), tt.file), []string{"a"}, Options{Logger: log})
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= tt.rows; i++ {
				if err := w.Write(context.Background(), Result{Row: i, Cells: []string{"x", "secret extra"}, Err: "e"}); err != nil {
					t.Fatal(err)
				}
				// A row that fits does not count.
				if err := w.Write(context.Background(), Result{Row: i, Cells: []string{"x"}, Err: "e"}); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(logs.String(), "secret extra") {
				t.Fatal("a warning logged cell contents")
			}
			if tt.wantSum == "" {
				if logs.Len() != 0 {
					t.Fatalf("unexpected warnings:\n%s", logs.String())
				}
				return
			}
			lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
			if len(lines) != tt.wantRows+1 {
				t.Fatalf("%d warnings, want %d and the summary:\n%s", len(lines), tt.wantRows, logs.String())
			}
			if !strings.Contains(lines[0], `"row":1`) || !strings.Contains(lines[0], `"output":"`+strings.Fields(tt.name)[0]+`"`) {
				t.Fatalf("warning does not name the row and output: %s", lines[0])
			}
			suppressed := strings.Contains(lines[tt.wantRows-1], "further_warnings_suppressed")
			if suppressed != (tt.wantRows == warnLimit) {
				t.Fatalf("last row warning: further_warnings_suppressed = %v, want %v: %s", suppressed, tt.wantRows == warnLimit, lines[tt.wantRows-1])
			}
			sum := lines[len(lines)-1]
			if !strings.Contains(sum, tt.wantSum) || !strings.Contains(sum, `"level":"warn"`) ||
				!strings.Contains(sum, fmt.Sprintf(`"message":"%d %s"`, tt.rows, summary)) {
				t.Fatalf("summary = %s", sum)
			}
		})
	}
}

// newTestXLSX returns an XLSX writer whose sheets hold maxRows rows.
func newTestXLSX(t *testing.T, ctor constructor, path string, header []string, opts Options, maxRows int) Writer {
	t.Helper()
	w, err := ctor(path, header, opts)
	if err != nil {
		t.Fatal(err)
	}
	w.(*guarded).fw.(*xlsxWriter).maxRows = maxRows
	return w
}

func TestXLSXContinuesOnNewSheet(t *testing.T) {
	tests := []struct {
		rows, maxRows int
		sheets        []string
	}{
		{0, 4, []string{"Enriched"}},
		{3, 4, []string{"Enriched"}},
		{4, 4, []string{"Enriched", "Enriched 2"}},
		{10, 4, []string{"Enriched", "Enriched 2", "Enriched 3", "Enriched 4"}},
		{250, 100, []string{"Enriched", "Enriched 2", "Enriched 3"}}, // past the sampled rows
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "a.xlsx")
		w := newTestXLSX(t, NewEnriched, path, []string{"id"}, Options{}, tt.maxRows)
		for i := 1; i <= tt.rows; i++ {
			r := acceptRow(i)
			r.Cells = []string{strings.Repeat("n", i%7) + string(rune('0'+i%10))}
			if err := w.Write(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f, err := excelize.OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.GetSheetList(); !slices.Equal(got, tt.sheets) {
			t.Fatalf("%d rows: sheets %q, want %q", tt.rows, got, tt.sheets)
		}
		filters := map[string]bool{}
		for _, dn := range f.GetDefinedName() {
			if dn.Name == "_xlnm._FilterDatabase" {
				filters[dn.Scope] = true
			}
		}
		total := 0
		for _, sheet := range tt.sheets {
			if !filters[sheet] {
				t.Fatalf("sheet %s has no autofilter", sheet)
			}
			rows, err := f.GetRows(sheet)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) == 0 || rows[0][0] != "id" || rows[0][1] != "av_action" {
				t.Fatalf("sheet %s has no header: %q", sheet, rows)
			}
			if len(rows) > tt.maxRows {
				t.Fatalf("sheet %s has %d rows, limit %d", sheet, len(rows), tt.maxRows)
			}
			for _, row := range rows[1:] {
				total++
				want := strings.Repeat("n", total%7) + string(rune('0'+total%10))
				if row[0] != want {
					t.Fatalf("data row %d = %q, want %q (order lost across sheets)", total, row[0], want)
				}
			}
			panes, _ := f.GetPanes(sheet)
			if !panes.Freeze || panes.YSplit != 1 {
				t.Fatalf("sheet %s header not frozen: %+v", sheet, panes)
			}
		}
		_ = f.Close()
		if total != tt.rows {
			t.Fatalf("%d data rows read back, want %d", total, tt.rows)
		}
	}
}

func TestXLSXTruncatesLongCells(t *testing.T) {
	long := strings.Repeat("a", xlsxMaxChars-1) + "🏠" + "tail"
	var logs bytes.Buffer
	dir := t.TempDir()
	for _, ctor := range []constructor{NewEnriched, NewReview} {
		path := filepath.Join(dir, "a.xlsx")
		logs.Reset()
		w, err := ctor(path, []string{"notes"}, Options{Logger: zerolog.New(&logs)})
		if err != nil {
			t.Fatal(err)
		}
		r := Result{
			Row:      7,
			Cells:    []string{long},
			Response: response(api.ActionSuggest, []string{"x"}, []string{long, "Dublin"}, [][]int{{0, 3}, {0, 1}}),
		}
		if err := w.Write(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f, err := excelize.OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sheet := f.GetSheetName(0)
		col := "A"
		if sheet == "Review" {
			col = "R" // after the review's own columns (ReviewLayout)
		}
		got, err := f.GetCellValue(sheet, col+"2")
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.Repeat("a", xlsxMaxChars-1); got != want {
			t.Fatalf("%s: truncated cell has %d bytes, want %d (the emoji must not be split)", sheet, len(got), len(want))
		}
		if sheet == "Review" {
			runs, err := f.GetCellRichText(sheet, "F2")
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, run := range runs {
				n += utf16Len(run.Text)
			}
			if n > xlsxMaxChars || len(runs) != 2 || runs[0].Text != "aaa" {
				t.Fatalf("rich matched_label not fitted: %d units in %d runs", n, len(runs))
			}
		}
		_ = f.Close()
		out := logs.String()
		if !strings.Contains(out, `"row":7`) || !strings.Contains(out, "truncated") {
			t.Fatalf("%s: no warning naming the row: %s", sheet, out)
		}
		if strings.Contains(out, "aaaa") {
			t.Fatal("warning logged the cell")
		}
	}
}

// TestXLSXNoFormulas checks that nothing in a workbook is a formula, even
// with neutralisation turned off.
func TestXLSXNoFormulas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.xlsx")
	writeFixture(t, NewEnriched, path, Options{RawCells: true})
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.Rows("Enriched")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for r := 1; rows.Next(); r++ {
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		for c := range cols {
			cell, _ := excelize.CoordinatesToCellName(c+1, r)
			if formula, _ := f.GetCellFormula("Enriched", cell); formula != "" {
				t.Fatalf("%s holds formula %q", cell, formula)
			}
		}
	}
	if got, _ := f.GetCellValue("Enriched", "A8"); got != `=HYPERLINK("http://evil.example","x")` {
		t.Fatalf("raw cell A8 = %q", got)
	}
}

func TestJSONLUnencodableResponse(t *testing.T) {
	var path = filepath.Join(t.TempDir(), "a.jsonl")
	w, err := NewEnriched(path, []string{"a"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := acceptRow(1)
	r.Response.Data.Location.Latitude = nan()
	if err := w.Write(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `"error":"response could not be encoded`) {
		t.Fatalf("got %s", b)
	}
}

func nan() float64 {
	var zero float64
	return zero / zero
}

// TestJSONLKeepsUnnamedMembers checks that the JSONL response is the full
// answer, members the interface does not name included.
func TestJSONLKeepsUnnamedMembers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.jsonl")
	w, err := NewEnriched(path, []string{"a"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := acceptRow(1)
	r.Response.Extra = map[string]json.RawMessage{"requestId": json.RawMessage(`"r-1"`)}
	r.Response.Data.Extra = map[string]json.RawMessage{"boundaries": json.RawMessage(`{"county":"Dublin"}`)}
	if err := w.Write(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"requestId":"r-1"`, `"boundaries":{"county":"Dublin"}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSONL lacks %s: %s", want, b)
		}
	}
}

// TestXLSXAwkwardText checks text that XML cannot hold or that OOXML would
// otherwise decode: control characters become U+FFFD, and escape-like
// "_xHHHH_" sequences read back literally.
func TestXLSXAwkwardText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a\x01b\x00", "a\uFFFDb\uFFFD"},
		{"_x0041_", "_x0041_"},
		{"  padded  ", "  padded  "},
		{"a\x0bb", "a\uFFFDb"},
		{"bad \xff utf8", "bad \uFFFD utf8"},
	}
	path := filepath.Join(t.TempDir(), "a.xlsx")
	header := make([]string, len(tests))
	cells := make([]string, len(tests))
	for i, tt := range tests {
		header[i] = fmt.Sprintf("c%d", i)
		cells[i] = tt.in
	}
	w, err := NewEnriched(path, header, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(context.Background(), Result{Row: 1, Cells: cells, Err: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i, tt := range tests {
		cell, _ := excelize.CoordinatesToCellName(i+1, 2)
		got, err := f.GetCellValue("Enriched", cell)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("%q read back as %q, want %q", tt.in, got, tt.want)
		}
	}
}
