package writers

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/internal/golden"

	"github.com/xuri/excelize/v2"
)

type constructor func(path string, header []string, opts Options) (Writer, error)

// writeFixture writes every fixture result through a new writer at path.
func writeFixture(t *testing.T, ctor constructor, path string, opts Options) {
	t.Helper()
	w, err := ctor(path, fixtureHeader, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range fixtureResults() {
		if err := w.Write(context.Background(), r); err != nil {
			t.Fatalf("row %d: %v", r.Row, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestGoldenText(t *testing.T) {
	tests := []struct {
		golden string
		ctor   constructor
		opts   Options
	}{
		{"enriched.csv", NewEnriched, Options{}},
		{"review.csv", NewReview, Options{}},
		{"enriched-raw.csv", NewEnriched, Options{RawCells: true}},
		{"review-raw.csv", NewReview, Options{RawCells: true}},
		{"enriched.tsv", NewEnriched, Options{}},
		{"review-semicolon.csv", NewReview, Options{Delimiter: ';'}},
		{"enriched.jsonl", NewEnriched, Options{}},
		{"review.jsonl", NewReview, Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tt.golden)
			writeFixture(t, tt.ctor, path, tt.opts)
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tt.golden, got)
		})
	}
}

func TestStdoutIsEnrichedCSV(t *testing.T) {
	var out bytes.Buffer
	writeFixture(t, NewEnriched, "-", Options{Stdout: &out})
	golden.Check(t, "enriched.csv", out.Bytes())
}

func TestGoldenXLSX(t *testing.T) {
	tests := []struct {
		golden string
		ctor   constructor
		opts   Options
	}{
		{"enriched.xlsx.txt", NewEnriched, Options{}},
		{"review.xlsx.txt", NewReview, Options{}},
		{"review-raw.xlsx.txt", NewReview, Options{RawCells: true}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.xlsx")
			writeFixture(t, tt.ctor, path, tt.opts)
			checkColsAscending(t, path)
			golden.Check(t, tt.golden, []byte(dumpXLSX(t, path)))
		})
	}
}

// dumpXLSX describes a workbook as text: sheets, panes, filters, column
// widths, and every cell with its type, value, rich text runs and style.
func dumpXLSX(t *testing.T, path string) string {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	for _, dn := range f.GetDefinedName() {
		fmt.Fprintf(&b, "defined name %s scope=%s refers to %s\n", dn.Name, dn.Scope, dn.RefersTo)
	}
	for i, sheet := range f.GetSheetList() {
		fmt.Fprintf(&b, "== sheet %q active=%v\n", sheet, f.GetActiveSheetIndex() == i)
		panes, err := f.GetPanes(sheet)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "panes freeze=%v ysplit=%d topleft=%s\n", panes.Freeze, panes.YSplit, panes.TopLeftCell)
		dvs, err := f.GetDataValidations(sheet)
		if err != nil {
			t.Fatal(err)
		}
		for _, dv := range dvs {
			fmt.Fprintf(&b, "validation %s type=%s list=%s blank=%v error=%v input=%v\n", dv.Sqref, dv.Type, dv.Formula1, dv.AllowBlank, dv.ShowErrorMessage, dv.ShowInputMessage)
		}
		rows, err := f.GetRows(sheet)
		if err != nil {
			t.Fatal(err)
		}
		ncols := 0
		for _, r := range rows {
			ncols = max(ncols, len(r))
		}
		var widths []string
		for c := 1; c <= ncols; c++ {
			name, _ := excelize.ColumnNumberToName(c)
			w, _ := f.GetColWidth(sheet, name)
			widths = append(widths, fmt.Sprintf("%s=%g", name, w))
		}
		fmt.Fprintf(&b, "widths %s\n", strings.Join(widths, " "))
		for r := range rows {
			if h, err := f.GetRowHeight(sheet, r+1); err == nil && h != 15 {
				fmt.Fprintf(&b, "row %d height=%g\n", r+1, h)
			}
			for c := 1; c <= ncols; c++ {
				cell, _ := excelize.CoordinatesToCellName(c, r+1)
				v, err := f.GetCellValue(sheet, cell, excelize.Options{RawCellValue: true})
				if err != nil {
					t.Fatal(err)
				}
				typ, _ := f.GetCellType(sheet, cell)
				sid, _ := f.GetCellStyle(sheet, cell)
				if v == "" && sid == 0 {
					continue
				}
				fmt.Fprintf(&b, "%s %s %q", cell, cellTypeName(typ), v)
				if sid != 0 {
					st, err := f.GetStyle(sid)
					if err != nil {
						t.Fatal(err)
					}
					if st.Font != nil && (st.Font.Bold || st.Font.Color != "") {
						fmt.Fprintf(&b, " font(bold=%v color=%s family=%s size=%g)", st.Font.Bold, st.Font.Color, st.Font.Family, st.Font.Size)
					}
					if st.Alignment != nil && st.Alignment.WrapText {
						fmt.Fprintf(&b, " wrap(vertical=%s)", st.Alignment.Vertical)
					}
					if len(st.Fill.Color) > 0 {
						fmt.Fprintf(&b, " fill=%s", strings.Join(st.Fill.Color, ","))
					}
				}
				runs, err := f.GetCellRichText(sheet, cell)
				if err != nil {
					t.Fatal(err)
				}
				if len(runs) > 1 || (len(runs) == 1 && runs[0].Font != nil) {
					b.WriteString(" runs[")
					for k, run := range runs {
						if k > 0 {
							b.WriteString(" ")
						}
						if run.Font != nil && run.Font.Bold {
							fmt.Fprintf(&b, "*%q/%s/%s*", run.Text, run.Font.Color, run.Font.Family)
						} else {
							fmt.Fprintf(&b, "%q", run.Text)
						}
					}
					b.WriteString("]")
				}
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

func cellTypeName(t excelize.CellType) string {
	switch t {
	case excelize.CellTypeUnset:
		return "number" // no t attribute: a number
	case excelize.CellTypeInlineString:
		return "string"
	case excelize.CellTypeSharedString:
		return "shared-string"
	case excelize.CellTypeFormula:
		return "FORMULA"
	}
	return fmt.Sprintf("type%d", t)
}

// checkColsAscending checks the <col> elements of every sheet are in
// ascending order, which Excel requires (excelize reads them in any order).
func checkColsAscending(t *testing.T, path string) {
	t.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	colMin := regexp.MustCompile(`<col min="(\d+)"`)
	for _, zf := range z.File {
		if !strings.HasPrefix(zf.Name, "xl/worksheets/") {
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		prev := 0
		for _, m := range colMin.FindAllSubmatch(b, -1) {
			n, _ := strconv.Atoi(string(m[1]))
			if n <= prev {
				t.Fatalf("%s: <col min=%d> after %d; Excel wants ascending columns", zf.Name, n, prev)
			}
			prev = n
		}
		if prev == 0 {
			t.Fatalf("%s: no column widths", zf.Name)
		}
	}
}
