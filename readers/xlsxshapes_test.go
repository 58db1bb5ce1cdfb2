package readers

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The hostile workbook shapes of issue 25, written by hand so that they
// stay small and exact: each is a header row (ID, Address) and then rows
// built to make reading slow or its output huge.

// hostileSheet streams a worksheet whose header row is ID, Address and
// whose data rows 2 to rows+1 are written by row.
func hostileSheet(rows int, row func(w *bufio.Writer, r int)) zipPart {
	return streamPart(func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		bw.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" + `<worksheet ` + testNS + `><sheetData>`)
		bw.WriteString(textRow(1, "ID", "Address"))
		for r := 2; r <= rows+1; r++ {
			row(bw, r)
		}
		bw.WriteString(`</sheetData></worksheet>`)
		return bw.Flush()
	})
}

// emptyCellsBook has rows of cells empty <c/> elements each.
func emptyCellsBook(t testing.TB, rows, cells int) string {
	empty := strings.Repeat("<c/>", cells)
	return writeTestBook(t, map[string]zipPart{"xl/worksheets/sheet1.xml": hostileSheet(rows, func(w *bufio.Writer, r int) {
		fmt.Fprintf(w, `<row r="%d">%s</row>`, r, empty)
	})})
}

// farCellBook has rows whose only cell is in the sheet's last column, XFD.
func farCellBook(t testing.TB, rows int) string {
	return writeTestBook(t, map[string]zipPart{"xl/worksheets/sheet1.xml": hostileSheet(rows, func(w *bufio.Writer, r int) {
		fmt.Fprintf(w, `<row r="%d"><c r="XFD%d" t="inlineStr"><is><t>x</t></is></c></row>`, r, r)
	})})
}

// blankCellsBook has rows of cells holding only white space.
func blankCellsBook(t testing.TB, rows, cells int) string {
	var b strings.Builder
	for range cells {
		b.WriteString(`<c t="inlineStr"><is><t xml:space="preserve">   </t></is></c>`)
	}
	blank := b.String()
	return writeTestBook(t, map[string]zipPart{"xl/worksheets/sheet1.xml": hostileSheet(rows, func(w *bufio.Writer, r int) {
		fmt.Fprintf(w, `<row r="%d">%s</row>`, r, blank)
	})})
}

// sharedBombBook has rows of cells cells that all refer to one shared
// string of size characters.
func sharedBombBook(t testing.TB, rows, cells, size int) string {
	var b strings.Builder
	for c := range cells {
		b.WriteString(`<c r="` + string(rune('A'+c)) + `%[1]d" t="s"><v>0</v></c>`)
	}
	cellsXML := b.String()
	return writeTestBook(t, map[string]zipPart{
		"xl/sharedStrings.xml": textPart(sstXML(strings.Repeat("a", size))),
		"xl/worksheets/sheet1.xml": hostileSheet(rows, func(w *bufio.Writer, r int) {
			w.WriteString(`<row r="` + strconv.Itoa(r) + `">`)
			fmt.Fprintf(w, cellsXML, r)
			w.WriteString(`</row>`)
		}),
	})
}

// TestXLSXSharedStringBomb: a workbook whose cells all refer to one long
// shared string is refused when it opens, naming the limit and the row,
// before a row is read: 10,000 rows of 4 cells of a 30,000-character string
// (about 100 KB) read as 1.2 GB of text, and the 1 MB one as 12 GB.
// MaxTextRatio lets it through.
func TestXLSXSharedStringBomb(t *testing.T) {
	path := sharedBombBook(t, 10_000, 4, 30_000)
	r, err := Open(context.Background(), path, Options{TmpDir: t.TempDir()})
	if err == nil {
		r.Close()
		t.Fatal("the workbook was opened")
	}
	var le *LimitError
	if !errors.As(err, &le) || le.Option != "MaxTextRatio" || le.Limit != minTextLimit {
		t.Fatalf("error = %v, want the text limit", err)
	}
	// 64 MiB of text in rows of 120,000 bytes: the limit passes in row 561
	// (the header is row 1).
	if want := 2 + minTextLimit/(4*30_000); le.Row != want {
		t.Errorf("row %d, want %d", le.Row, want)
	}
	if msg := err.Error(); !strings.Contains(msg, "100 times the file's size") || !strings.Contains(msg, "row 561") {
		t.Errorf("the message does not name the limit and the row: %s", msg)
	}
	r, err = Open(context.Background(), path, Options{TmpDir: t.TempDir(), MaxTextRatio: 1 << 20})
	if err != nil {
		t.Fatalf("with MaxTextRatio raised: %v", err)
	}
	r.Close()
}

// TestXLSXTextRatioOfRealExport: a generated CRM export (shared strings, as
// Excel writes them) holds a few times its file size in text, far from the
// limit's 100: a million rows of it would pass as 20,000 do.
func TestXLSXTextRatioOfRealExport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "export.xlsx")
	writeBenchXLSX(t, path, 20_000)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	book, err := checkWorkbook(context.Background(), path, "", limitsOf(Options{}))
	if err != nil {
		t.Fatal(err)
	}
	ratio := float64(book.scan.text) / float64(fi.Size())
	t.Logf("%d bytes of text in a file of %d bytes: %.1f times", book.scan.text, fi.Size(), ratio)
	if book.scan.text == 0 || ratio > defaultMaxTextRatio/10 {
		t.Errorf("text %d bytes, %.1f times the file: want under a tenth of the limit", book.scan.text, ratio)
	}
}

// BenchmarkXLSXHostile opens and reads the hostile shapes of issue 25 at
// their full size, reporting the peak heap and resident set: 3,000 rows of
// 16,000 empty cells, 200,000 rows with one cell in column XFD, 50,000 rows
// of 100 cells of white space, and 100,000 rows of 4 cells referring to
// one shared string of 30,000 characters (refused when it opens).
func BenchmarkXLSXHostile(b *testing.B) {
	for _, bc := range []struct {
		name string
		book func(b testing.TB) string
	}{
		{"EmptyCells", func(b testing.TB) string { return emptyCellsBook(b, 3_000, 16_000) }},
		{"FarCell", func(b testing.TB) string { return farCellBook(b, 200_000) }},
		{"BlankCells", func(b testing.TB) string { return blankCellsBook(b, 50_000, 100) }},
		{"SharedBomb", func(b testing.TB) string { return sharedBombBook(b, 100_000, 4, 30_000) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			path := bc.book(b)
			fi, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			dir := b.TempDir()
			resetRSS()
			var mem peakMem
			for b.Loop() {
				r, err := Open(context.Background(), path, Options{TmpDir: dir})
				if err != nil {
					var le *LimitError
					if !errors.As(err, &le) {
						b.Fatal(err)
					}
					continue
				}
				drain(b, r, nil, &mem)
				mem.sample()
				if err := r.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(fi.Size())/(1<<10), "file-KB")
			b.ReportMetric(float64(mem.heap)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MB")
		})
	}
}
