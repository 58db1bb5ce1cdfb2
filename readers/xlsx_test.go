package readers

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/xuri/excelize/v2"

	"github.com/addrclean/addrclean/record"
)

// buildBook writes a workbook exercising what CRM exports contain: text with
// leading zeros, long numbers, formatted numbers and dates, trailing empty
// cells, an empty row, a long row, a multi-line cell, a second sheet and
// formatted but empty rows at the end.
func buildBook(t testing.TB, dir string) string {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.SetSheetName("Sheet1", "Customers"))
	_, err := f.NewSheet("Other")
	must(err)
	set := func(sheet, cell string, v any) { t.Helper(); must(f.SetCellValue(sheet, cell, v)) }
	dateFmt := "dd/mm/yyyy"
	dateStyle, err := f.NewStyle(&excelize.Style{CustomNumFmt: &dateFmt})
	must(err)
	zipFmt := "00000"
	zipStyle, err := f.NewStyle(&excelize.Style{CustomNumFmt: &zipFmt})
	must(err)
	fill, err := f.NewStyle(&excelize.Style{Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"FFFF00"}}})
	must(err)

	// Row 1 is blank: the header is the first row with text.
	must(f.SetSheetRow("Customers", "A2", &[]any{"ID", "Address 1", "Address 2", "Town", "County", "Eircode", "Country", "Phone", "Joined", "Zip"}))
	must(f.SetSheetRow("Customers", "A3", &[]any{"007", "1 Main St", "", "Cork", "", "T12 AB34", "Ireland", 353871234567, nil, 2345}))
	set("Customers", "I3", time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC))
	must(f.SetCellStyle("Customers", "I3", "I3", dateStyle))
	must(f.SetCellStyle("Customers", "J3", "J3", zipStyle))
	must(f.SetSheetRow("Customers", "A4", &[]any{"8", "2 High St"}))
	// Row 5 is empty.
	must(f.SetSheetRow("Customers", "A6", &[]any{"9", "Apt 1\nBlock B", nil, "Sligo", nil, nil, "IE", nil, nil, nil, "extra"}))
	set("Customers", "A7", 12.5)
	// Rows 9 and 10 carry formatting only.
	must(f.SetCellStyle("Customers", "A9", "J10", fill))

	must(f.SetSheetRow("Other", "A1", &[]any{"x", "y"}))
	must(f.SetSheetRow("Other", "A2", &[]any{"1", "2"}))

	p := filepath.Join(dir, "book.xlsx")
	must(f.SaveAs(p))
	return p
}

func TestXLSX(t *testing.T) {
	path := buildBook(t, t.TempDir())
	header := []string{"ID", "Address 1", "Address 2", "Town", "County", "Eircode", "Country", "Phone", "Joined", "Zip"}
	tests := []struct {
		name       string
		sheet      string
		wantSheet  string
		wantHeader []string
		wantRows   [][]string
		wantLines  []int
		wantErr    string
	}{
		{
			name:       "first sheet by default",
			wantSheet:  "Customers",
			wantHeader: header,
			wantRows: [][]string{
				{"007", "1 Main St", "", "Cork", "", "T12 AB34", "Ireland", "353871234567", "05/03/2024", "02345"},
				{"8", "2 High St", "", "", "", "", "", "", "", ""},
				{"9", "Apt 1\nBlock B", "", "Sligo", "", "", "IE", "", "", "", "extra"},
				{"12.5", "", "", "", "", "", "", "", "", ""},
			},
			wantLines: []int{3, 4, 6, 7},
		},
		{
			name:       "sheet by name",
			sheet:      "Other",
			wantSheet:  "Other",
			wantHeader: []string{"x", "y"},
			wantRows:   [][]string{{"1", "2"}},
			wantLines:  []int{2},
		},
		{
			name:       "sheet name ignores case",
			sheet:      "OTHER",
			wantSheet:  "Other",
			wantHeader: []string{"x", "y"},
			wantRows:   [][]string{{"1", "2"}},
			wantLines:  []int{2},
		},
		{name: "unknown sheet lists the sheets", sheet: "Nope", wantErr: `no sheet named "Nope"; the sheets are: "Customers", "Other"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Open(context.Background(), path, Options{Sheet: tt.sheet})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rows, lines, err := readAll(t, r)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Header(); !reflect.DeepEqual(got, tt.wantHeader) {
				t.Errorf("header = %q, want %q", got, tt.wantHeader)
			}
			if !reflect.DeepEqual(rows, tt.wantRows) {
				t.Errorf("rows =\n%q\nwant\n%q", rows, tt.wantRows)
			}
			if !reflect.DeepEqual(lines, tt.wantLines) {
				t.Errorf("lines = %v, want %v", lines, tt.wantLines)
			}
			info := r.(Describer).Info()
			if info.Format != FormatXLSX || info.Sheet != tt.wantSheet || len(info.Sheets) != 2 {
				t.Errorf("info = %+v", info)
			}
			if err := r.Close(); err != nil {
				t.Error(err)
			}
			if err := r.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if _, err := r.Next(context.Background()); err == nil {
				t.Error("Next after Close succeeded")
			}
		})
	}
}

func TestXLSXSkippedAndLongRowsAreReported(t *testing.T) {
	path := buildBook(t, t.TempDir())
	var logs bytes.Buffer
	r, err := Open(context.Background(), path, Options{Logger: zerolog.New(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, _, err := readAll(t, r); err != nil {
		t.Fatal(err)
	}
	if n := r.(*XLSXReader).SkippedRows(); n != 4 {
		t.Errorf("skipped %d rows, want 4 (rows 5 and 8, and formatted rows 9 and 10)", n)
	}
	if n := strings.Count(logs.String(), "more cells than the header"); n != 1 {
		t.Errorf("%d long-row warnings, want 1:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "skipped empty rows") {
		t.Errorf("skipped rows not logged:\n%s", logs.String())
	}
}

func TestXLSXRowCount(t *testing.T) {
	dir := t.TempDir()
	path := buildBook(t, dir)
	sized := filepath.Join(dir, "sized.xlsx")
	rewriteZip(t, path, sized, setDimension("A1:J10"))
	tests := []struct {
		path string
		want int64
	}{
		// excelize writes "A1": the size is unknown.
		{path, -1},
		// Rows up to 10 (formatted rows included) with the header on row 2.
		{sized, 8},
	}
	for _, tt := range tests {
		r, err := Open(context.Background(), tt.path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if n := r.(RowCounter).RowCount(); n != tt.want {
			t.Errorf("%s: RowCount = %d, want %d", filepath.Base(tt.path), n, tt.want)
		}
		r.Close()
	}
}

// setDimension returns a rewriteZip edit that sets the first sheet's
// dimension, as Excel writes it.
func setDimension(ref string) func(string, []byte) []byte {
	return func(name string, data []byte) []byte {
		if name != "xl/worksheets/sheet1.xml" {
			return data
		}
		return bytes.Replace(data, []byte(`<dimension ref="A1">`), []byte(`<dimension ref="`+ref+`">`), 1)
	}
}

func TestDimensionEnd(t *testing.T) {
	tests := []struct {
		ref     string
		wantRow int64
		wantCol int
	}{
		{"A1:K2001", 2001, 11},
		{"B3:AA17", 17, 27},
		{"a1:d3", 3, 4},
		{"A1:$C$5", 5, 3},
		{"A1:XFC9", 9, 16383},
		{"A1:XFD9", 9, -1},
		{"A1:B1048576", 1048576, 2},
		// Hostile or partial references give nothing.
		{"A1", -1, -1},
		{"", -1, -1},
		{":", -1, -1},
		{"A1:7", -1, -1},
		{"A1:B", -1, -1},
		{"A1:B0", -1, -1},
		{"A1:B-3", -1, -1},
		{"A1:B1048577", -1, -1},
		{"A1:B99999999999999999999", -1, -1},
		{"A1:ZZZZ9", -1, -1},
		{"A1: B3", -1, -1},
	}
	for _, tt := range tests {
		if row, col := dimensionEnd(tt.ref); row != tt.wantRow || col != tt.wantCol {
			t.Errorf("dimensionEnd(%q) = %d, %d; want %d, %d", tt.ref, row, col, tt.wantRow, tt.wantCol)
		}
	}
}

// rewriteZip copies the zip at src to dst, passing each entry through edit.
func rewriteZip(t *testing.T, src, dst string, edit func(name string, data []byte) []byte) {
	t.Helper()
	zr, err := zip.OpenReader(src)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(f.Name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(edit(f.Name, data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestXLSXDamaged(t *testing.T) {
	dir := t.TempDir()
	good := buildBook(t, dir)
	tests := []struct {
		name    string
		edit    func(name string, data []byte) []byte
		opts    Options
		wantErr string
		wantLog string
	}{
		{
			// This used to lose rows 6 to 10 with only a warning.
			name: "sheet cut short",
			edit: func(name string, data []byte) []byte {
				data = setDimension("A1:J10")(name, data)
				if name == "xl/worksheets/sheet1.xml" {
					i := bytes.Index(data, []byte(`<row r="6"`))
					return data[:i+12]
				}
				return data
			},
			wantErr: `the file is damaged: sheet "Customers": the XML of the sheet ends in the middle of row 6`,
		},
		{
			// Whole XML that stops short of the dimension is more likely
			// a writer's slip: a warning.
			name:    "sheet shorter than its dimension",
			edit:    setDimension("A1:J30"),
			wantLog: "may be damaged",
		},
		{
			name:    "unzip limit",
			edit:    func(_ string, data []byte) []byte { return data },
			opts:    Options{MaxUnzipSize: 1000},
			wantErr: "the workbook: the unpacked size is larger than 1000 bytes",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".xlsx")
			rewriteZip(t, good, p, tt.edit)
			var logs bytes.Buffer
			tt.opts.Logger = zerolog.New(&logs)
			r, err := Open(context.Background(), p, tt.opts)
			if err == nil {
				defer r.Close()
				_, _, err = readAll(t, r)
			}
			if tt.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
			if !strings.Contains(logs.String(), tt.wantLog) {
				t.Errorf("logs do not contain %q:\n%s", tt.wantLog, logs.String())
			}
		})
	}
}

// TestXLSXEmptySheet: an empty first sheet is an error, and when the
// workbook has other sheets it says so and how to read one.
func TestXLSXEmptySheet(t *testing.T) {
	for _, tt := range []struct {
		name     string
		other    bool
		want     string
		wantNote bool
	}{
		{name: "the only sheet", want: `sheet "Sheet1" is empty`},
		{name: "data on another sheet", other: true, want: `sheet "Sheet1" is empty`, wantNote: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := excelize.NewFile()
			if tt.other {
				if _, err := f.NewSheet("Data"); err != nil {
					t.Fatal(err)
				}
				if err := f.SetSheetRow("Data", "A1", &[]any{"Street", "Country"}); err != nil {
					t.Fatal(err)
				}
			}
			p := filepath.Join(t.TempDir(), "empty.xlsx")
			if err := f.SaveAs(p); err != nil {
				t.Fatal(err)
			}
			f.Close()
			_, err := Open(context.Background(), p, Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want %q", err, tt.want)
			}
			if note := `the workbook also has "Data": pass --sheet NAME`; strings.Contains(err.Error(), note) != tt.wantNote {
				t.Errorf("error = %v; want the note %q: %v", err, note, tt.wantNote)
			}
		})
	}
}

func TestXLSXContextCancelled(t *testing.T) {
	r, err := Open(context.Background(), buildBook(t, t.TempDir()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Next = %v", err)
	}
}

// TestXLSXUnnamedTrailingColumn reads a sheet whose last column has data but
// no header cell. excelize leaves trailing empty cells out of the header
// row, so the header is widened to the sheet's declared dimension; cells
// past even that are kept, with a warning, as in CSV.
func TestXLSXUnnamedTrailingColumn(t *testing.T) {
	header := []any{"id", "name", "city"}
	rows := [][]any{
		{"1", "Mary", "Cork", "note-in-unnamed-col"},
		{"2", "Pat"},
		{"3", "Joe", "Sligo", nil, nil, "far-out"},
	}
	tests := []struct {
		name       string
		dimension  string // "" leaves excelize's "A1"
		rows       int    // how many of rows the sheet has
		wantHeader []string
		wantCells  [][]string
		wantLong   int // long-row warnings
		wantInfo   bool
	}{
		{
			name:       "dimension names the unnamed column",
			dimension:  "A1:D3",
			rows:       2,
			wantHeader: []string{"id", "name", "city", ""},
			wantCells:  [][]string{{"1", "Mary", "Cork", "note-in-unnamed-col"}, {"2", "Pat", "", ""}},
			wantInfo:   true,
		},
		{
			name:       "dimension wider than every row: trailing empty columns",
			dimension:  "A1:E3",
			rows:       2,
			wantHeader: []string{"id", "name", "city", "", ""},
			wantCells:  [][]string{{"1", "Mary", "Cork", "note-in-unnamed-col", ""}, {"2", "Pat", "", "", ""}},
			wantInfo:   true,
		},
		{
			name:       "a row wider than the dimension keeps its cells",
			dimension:  "A1:D4",
			rows:       3,
			wantHeader: []string{"id", "name", "city", ""},
			wantCells: [][]string{
				{"1", "Mary", "Cork", "note-in-unnamed-col"}, {"2", "Pat", "", ""},
				{"3", "Joe", "Sligo", "", "", "far-out"},
			},
			wantLong: 1,
			wantInfo: true,
		},
		{
			name:       "no dimension: the wider row keeps its cells",
			rows:       2,
			wantHeader: []string{"id", "name", "city"},
			wantCells:  [][]string{{"1", "Mary", "Cork", "note-in-unnamed-col"}, {"2", "Pat", ""}},
			wantLong:   1,
		},
		{
			name:       "dimension narrower than the header",
			dimension:  "A1:B3",
			rows:       2,
			wantHeader: []string{"id", "name", "city"},
			wantCells:  [][]string{{"1", "Mary", "Cork", "note-in-unnamed-col"}, {"2", "Pat", ""}},
			wantLong:   1,
		},
		{
			name:       "whole-row dimension is ignored",
			dimension:  "A1:XFD3",
			rows:       2,
			wantHeader: []string{"id", "name", "city"},
			wantCells:  [][]string{{"1", "Mary", "Cork", "note-in-unnamed-col"}, {"2", "Pat", ""}},
			wantLong:   1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			f := excelize.NewFile()
			if err := f.SetSheetRow("Sheet1", "A1", &header); err != nil {
				t.Fatal(err)
			}
			for i, row := range rows[:tt.rows] {
				cell, _ := excelize.CoordinatesToCellName(1, i+2)
				if err := f.SetSheetRow("Sheet1", cell, &row); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(dir, "built.xlsx")
			if err := f.SaveAs(path); err != nil {
				t.Fatal(err)
			}
			f.Close()
			if tt.dimension != "" {
				sized := filepath.Join(dir, "sized.xlsx")
				rewriteZip(t, path, sized, setDimension(tt.dimension))
				path = sized
			}

			var logs bytes.Buffer
			r, err := Open(context.Background(), path, Options{Logger: zerolog.New(&logs)})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if got := r.Header(); !reflect.DeepEqual(got, tt.wantHeader) {
				t.Errorf("Header = %q, want %q", got, tt.wantHeader)
			}
			got, _, err := readAll(t, r)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.wantCells) {
				t.Errorf("cells = %q, want %q", got, tt.wantCells)
			}
			if n := strings.Count(logs.String(), "more cells than the header; the extra cells are kept"); n != tt.wantLong {
				t.Errorf("%d long-row warnings, want %d:\n%s", n, tt.wantLong, logs.String())
			}
			if info := strings.Contains(logs.String(), "read as unnamed"); info != tt.wantInfo {
				t.Errorf("widened header logged = %v, want %v:\n%s", info, tt.wantInfo, logs.String())
			}
		})
	}
}

// writeSheet writes a one-sheet workbook with rows from A1 down (nil rows
// are left blank) and returns its path.
func writeSheet(t *testing.T, rows [][]any) string {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	for i, row := range rows {
		if row == nil {
			continue
		}
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow("Sheet1", cell, &row); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "book.xlsx")
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestXLSXHeaderRow(t *testing.T) {
	titled := [][]any{
		{"Customer export – generated 01/06/2024"},
		nil,
		{"Report for", "June"},
		{"ID", "Address", "Town", "Country"},
		{"1", "1 Main St", "Cork", "IE"},
		nil,
		{"2", "Flat", "Sligo", "IE"},
	}
	unfamiliar := [][]any{
		{"Ref", "Rue", "Ville"},
		{"1", "Flat", "Cork"},
		{"2", "3 Main St", "Sligo"},
	}
	tests := []struct {
		name       string
		rows       [][]any
		headerRow  int
		wantHeader []string
		wantRow    int // Info.HeaderRow
		detected   bool
		wantLines  []int // Row.Line of the data rows
		wantErr    string
	}{
		{name: "title rows are passed over", rows: titled, wantHeader: []string{"ID", "Address", "Town", "Country"},
			wantRow: 4, detected: true, wantLines: []int{5, 7}},
		{name: "--header-row", rows: titled, headerRow: 3, wantHeader: []string{"Report for", "June"},
			wantRow: 3, wantLines: []int{4, 5, 7}},
		{name: "a data row naming a known word is not the header", rows: unfamiliar,
			wantHeader: []string{"Ref", "Rue", "Ville"}, wantRow: 1, wantLines: []int{2, 3}},
		{name: "--header-row past the end", rows: unfamiliar, headerRow: 9, wantErr: "--header-row 9: the sheet has only 3 rows"},
		{name: "--header-row on a blank row", rows: titled, headerRow: 2, wantErr: "--header-row 2: the row is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Open(context.Background(), writeSheet(t, tt.rows), Options{HeaderRow: tt.headerRow})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if got := r.Header(); !reflect.DeepEqual(got, tt.wantHeader) {
				t.Errorf("Header() = %q, want %q", got, tt.wantHeader)
			}
			info := r.(Describer).Info()
			if info.HeaderRow != tt.wantRow || info.HeaderDetected != tt.detected {
				t.Errorf("HeaderRow, HeaderDetected = %d, %v; want %d, %v", info.HeaderRow, info.HeaderDetected, tt.wantRow, tt.detected)
			}
			var lines []int
			for {
				row, err := r.Next(context.Background())
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if row.Num != len(lines)+1 {
					t.Errorf("row %d has Num %d", len(lines)+1, row.Num)
				}
				lines = append(lines, row.Line)
			}
			if !reflect.DeepEqual(lines, tt.wantLines) {
				t.Errorf("lines = %v, want %v", lines, tt.wantLines)
			}
		})
	}
}

// Numbers and dates became text in XLSX outputs: with CellTypes the reader
// tells which cells are numbers, their stored value and number format.
func TestXLSXCellTypes(t *testing.T) {
	path := buildBook(t, t.TempDir())
	for _, typed := range []bool{false, true} {
		r, err := Open(context.Background(), path, Options{CellTypes: typed})
		if err != nil {
			t.Fatal(err)
		}
		var rows []record.Row
		for {
			row, err := r.Next(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, row)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if !typed {
			for _, row := range rows {
				if row.Types != nil {
					t.Errorf("row %d has types without CellTypes: %v", row.Num, row.Types)
				}
			}
			continue
		}
		if len(rows) != 4 {
			t.Fatalf("%d rows", len(rows))
		}
		typ := func(row, col int) record.CellType {
			if ts := rows[row].Types; col < len(ts) {
				return ts[col]
			}
			return record.CellType{}
		}
		tests := []struct {
			row, col int
			want     record.CellType
		}{
			{0, 0, record.CellType{}}, // "007" is text
			{0, 1, record.CellType{}},
			{0, 7, record.CellType{Kind: record.KindNumber, Value: "353871234567"}},
			{0, 8, record.CellType{Kind: record.KindDate, Value: "45356", CustomFmt: "dd/mm/yyyy"}},
			{0, 9, record.CellType{Kind: record.KindNumber, Value: "2345", CustomFmt: "00000"}},
			{3, 0, record.CellType{Kind: record.KindNumber, Value: "12.5"}},
		}
		for _, tt := range tests {
			if got := typ(tt.row, tt.col); got != tt.want {
				t.Errorf("row %d col %d (%q): type %+v, want %+v", tt.row+1, tt.col, rows[tt.row].Cells[tt.col], got, tt.want)
			}
		}
		if rows[1].Types != nil {
			t.Errorf("a row of text has types %v", rows[1].Types)
		}
	}
}

// TestCellTyperJoinsValue reads a cell value as encoding/xml, and so
// excelize, does: the text around comments, processing instructions and
// CDATA sections joined, the text of an element inside left out.
func TestCellTyperJoinsValue(t *testing.T) {
	book := excelize.NewFile()
	defer book.Close()
	for _, v := range []string{"15", "1<!-- -->5", "1<?x y?>5", "1<![CDATA[5]]>", "<![CDATA[15]]>", "1<x>9</x>5"} {
		in := `<worksheet><sheetData><row r="1"><c r="A1"><v>` + v + `</v></c></row></sheetData></worksheet>`
		ct := &cellTyper{f: book, s: newXMLScanner(strings.NewReader(in), 4096), styles: make(map[int]record.CellType)}
		types, err := ct.types(1)
		if err != nil {
			t.Fatalf("<v>%s</v>: %v", v, err)
		}
		if len(types) != 1 || types[0].Value != "15" {
			t.Errorf("<v>%s</v>: types %+v, want the number 15", v, types)
		}
	}
}

func TestIsDateFormat(t *testing.T) {
	tests := []struct {
		id   int
		code string
		want bool
	}{
		{0, "", false}, {14, "", true}, {22, "", true}, {2, "", false}, {49, "", false},
		{0, "dd/mm/yyyy", true}, {0, "[h]:mm", true}, {0, "0.00", false}, {0, `0 "days"`, false},
		{0, "[Red]0.00", false}, {0, `\d0`, false}, {0, "#,##0.00 [$€-1809]", false}, {0, "General", false},
	}
	for _, tt := range tests {
		if got := isDateFormat(tt.id, tt.code); got != tt.want {
			t.Errorf("isDateFormat(%d, %q) = %v, want %v", tt.id, tt.code, got, tt.want)
		}
	}
}
