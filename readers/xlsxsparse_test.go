package readers

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestXLSXSparseCopyReadsTheSame: a sheet read through its rewritten copy
// gives the rows the sheet gives: cells with and without references,
// shared and inline strings, numbers, cells of white space (empty either
// way), empty rows and cells, elements with a namespace prefix.
func TestXLSXSparseCopyReadsTheSame(t *testing.T) {
	plain := sheetXML(
		textRow(1, "ID", "Address", "Town"),
		`<row r="2"><c r="A2"><v>1</v></c><c t="s"><v>0</v></c><c/><c t="inlineStr"><is><t>Cork</t></is></c></row>`,
		`<row r="3"><c r="A3"><v>2.50</v></c><c r="B3" t="inlineStr"><is><r><t>12 </t></r><r><t>High St</t></r></is></c></row>`,
		`<row r="5"><c r="B5" t="inlineStr"><is><t xml:space="preserve">   </t></is></c><c r="C5" t="s"><v>1</v></c></row>`,
		`<row r="6"><c r="A6" t="s"><v>2</v></c><c r="B6"/></row>`,
		`<row><c><v>7</v></c><c t="b"><v>1</v></c><c t="str"><v>x&amp;y</v></c></row>`,
		`<row r="9"><c r="C9" t="inlineStr"><is><t> </t></is></c></row>`,
		`<row r="10"><c/><c r="" t='inlineStr'><is><t>z</t></is></c></row>`,
	)
	prefixed := `<?xml version="1.0" encoding="UTF-8"?><x:worksheet xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><x:sheetData>` +
		`<x:row r="1"><x:c r="A1" t="inlineStr"><x:is><x:t>ID</x:t></x:is></x:c><x:c t="inlineStr"><x:is><x:t>Address</x:t></x:is></x:c></x:row>` +
		`<x:row r="2"><x:c/><x:c t="s"><x:v>0</x:v></x:c></x:row><x:row r="4"/></x:sheetData></x:worksheet>`
	sst := textPart(sstXML("1 Main Street", "Sligo", "  "))
	for _, tc := range []struct{ name, sheet string }{{"plain", plain}, {"prefixed", prefixed}} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTestBook(t, map[string]zipPart{"xl/sharedStrings.xml": sst, "xl/worksheets/sheet1.xml": textPart(tc.sheet)})
			want, err := openAndRead(t, path, Options{TmpDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer func(s int64) { sparseSlack = s }(sparseSlack)
			sparseSlack = -1 << 40 // every sheet is read through a copy
			got, err := openAndRead(t, path, Options{TmpDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, want, slices.Equal) {
				t.Fatalf("through the copy:\n%q\nread directly:\n%q", got, want)
			}
			if len(want) == 0 {
				t.Fatal("no rows: the test proves nothing")
			}
		})
	}
}

// TestXLSXSparseShapes reads the slow hostile shapes of issue 25 (scaled
// down) and holds the work to the cells with text: the bytes allocated,
// which excelize spends on every empty cell (48 million of them took 53 s)
// and on every column before a far cell (200,000 rows with one cell in
// column XFD took 92 s). The wall times are in BENCHMARKS.md.
//
// The sizes are the smallest that keep a wide margin: read by excelize
// directly (sparseSlack = 1<<40), the empty cells allocate 665 MB and the
// white space cells 373 MB, against the 32 MB allowed.
func TestXLSXSparseShapes(t *testing.T) {
	tests := []struct {
		name string
		book func(t testing.TB) string
		rows int
	}{
		{"empty cells", func(t testing.TB) string { return emptyCellsBook(t, 100, 16_000) }, 0},
		{"one cell in column XFD", func(t testing.TB) string { return farCellBook(t, 5_000) }, 0},
		{"white space cells", func(t testing.TB) string { return blankCellsBook(t, 1_500, 200) }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.book(t)
			tmp := t.TempDir()
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			r, err := Open(context.Background(), path, Options{TmpDir: tmp})
			if err != nil {
				t.Fatal(err)
			}
			rows, _, err := readAll(t, r)
			if cerr := r.Close(); err == nil {
				err = cerr
			}
			runtime.ReadMemStats(&after)
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Fatal(err)
			}
			if len(rows) != tt.rows {
				t.Errorf("%d rows, want %d", len(rows), tt.rows)
			}
			// The scans' buffers, the zip's, excelize's workbook: a few MB.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
				t.Errorf("reading allocated %d MB, want under 32", alloc>>20)
			}
		})
	}
}

// FuzzXLSXSparseCopy reads any sheet the check passes directly and through
// its rewritten copy: the copy must not fail where the sheet reads, nor
// read differently.
func FuzzXLSXSparseCopy(f *testing.F) {
	for _, s := range []string{
		sheetXML(textRow(1, "a", "b"), `<row r="2"><c r="B2" t="s"><v>0</v></c><c/><c><v>3</v></c></row>`),
		sheetXML(textRow(1, "a"), `<row><c t="inlineStr"><is><t xml:space="preserve"> </t></is></c><c r="XFD2" t="inlineStr"><is><t>x</t></is></c></row><row r="4"/>`),
		`<worksheet><sheetData><row><c><f>1+1</f></c><c r="C1"><v>2</v></c></row></sheetData></worksheet>`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sheet string) {
		path := writeTestBook(t, map[string]zipPart{"xl/sharedStrings.xml": textPart(sstXML("x", " ")), "xl/worksheets/sheet1.xml": textPart(sheet)})
		want, err := openAndRead(t, path, Options{TmpDir: t.TempDir()})
		if err != nil {
			return
		}
		defer func(s int64) { sparseSlack = s }(sparseSlack)
		sparseSlack = -1 << 40
		got, err := openAndRead(t, path, Options{TmpDir: t.TempDir()})
		if err != nil {
			t.Fatalf("the copy fails where the sheet reads: %v", err)
		}
		// Cells far right of the rest are left out of the copy: compare
		// the columns up to the widest row read through it.
		for i := range want {
			if i < len(got) && len(got[i]) < len(want[i]) {
				want[i] = want[i][:len(got[i])]
			}
		}
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("through the copy:\n%q\nread directly:\n%q", got, want)
		}
	})
}

// TestRefColumn: refColumn reads a reference's column as excelize does.
func TestRefColumn(t *testing.T) {
	for _, ref := range []string{"A1", "Z9", "AA10", "az3", "XFD1048576", "$A$1", "ABCD1", "1A", ""} {
		want, _, err := excelize.CellNameToCoordinates(ref)
		if err != nil {
			want = 0
		}
		if got := refColumn([]byte(ref)); got != want {
			t.Errorf("refColumn(%q) = %d, want %d", ref, got, want)
		}
	}
}
