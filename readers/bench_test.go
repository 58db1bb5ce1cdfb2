package readers

import (
	"archive/zip"
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/internal/childrun"
)

var benchTowns = []string{"Cork", "Dublin 2", "Galway", "Sligo", "Limerick", "Waterford", "Dún Laoghaire", "Kilkenny"}

// benchRow returns the cells of generated row i of a CRM export: unique
// names and streets, a quoted field with a comma, an empty cell.
func benchRow(i int) []string {
	return []string{
		strconv.Itoa(100000 + i),
		"Customer " + strconv.Itoa(i),
		strconv.Itoa(i%300+1) + " Main Street, Upper",
		"",
		benchTowns[i%len(benchTowns)],
		"Co. " + benchTowns[(i/7)%len(benchTowns)],
		fmt.Sprintf("D%02d X%03d", i%24, i%1000),
		"Ireland",
		"08" + strconv.Itoa(71000000+i%9000000),
		"customer" + strconv.Itoa(i) + "@example.com",
	}
}

var benchHeader = []string{"ID", "Name", "Address 1", "Address 2", "Town", "County", "Eircode", "Country", "Phone", "Email"}

func writeBenchCSV(b *testing.B, path string, rows int) int64 {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	writeLine := func(cells []string) {
		for j, c := range cells {
			if j > 0 {
				w.WriteByte(',')
			}
			if strings.ContainsAny(c, ",\"\n") {
				w.WriteString(`"` + strings.ReplaceAll(c, `"`, `""`) + `"`)
			} else {
				w.WriteString(c)
			}
		}
		w.WriteString("\r\n")
	}
	writeLine(benchHeader)
	for i := range rows {
		writeLine(benchRow(i))
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	fi, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

// peakMem samples the live heap while a benchmark reads, and the process's
// peak resident set from the point of reset.
type peakMem struct {
	heap uint64
}

func (p *peakMem) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	p.heap = max(p.heap, ms.HeapInuse)
}

// resetRSS frees what generating the input took and resets the kernel's
// peak-RSS mark, so that VmHWM measures the reading alone.
func resetRSS() {
	runtime.GC()
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// peakRSS returns the process's VmHWM in bytes, or 0 where /proc cannot
// tell it.
func peakRSS() int64 {
	n, _ := childrun.ReadHWM(0)
	return n
}

// drain reads every row, sampling memory every 64Ki rows, and optionally
// maps each one.
func drain(b *testing.B, r Reader, m *Mapper, mem *peakMem) int {
	n := 0
	ctx := context.Background()
	for {
		row, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		if m != nil {
			if mp := m.Map(row); mp.Err != nil {
				b.Fatal(mp.Err)
			}
		}
		n++
		if n&0xFFFF == 0 {
			mem.sample()
		}
	}
}

func benchmarkCSV(b *testing.B, mapRows bool) {
	const rows = 1_000_000
	path := filepath.Join(b.TempDir(), "export.csv")
	size := writeBenchCSV(b, path, rows)
	var m *Mapper
	if mapRows {
		var err error
		if m, err = NewMapper(benchHeader, MappingSpec{}); err != nil {
			b.Fatal(err)
		}
	}
	resetRSS()
	var mem peakMem
	b.SetBytes(size)
	b.ResetTimer()
	for b.Loop() {
		r, err := Open(context.Background(), path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if n := drain(b, r, m, &mem); n != rows {
			b.Fatalf("read %d rows, want %d", n, rows)
		}
		r.Close()
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(mem.heap)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MB")
}

// BenchmarkCSV1M reads a generated 1,000,000-row CSV export.
func BenchmarkCSV1M(b *testing.B) { benchmarkCSV(b, false) }

// BenchmarkCSV1MMapped reads and maps a generated 1,000,000-row CSV export.
func BenchmarkCSV1MMapped(b *testing.B) { benchmarkCSV(b, true) }

// writeBenchXLSX writes a workbook the way Excel does (shared strings, a
// dimension), streaming it, so that generating it takes little memory.
func writeBenchXLSX(b testing.TB, path string, rows int) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	zw := zip.NewWriter(f)
	part := func(name, body string) {
		w, err := zw.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.WriteString(w, body); err != nil {
			b.Fatal(err)
		}
	}
	const ns = `xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"`
	const rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
	part("[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`+
		`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">`+
		`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>`+
		`<Default Extension="xml" ContentType="application/xml"/>`+
		`<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>`+
		`<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`+
		`<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>`+
		`</Types>`)
	part("_rels/.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`+
		`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`+
		`<Relationship Id="rId1" Type="`+rel+`/officeDocument" Target="xl/workbook.xml"/></Relationships>`)
	part("xl/workbook.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`+
		`<workbook `+ns+` xmlns:r="`+rel+`"><sheets><sheet name="Customers" sheetId="1" r:id="rId1"/></sheets></workbook>`)
	part("xl/_rels/workbook.xml.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`+
		`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`+
		`<Relationship Id="rId1" Type="`+rel+`/worksheet" Target="worksheets/sheet1.xml"/>`+
		`<Relationship Id="rId2" Type="`+rel+`/sharedStrings" Target="sharedStrings.xml"/></Relationships>`)

	// Text cells go to the shared strings in order of first use; the sheet
	// refers to them by index. Numbers (id, phone) are stored as numbers.
	textCols := []int{1, 2, 3, 4, 5, 6, 7, 9}
	numCols := []int{0, 8}
	sst := make(map[string]int)
	var order []string
	index := func(s string) int {
		if i, ok := sst[s]; ok {
			return i
		}
		sst[s] = len(order)
		order = append(order, s)
		return len(order) - 1
	}
	_ = numCols
	w, err := zw.Create("xl/worksheets/sheet1.xml")
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	fmt.Fprintf(bw, `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet %s><dimension ref="A1:J%d"/><sheetData>`, ns, rows+1)
	writeRow := func(r int, cells []string, allText bool) {
		fmt.Fprintf(bw, `<row r="%d">`, r)
		for j, c := range cells {
			if c == "" {
				continue
			}
			ref := string(rune('A'+j)) + strconv.Itoa(r)
			isText := allText
			for _, t := range textCols {
				isText = isText || t == j
			}
			if isText {
				fmt.Fprintf(bw, `<c r="%s" t="s"><v>%d</v></c>`, ref, index(c))
			} else {
				fmt.Fprintf(bw, `<c r="%s"><v>%s</v></c>`, ref, c)
			}
		}
		bw.WriteString(`</row>`)
	}
	writeRow(1, benchHeader, true)
	for i := range rows {
		writeRow(i+2, benchRow(i), false)
	}
	bw.WriteString(`</sheetData></worksheet>`)
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
	w, err = zw.Create("xl/sharedStrings.xml")
	if err != nil {
		b.Fatal(err)
	}
	bw = bufio.NewWriterSize(w, 1<<20)
	fmt.Fprintf(bw, `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><sst %s count="%d" uniqueCount="%d">`, ns, len(order), len(order))
	for _, s := range order {
		bw.WriteString(`<si><t>`)
		bw.WriteString(s) // generated text has no XML specials
		bw.WriteString(`</t></si>`)
	}
	bw.WriteString(`</sst>`)
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkXLSX200k reads a generated 200,000-row workbook with shared
// strings, reporting the peak heap and resident set while reading.
func BenchmarkXLSX200k(b *testing.B) { benchmarkXLSX(b, false) }

// BenchmarkXLSX200kTyped is BenchmarkXLSX200k with Options.CellTypes, which
// reads the sheet's XML a second time.
func BenchmarkXLSX200kTyped(b *testing.B) { benchmarkXLSX(b, true) }

func benchmarkXLSX(b *testing.B, typed bool) {
	const rows = 200_000
	dir := b.TempDir()
	path := filepath.Join(dir, "export.xlsx")
	writeBenchXLSX(b, path, rows)
	resetRSS()
	var mem peakMem
	b.ResetTimer()
	for b.Loop() {
		r, err := Open(context.Background(), path, Options{TmpDir: dir, CellTypes: typed})
		if err != nil {
			b.Fatal(err)
		}
		if got := r.(RowCounter).RowCount(); got != rows {
			b.Fatalf("RowCount = %d, want %d", got, rows)
		}
		if n := drain(b, r, nil, &mem); n != rows {
			b.Fatalf("read %d rows, want %d", n, rows)
		}
		if err := r.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(mem.heap)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MB")
}

// BenchmarkXLSXCheck200k measures the check Open makes of a workbook
// before excelize reads it (BenchmarkXLSX200k includes it), on the same
// input, reporting the unpacked size of the sheet and shared strings.
func BenchmarkXLSXCheck200k(b *testing.B) {
	const rows = 200_000
	path := filepath.Join(b.TempDir(), "export.xlsx")
	writeBenchXLSX(b, path, rows)
	zr, err := zip.OpenReader(path)
	if err != nil {
		b.Fatal(err)
	}
	var size uint64
	for _, f := range zr.File {
		size += f.UncompressedSize64
	}
	zr.Close()
	b.SetBytes(int64(size))
	for b.Loop() {
		if _, err := checkWorkbook(context.Background(), path, "", limitsOf(Options{})); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkDetectDelimiter measures detection on a full 64 KiB sample.
func BenchmarkDetectDelimiter(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < sampleSize; i++ {
		sb.WriteString(strings.Join(benchRow(i), ";") + "\n")
	}
	sample := []byte(sb.String()[:sampleSize])
	for b.Loop() {
		detectDelimiter(sample, false)
	}
}
