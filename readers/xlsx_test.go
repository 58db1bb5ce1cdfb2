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

func TestLastRowOf(t *testing.T) {
	tests := []struct {
		ref  string
		want int64
	}{
		{"A1:K2001", 2001},
		{"B3:AA17", 17},
		{"A1", -1},
		{"", -1},
		{"A1:B", -1},
		{"A1:B0", -1},
		{"A1:B99999999999999999999", -1},
	}
	for _, tt := range tests {
		if got := lastRowOf(tt.ref); got != tt.want {
			t.Errorf("lastRowOf(%q) = %d, want %d", tt.ref, got, tt.want)
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

func TestXLSXEmptySheet(t *testing.T) {
	f := excelize.NewFile()
	p := filepath.Join(t.TempDir(), "empty.xlsx")
	if err := f.SaveAs(p); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err := Open(context.Background(), p, Options{})
	if err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Fatalf("error = %v", err)
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

func TestLastColOf(t *testing.T) {
	tests := []struct {
		ref  string
		want int
	}{
		{"A1:K2001", 11},
		{"B3:AA17", 27},
		{"a1:d3", 4},
		{"A1", -1},
		{"", -1},
		{"A1:7", -1},
		{"A1:B", -1},
		{"A1:XFC9", 16383},
		{"A1:XFD9", -1},
		{"A1:ZZZZ9", -1},
	}
	for _, tt := range tests {
		if got := lastColOf(tt.ref); got != tt.want {
			t.Errorf("lastColOf(%q) = %d, want %d", tt.ref, got, tt.want)
		}
	}
}
