package main

import (
	"path/filepath"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestRunKeepsTypedCells: a workbook's number and date cells reach the XLSX
// outputs as numbers in their own format, through the whole run, not as
// text ('1001, '120.50).
func TestRunKeepsTypedCells(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.xlsx")
	f := excelize.NewFile()
	sheet := f.GetSheetName(0)
	for cell, v := range map[string]any{"A1": "Address", "B1": "Country", "C1": "Customer no", "D1": "Balance", "E1": "Since",
		"A2": "1 Main Street", "B2": "IE", "C2": 1001, "D2": 120.5, "E2": 43525} {
		if err := f.SetCellValue(sheet, cell, v); err != nil {
			t.Fatal(err)
		}
	}
	two, _ := f.NewStyle(&excelize.Style{NumFmt: 2})   // 0.00
	date, _ := f.NewStyle(&excelize.Style{NumFmt: 14}) // a date
	_ = f.SetCellStyle(sheet, "D2", "D2", two)
	_ = f.SetCellStyle(sheet, "E2", "E2", date)
	if err := f.SaveAs(in); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	out := filepath.Join(dir, "out.xlsx")
	r := runCLI(t, dir, "-o", out, in)
	wantExit(t, r, exitOK, exitRowErrors)
	g, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s := g.GetSheetName(0)
	for _, c := range []struct{ cell, raw string }{{"C2", "1001"}, {"D2", "120.5"}, {"E2", "43525"}} {
		typ, _ := g.GetCellType(s, c.cell)
		raw, _ := g.GetCellValue(s, c.cell, excelize.Options{RawCellValue: true})
		if (typ != excelize.CellTypeNumber && typ != excelize.CellTypeUnset) || raw != c.raw {
			t.Errorf("%s: type %v, raw %q; want a number %s", c.cell, typ, raw, c.raw)
		}
	}
	if shown, _ := g.GetCellValue(s, "D2"); shown != "120.50" {
		t.Errorf("D2 shown as %q, want 120.50 (the input's format)", shown)
	}
}
