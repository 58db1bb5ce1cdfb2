package readers

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/addrclean/addrclean/record"
)

const (
	testNS    = `xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"`
	testRelNS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
)

// zipPart is one part of a test workbook.
type zipPart interface {
	write(zw *zip.Writer, name string) error
}

// textPart is a part written as it is.
type textPart string

func (p textPart) write(zw *zip.Writer, name string) error {
	w, err := zw.Create(name)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, string(p))
	return err
}

// streamPart is a part too large to hold, written by the function.
type streamPart func(w io.Writer) error

func (p streamPart) write(zw *zip.Writer, name string) error {
	w, err := zw.Create(name)
	if err != nil {
		return err
	}
	return p(w)
}

// rawPart is a part whose zip entry declares the size and checksum given
// (0 for the true ones), as a damaged or doctored file does.
type rawPart struct {
	body string
	size uint64
	crc  uint32
}

func (p rawPart) write(zw *zip.Writer, name string) error {
	var buf bytes.Buffer
	fw, err := flate.NewWriter(&buf, flate.DefaultCompression)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(fw, p.body); err != nil {
		return err
	}
	if err := fw.Close(); err != nil {
		return err
	}
	h := &zip.FileHeader{Name: name, Method: zip.Deflate, CompressedSize64: uint64(buf.Len()),
		UncompressedSize64: cmpOr(p.size, uint64(len(p.body))), CRC32: cmpOr(p.crc, crc32.ChecksumIEEE([]byte(p.body)))}
	w, err := zw.CreateRaw(h)
	if err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// writeTestBook writes a workbook with one sheet, "Customers", in
// xl/worksheets/sheet1.xml, the way Excel lays one out, and returns its
// path. parts replace or add to the skeleton's; a nil part removes one.
func writeTestBook(t testing.TB, parts map[string]zipPart) string {
	t.Helper()
	all := map[string]zipPart{
		"[Content_Types].xml": textPart(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` +
			`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
			`<Default Extension="xml" ContentType="application/xml"/>` +
			`<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>` +
			`<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>` +
			`</Types>`),
		"_rels/.rels": textPart(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` +
			`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="` + testRelNS + `/officeDocument" Target="xl/workbook.xml"/></Relationships>`),
		"xl/workbook.xml": textPart(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` +
			`<workbook ` + testNS + ` xmlns:r="` + testRelNS + `"><sheets><sheet name="Customers" sheetId="1" r:id="rId1"/></sheets></workbook>`),
		"xl/_rels/workbook.xml.rels": textPart(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` +
			`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="` + testRelNS + `/worksheet" Target="worksheets/sheet1.xml"/>` +
			`<Relationship Id="rId2" Type="` + testRelNS + `/sharedStrings" Target="sharedStrings.xml"/></Relationships>`),
		"xl/worksheets/sheet1.xml": textPart(sheetXML(textRow(1, "ID", "Town"), textRow(2, "1", "Cork"))),
	}
	for name, p := range parts {
		if p == nil {
			delete(all, name)
		} else {
			all[name] = p
		}
	}
	path := filepath.Join(t.TempDir(), "book.xlsx")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	// Generated inputs are large and repetitive: spend little time on them.
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestSpeed)
	})
	names := make([]string, 0, len(all))
	for name := range all {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := all[name].write(zw, name); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// sheetXML is a worksheet holding rows.
func sheetXML(rows ...string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" +
		`<worksheet ` + testNS + `><sheetData>` + strings.Join(rows, "") + `</sheetData></worksheet>`
}

// textRow is row r holding inline text cells from column A.
func textRow(r int, cells ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<row r="%d">`, r)
	for i, c := range cells {
		fmt.Fprintf(&b, `<c r="%c%d" t="inlineStr"><is><t>%s</t></is></c>`, 'A'+i, r, c)
	}
	b.WriteString(`</row>`)
	return b.String()
}

// sstXML is a shared-string part holding strs.
func sstXML(strs ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`+"\n"+`<sst %s count="%d" uniqueCount="%d">`, testNS, len(strs), len(strs))
	for _, s := range strs {
		b.WriteString(`<si><t>` + s + `</t></si>`)
	}
	b.WriteString(`</sst>`)
	return b.String()
}

// sharedSheet is a sheet whose row 3 has in B3 a shared-string cell whose
// value is v.
func sharedSheet(v string) zipPart {
	return textPart(sheetXML(textRow(1, "ID", "Town"),
		`<row r="2"><c r="A2"><v>1</v></c><c r="B2" t="s"><v>0</v></c></row>`,
		`<row r="3"><c r="A3"><v>2</v></c><c r="B3" t="s"><v>`+v+`</v></c></row>`))
}

// padded streams head, n spaces and tail.
func padded(head string, n int, tail string) zipPart {
	return streamPart(func(w io.Writer) error {
		if _, err := io.WriteString(w, head); err != nil {
			return err
		}
		pad := bytes.Repeat([]byte(" "), 1<<20)
		for n > 0 {
			k := min(n, len(pad))
			if _, err := w.Write(pad[:k]); err != nil {
				return err
			}
			n -= k
		}
		_, err := io.WriteString(w, tail)
		return err
	})
}

// openAndRead opens the workbook at path and reads all its rows.
func openAndRead(t *testing.T, path string, opts Options) ([][]string, error) {
	t.Helper()
	r, err := Open(context.Background(), path, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	rows, _, err := readAll(t, r)
	return rows, err
}

// TestXLSXHostile reads workbooks built to exhaust memory or time, or
// damaged so that excelize would lose rows or cells without a word: each
// must fail, naming the file and, where it applies, the row.
func TestXLSXHostile(t *testing.T) {
	const mib = 1 << 20
	head := `<?xml version="1.0" encoding="UTF-8"?><worksheet ` + testNS + `><sheetData>` + textRow(1, "ID", "Town")
	good := sheetXML(textRow(1, "ID", "Town"), textRow(2, "1", "Cork"), textRow(3, "2", "Sligo"))
	tests := []struct {
		name    string
		parts   map[string]zipPart
		opts    Options
		wantErr string
		// wantLimit is the Option of the *LimitError wanted ("-" for one
		// of no option); wantRow its Row.
		wantLimit string
		wantRow   int
		damaged   bool
	}{
		{
			name:    "white space padding a row",
			parts:   map[string]zipPart{"xl/worksheets/sheet1.xml": padded(head+`<row r="2"><c r="A2"><v>1</v></c>`, 2*mib, `</row></sheetData></worksheet>`)},
			opts:    Options{MaxRowSize: mib},
			wantErr: `sheet "Customers" row 2: the XML of the row is larger than 1048576 bytes`, wantLimit: "MaxRowSize", wantRow: 2,
		},
		{
			name:    "white space between rows",
			parts:   map[string]zipPart{"xl/worksheets/sheet1.xml": padded(head, 2*mib, textRow(2, "1", "Cork")+`</sheetData></worksheet>`)},
			opts:    Options{MaxRowSize: mib},
			wantErr: `sheet "Customers" after row 1: one XML item between rows is larger than 1048576 bytes`, wantLimit: "MaxRowSize", wantRow: 1,
		},
		{
			name:    "a row of many small cells",
			parts:   map[string]zipPart{"xl/worksheets/sheet1.xml": textPart(sheetXML(textRow(1, "ID", "Town"), textRow(2, "1", "Cork"), `<row r="3">`+strings.Repeat(`<c/>`, 400)+`</row>`))},
			opts:    Options{MaxRowSize: 1000},
			wantErr: `sheet "Customers" row 3: the XML of the row is larger than 1000 bytes`, wantLimit: "MaxRowSize", wantRow: 3,
		},
		{
			name:    "too many cells",
			parts:   map[string]zipPart{"xl/worksheets/sheet1.xml": textPart(sheetXML(textRow(1, "ID", "Town"), textRow(2, "1", "Cork"), textRow(3, "2", "Sligo", "x", "y")))},
			opts:    Options{MaxRowCells: 3},
			wantErr: `sheet "Customers" row 3: the number of cells is more than 3`, wantLimit: "MaxRowCells", wantRow: 3,
		},
		{
			name:      "too many shared strings",
			parts:     map[string]zipPart{"xl/sharedStrings.xml": textPart(sstXML("Cork", "Sligo", "Galway")), "xl/worksheets/sheet1.xml": sharedSheet("1")},
			opts:      Options{MaxSharedStrings: 2},
			wantErr:   "shared strings: the number of strings is more than 2",
			wantLimit: "MaxSharedStrings",
		},
		{
			name:      "shared strings too large",
			parts:     map[string]zipPart{"xl/sharedStrings.xml": textPart(sstXML("Cork", "Sligo", "Galway")), "xl/worksheets/sheet1.xml": sharedSheet("1")},
			opts:      Options{MaxSharedStringsSize: 100},
			wantErr:   "shared strings: the unpacked size is larger than 100 bytes",
			wantLimit: "MaxSharedStringsSize",
		},
		{
			name:      "one shared string too long",
			parts:     map[string]zipPart{"xl/sharedStrings.xml": textPart(sstXML("Cork", strings.Repeat("x", 2000))), "xl/worksheets/sheet1.xml": sharedSheet("1")},
			opts:      Options{MaxRowSize: 1000},
			wantErr:   "shared strings: the XML of string 1 is larger than 1000 bytes",
			wantLimit: "MaxRowSize",
		},
		{
			name:      "white space between shared strings",
			parts:     map[string]zipPart{"xl/sharedStrings.xml": textPart(strings.Replace(sstXML("Cork", "Sligo"), "</si>", "</si>"+strings.Repeat(" ", 2000), 1)), "xl/worksheets/sheet1.xml": sharedSheet("1")},
			opts:      Options{MaxRowSize: 1000},
			wantErr:   "shared strings: one XML item between strings is larger than 1000 bytes",
			wantLimit: "MaxRowSize",
		},
		{
			name:      "parts held in memory too large",
			parts:     map[string]zipPart{"xl/media/image1.png": rawPart{body: "x", size: maxInMemoryParts + 1}},
			wantErr:   "the workbook: the size of the parts read into memory (all but worksheets and shared strings over 16 MiB) is larger than",
			wantLimit: "-",
		},
		{
			name:    "shared string past the table",
			parts:   map[string]zipPart{"xl/sharedStrings.xml": textPart(sstXML("Cork", "Sligo")), "xl/worksheets/sheet1.xml": sharedSheet("7")},
			wantErr: `the file is damaged: sheet "Customers": row 3, column B (cell B3): shared string 7 does not exist; the workbook has 2`, damaged: true,
		},
		{
			name: "shared string past the table, cells without references",
			parts: map[string]zipPart{"xl/sharedStrings.xml": textPart(sstXML("Cork", "Sligo")), "xl/worksheets/sheet1.xml": textPart(sheetXML(textRow(1, "ID", "Town"),
				`<row r="2"><c><v>1</v></c><c t="s"><v>0</v></c></row>`, `<row><c><v>2</v></c><c t="s"><v> 2 </v></c></row>`))},
			wantErr: `row 3, column B (cell B3): shared string 2 does not exist`, damaged: true,
		},
		{
			name:    "shared string reference not a number",
			parts:   map[string]zipPart{"xl/sharedStrings.xml": textPart(sstXML("Cork", "Sligo")), "xl/worksheets/sheet1.xml": sharedSheet("x")},
			wantErr: `row 3, column B (cell B3): the shared-string reference "x" is not a number`, damaged: true,
		},
		{
			// encoding/xml joins the text around comments, processing
			// instructions and CDATA sections: excelize reads "10".
			name:    "shared string split by a comment",
			parts:   map[string]zipPart{"xl/sharedStrings.xml": textPart(sstXML("Cork", "Sligo")), "xl/worksheets/sheet1.xml": sharedSheet("1<!-- -->0")},
			wantErr: `row 3, column B (cell B3): shared string 10 does not exist`, damaged: true,
		},
		{
			name:    "shared string split by a processing instruction",
			parts:   map[string]zipPart{"xl/sharedStrings.xml": textPart(sstXML("Cork", "Sligo")), "xl/worksheets/sheet1.xml": sharedSheet("1<?x y?>0")},
			wantErr: `row 3, column B (cell B3): shared string 10 does not exist`, damaged: true,
		},
		{
			// Unmarshal skips the text of an element inside <v>.
			name:    "shared string split by an element",
			parts:   map[string]zipPart{"xl/sharedStrings.xml": textPart(sstXML("Cork", "Sligo")), "xl/worksheets/sheet1.xml": sharedSheet("1<x>9</x>0")},
			wantErr: `row 3, column B (cell B3): shared string 10 does not exist`, damaged: true,
		},
		{
			name:    "shared string split by a CDATA section",
			parts:   map[string]zipPart{"xl/sharedStrings.xml": textPart(sstXML("Cork", "Sligo")), "xl/worksheets/sheet1.xml": sharedSheet("1<![CDATA[0]]>")},
			wantErr: `row 3, column B (cell B3): shared string 10 does not exist`, damaged: true,
		},
		{
			name:    "negative shared string",
			parts:   map[string]zipPart{"xl/sharedStrings.xml": textPart(sstXML("Cork", "Sligo")), "xl/worksheets/sheet1.xml": sharedSheet("-1")},
			wantErr: `shared string -1 does not exist`, damaged: true,
		},
		{
			name:    "shared strings without a table",
			parts:   map[string]zipPart{"xl/worksheets/sheet1.xml": sharedSheet("1")},
			wantErr: `row 2, column B (cell B2): shared string 0 does not exist; the workbook has 0`, damaged: true,
		},
		{
			name:    "rows out of order",
			parts:   map[string]zipPart{"xl/worksheets/sheet1.xml": textPart(sheetXML(textRow(1, "ID", "Town"), textRow(3, "2", "Sligo"), textRow(2, "1", "Cork")))},
			wantErr: `sheet "Customers": row 2 comes after row 3`, damaged: true,
		},
		{
			name:    "row past the end of a sheet",
			parts:   map[string]zipPart{"xl/worksheets/sheet1.xml": textPart(sheetXML(textRow(1, "ID", "Town"), textRow(1048577, "1", "Cork")))},
			wantErr: `row 1048577 is past the last row a sheet can have`, damaged: true,
		},
		{
			name:    "sheet cut in a row",
			parts:   map[string]zipPart{"xl/worksheets/sheet1.xml": textPart(good[:strings.Index(good, `<row r="3">`)+20])},
			wantErr: `sheet "Customers": the XML of the sheet ends in the middle of row 3`, damaged: true,
		},
		{
			name:    "sheet cut between rows",
			parts:   map[string]zipPart{"xl/worksheets/sheet1.xml": textPart(good[:strings.Index(good, `<row r="3">`)])},
			wantErr: `the XML of the sheet ends after row 2, before the end of its rows`, damaged: true,
		},
		{
			name:    "sheet cut before its rows",
			parts:   map[string]zipPart{"xl/worksheets/sheet1.xml": textPart(good[:strings.Index(good, `<sheetData>`)])},
			wantErr: `the XML of the sheet ends before its rows`, damaged: true,
		},
		{
			name:    "zip entry holding more than it declares",
			parts:   map[string]zipPart{"xl/worksheets/sheet1.xml": rawPart{body: good, size: uint64(len(good) / 2)}},
			wantErr: `the file is damaged: part xl/worksheets/sheet1.xml holds more data than the zip declares`, damaged: true,
		},
		{
			name:    "zip entry failing its checksum",
			parts:   map[string]zipPart{"xl/worksheets/sheet1.xml": rawPart{body: good, crc: 12345}},
			wantErr: `the file is damaged: part xl/worksheets/sheet1.xml fails its checksum`, damaged: true,
		},
		{
			name:    "zip entry shorter than it declares",
			parts:   map[string]zipPart{"xl/worksheets/sheet1.xml": rawPart{body: good, size: uint64(len(good) + 100)}},
			wantErr: `the file is damaged: part xl/worksheets/sheet1.xml is cut short`, damaged: true,
		},
		{
			name:    "damaged part that is not the sheet",
			parts:   map[string]zipPart{"xl/styles.xml": rawPart{body: `<styleSheet ` + testNS + `/>`, crc: 1}},
			wantErr: `the file is damaged: part xl/styles.xml fails its checksum`, damaged: true,
		},
		{
			name:    "shared strings cut",
			parts:   map[string]zipPart{"xl/sharedStrings.xml": textPart(sstXML("Cork", "Sligo")[:strings.Index(sstXML("Cork", "Sligo"), "<si>")+9]), "xl/worksheets/sheet1.xml": sharedSheet("1")},
			wantErr: `the XML of the shared strings ends in the middle of string 0, before their end`, damaged: true,
		},
		{
			name:    "shared strings cut between strings",
			parts:   map[string]zipPart{"xl/sharedStrings.xml": textPart(strings.TrimSuffix(sstXML("Cork", "Sligo"), "</sst>")), "xl/worksheets/sheet1.xml": sharedSheet("1")},
			wantErr: `the XML of the shared strings ends after 2 strings, before their end`, damaged: true,
		},
		{
			name:    "unescaped ampersand in the last row",
			parts:   map[string]zipPart{"xl/worksheets/sheet1.xml": textPart(sheetXML(textRow(1, "ID", "Name"), textRow(2, "1", "Smith & Sons")))},
			wantErr: `sheet "Customers": row 2: malformed XML: invalid character entity & (no semicolon)`, damaged: true,
		},
		{
			name:    "control character in a cell",
			parts:   map[string]zipPart{"xl/worksheets/sheet1.xml": textPart(sheetXML(textRow(1, "ID", "Name"), textRow(2, "1", "a\x0Bb"), textRow(3, "2", "c")))},
			wantErr: `row 2: malformed XML: illegal character code U+000B`, damaged: true,
		},
		{
			name:    "malformed shared string",
			parts:   map[string]zipPart{"xl/sharedStrings.xml": textPart(sstXML("Cork", "&nbsp;")), "xl/worksheets/sheet1.xml": sharedSheet("1")},
			wantErr: `shared strings, string 1: malformed XML: invalid character entity &nbsp;`, damaged: true,
		},
		{
			// A name the check lets through (it checks names as ASCII)
			// but encoding/xml refuses: excelize stops in row 2.
			name:    "XML excelize cannot read past",
			parts:   map[string]zipPart{"xl/worksheets/sheet1.xml": textPart(sheetXML(textRow(1, "ID", "Name"), `<row r="2"><c r="A2"><v>1</v><€/></c></row>`, textRow(3, "2", "c")))},
			wantErr: `sheet "Customers": the XML of the sheet cannot be read past row 2, but it has rows up to 3`, damaged: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeTestBook(t, tt.parts)
			rows, err := openAndRead(t, path, tt.opts)
			if err == nil {
				t.Fatalf("no error; rows %q", rows)
			}
			if !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), path+": ") {
				t.Errorf("error = %v\nwant it to start with the path and contain %q", err, tt.wantErr)
			}
			var le *LimitError
			switch {
			case tt.wantLimit != "":
				if !errors.As(err, &le) || le.Option != strings.Trim(tt.wantLimit, "-") || le.Row != tt.wantRow || le.Name != path {
					t.Errorf("error = %#v, want a *LimitError of %s at row %d", err, tt.wantLimit, tt.wantRow)
				}
			case errors.As(err, &le):
				t.Errorf("error = %#v, not a *LimitError", err)
			}
			if errors.Is(err, ErrDamaged) != tt.damaged {
				t.Errorf("errors.Is(err, ErrDamaged) = %v, want %v", !tt.damaged, tt.damaged)
			}
		})
	}
}

// TestXLSXSharedIndexPadded reads a shared-string reference padded with
// more white space than a short gathering bound kept: excelize trims it and
// reads string 1, so the check must not call it "not a number".
func TestXLSXSharedIndexPadded(t *testing.T) {
	path := writeTestBook(t, map[string]zipPart{"xl/sharedStrings.xml": textPart(sstXML("Cork", "Sligo")),
		"xl/worksheets/sheet1.xml": sharedSheet(strings.Repeat(" ", 100) + "1")})
	rows, err := openAndRead(t, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"1", "Cork"}, {"2", "Sligo"}}; !slices.EqualFunc(rows, want, slices.Equal) {
		t.Errorf("rows = %q, want %q", rows, want)
	}
}

// TestXLSXLargeSharedStringsIndexPastTheTable is the shared-string case
// where excelize, past 16 MiB of strings, reads them from a temporary file
// and shows a missing one as its index: "1100" would have been sent as an
// address.
func TestXLSXLargeSharedStringsIndexPastTheTable(t *testing.T) {
	const n = 1100 // 17.6 MB of 16 KiB strings
	sst := streamPart(func(w io.Writer) error {
		if _, err := io.WriteString(w, `<sst `+testNS+`>`); err != nil {
			return err
		}
		item := []byte(`<si><t>` + strings.Repeat("x", 16<<10) + `</t></si>`)
		for range n {
			if _, err := w.Write(item); err != nil {
				return err
			}
		}
		_, err := io.WriteString(w, `</sst>`)
		return err
	})
	path := writeTestBook(t, map[string]zipPart{"xl/sharedStrings.xml": sst, "xl/worksheets/sheet1.xml": sharedSheet(fmt.Sprint(n))})
	rows, err := openAndRead(t, path, Options{TmpDir: t.TempDir()})
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "row 3, column B (cell B3): shared string 1100 does not exist; the workbook has 1100") {
		t.Fatalf("error = %v; rows %q", err, rows)
	}
}

// TestXLSXHostileMemory opens, with the default limits, a workbook whose
// row is padded with 24 MiB of white space (a few KiB zipped): the error
// must come before anything holds the padding. Before the check, excelize's
// XML decoder held the whole run (a 1 GiB one took 2.1 GB and 23 s).
func TestXLSXHostileMemory(t *testing.T) {
	const pad = 24 << 20
	head := `<?xml version="1.0" encoding="UTF-8"?><worksheet ` + testNS + `><sheetData>` + textRow(1, "ID", "Town")
	path := writeTestBook(t, map[string]zipPart{
		"xl/worksheets/sheet1.xml": padded(head+`<row r="2"><c r="A2"><v>1</v></c>`, pad, `</row></sheetData></worksheet>`),
	})
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := openAndRead(t, path, Options{TmpDir: t.TempDir()})
	runtime.ReadMemStats(&after)
	var le *LimitError
	if !errors.As(err, &le) || le.Row != 2 || le.Option != "MaxRowSize" || le.Limit != defaultMaxRowSize {
		t.Fatalf("error = %v, want the row size limit at row 2", err)
	}
	// The scan's buffers and the zip's inflater: well under a MiB.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("opening allocated %d bytes, want under 4 MiB", alloc)
	}
}

// TestXLSXCheckFindsTheSheetPart reads a workbook whose sheets are not in
// the order of their parts, one of them named by an absolute target: the
// check must scan the part excelize reads.
func TestXLSXCheckFindsTheSheetPart(t *testing.T) {
	path := writeTestBook(t, map[string]zipPart{
		"xl/workbook.xml": textPart(`<workbook ` + testNS + ` xmlns:r="` + testRelNS + `"><sheets>` +
			`<sheet name="Customers" sheetId="1" r:id="rId2"/><sheet name="Other" sheetId="2" r:id="rId1"/></sheets></workbook>`),
		"xl/_rels/workbook.xml.rels": textPart(`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="` + testRelNS + `/worksheet" Target="worksheets/sheet1.xml"/>` +
			`<Relationship Id="rId2" Type="` + testRelNS + `/worksheet" Target="/xl/worksheets/sheet2.xml"/>` +
			`<Relationship Id="rId3" Type="` + testRelNS + `/sharedStrings" Target="sharedStrings.xml"/></Relationships>`),
		"xl/sharedStrings.xml":     textPart(sstXML("Cork", "Sligo")),
		"xl/worksheets/sheet1.xml": sharedSheet("5"),
		"xl/worksheets/sheet2.xml": sharedSheet("1"),
	})
	rows, err := openAndRead(t, path, Options{})
	if err != nil || len(rows) != 2 || rows[1][1] != "Sligo" {
		t.Fatalf("Customers: rows %q, error %v", rows, err)
	}
	if _, err := openAndRead(t, path, Options{Sheet: "other"}); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), `sheet "Other": row 3`) {
		t.Fatalf("Other: error = %v, want the missing shared string of its row 3", err)
	}
}

func TestWorksheetPath(t *testing.T) {
	tests := []struct{ wb, target, want string }{
		{"xl/workbook.xml", "worksheets/sheet1.xml", "xl/worksheets/sheet1.xml"},
		{"xl/workbook.xml", "/xl/worksheets/sheet2.xml", "xl/worksheets/sheet2.xml"},
		{"xl/workbook.xml", "../sheet.xml", "sheet.xml"},
		{"workbook.xml", "sheet.xml", "sheet.xml"},
		{"", "worksheets/sheet1.xml", "worksheets/sheet1.xml"},
	}
	for _, tt := range tests {
		if got := worksheetPath(tt.wb, tt.target); got != tt.want {
			t.Errorf("worksheetPath(%q, %q) = %q, want %q", tt.wb, tt.target, got, tt.want)
		}
	}
}

// TestXLSXCheckAcceptsRealExports reads what real writers produce: the
// generated export of the benchmarks (shared strings, a dimension) and a
// sheet with the parts Excel adds around the rows.
func TestXLSXCheckAcceptsRealExports(t *testing.T) {
	path := filepath.Join(t.TempDir(), "export.xlsx")
	writeBenchXLSX(t, path, 2000)
	r, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := readAll(t, r)
	r.Close()
	if err != nil || len(rows) != 2000 {
		t.Fatalf("read %d rows, error %v", len(rows), err)
	}

	excel := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\r\n" +
		`<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="` + testRelNS + `" ` +
		`xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" mc:Ignorable="x14ac xr xr2 xr3" ` +
		`xmlns:x14ac="http://schemas.microsoft.com/office/spreadsheetml/2009/9/ac" xr:uid="{00000000-0001-0000-0000-000000000000}">` +
		`<dimension ref="A1:B3"/><sheetViews><sheetView tabSelected="1" workbookViewId="0"><selection activeCell="B3" sqref="B3"/></sheetView></sheetViews>` +
		`<sheetFormatPr defaultRowHeight="15" x14ac:dyDescent="0.25"/><cols><col min="1" max="1" width="9.140625" customWidth="1"/></cols>` +
		`<sheetData><row r="1" spans="1:2" x14ac:dyDescent="0.25"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>` +
		`<row r="2" spans="1:2" x14ac:dyDescent="0.25"><c r="A2"><v>1</v></c><c r="B2" t="s"><v>2</v></c></row>` +
		`<row r="3" spans="1:2" x14ac:dyDescent="0.25"><c r="A3"><v>2</v></c><c r="B3" t="str"><f>UPPER(B2)</f><v>D&amp;B</v></c></row></sheetData>` +
		`<pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" footer="0.3"/><pageSetup orientation="portrait" r:id="rId1"/></worksheet>`
	sst := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\r\n" +
		`<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="3" uniqueCount="3"><si><t>ID</t></si><si><t>Town</t></si>` +
		`<si><r><rPr><b/><sz val="11"/></rPr><t>D&amp;</t></r><r><t xml:space="preserve">B </t></r><phoneticPr fontId="1"/></si></sst>`
	path = writeTestBook(t, map[string]zipPart{"xl/worksheets/sheet1.xml": textPart(excel), "xl/sharedStrings.xml": textPart(sst)})
	got, err := openAndRead(t, path, Options{})
	if want := [][]string{{"1", "D&B "}, {"2", "D&B"}}; err != nil || !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("rows %q, error %v; want %q", got, err, want)
	}
}

// FuzzXLSXSheetCheck runs the sheet check over any XML: it must not panic,
// and what it passes as whole must name a last row no lower than any row
// number seen.
func FuzzXLSXSheetCheck(f *testing.F) {
	for _, s := range []string{
		sheetXML(textRow(1, "a", "b"), textRow(2, "1", "2")),
		`<worksheet><dimension ref="A1:B2"/><sheetData><row><c t="s"><v>1</v></c></row><row r="5"/></sheetData></worksheet>`,
		`<worksheet><sheetData><row r="2"><c r="A2" t="s"><v> 0 </v></c></row>`,
		`<worksheet/>`,
	} {
		f.Add([]byte(s), 2)
	}
	f.Fuzz(func(t *testing.T, in []byte, sst int) {
		c := &pkgChecker{name: "fuzz", lim: limitsOf(Options{MaxRowSize: 4096, MaxRowCells: 64}), textLimit: minTextLimit}
		lens := make([]uint32, min(max(sst, 0), 1000))
		res, err := c.scanSheetXML(bytes.NewReader(in), "sheet1.xml", "S", lens)
		if err != nil {
			return
		}
		if res.lastRow < 0 || res.lastRow > 1048576 {
			t.Fatalf("last row %d", res.lastRow)
		}
	})
}

// FuzzCellTyper reads cell types from any sheet XML: it must not panic,
// and every typed cell holds a number.
func FuzzCellTyper(f *testing.F) {
	for _, s := range []string{
		sheetXML(textRow(1, "a", "b"), `<row r="2"><c r="A2" s="1"><v>12.5</v></c><c><v>7</v></c><c t="s"><v>0</v></c></row>`),
		`<worksheet><sheetData><row r="3"><c r="XFD3"><v>1</v></c></row><row/></sheetData></worksheet>`,
		`<worksheet><sheetData><row><c><v>1e400</v></c><c s="99999999999"><v>-0</v></c><c><v>NaN</v></c></row>`,
	} {
		f.Add([]byte(s))
	}
	book := excelize.NewFile()
	defer book.Close()
	f.Fuzz(func(t *testing.T, in []byte) {
		ct := &cellTyper{f: book, s: newXMLScanner(bytes.NewReader(in), 4096), styles: make(map[int]record.CellType)}
		for n := 1; n <= 8; n++ {
			types, err := ct.types(n)
			if err != nil {
				return
			}
			for _, c := range types {
				if c.Kind == record.KindText {
					continue
				}
				if f, err := strconv.ParseFloat(c.Value, 64); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
					t.Fatalf("row %d: typed cell %+v is not a number", n, c)
				}
			}
		}
	})
}
