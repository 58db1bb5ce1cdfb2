package readers

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/internal/golden"
	"github.com/xuri/excelize/v2"
)

func TestInspect(t *testing.T) {
	dir := t.TempDir()
	book := buildBook(t, dir)
	tests := []struct {
		name   string
		path   string
		opts   Options
		spec   MappingSpec
		sample int
		golden string
	}{
		{name: "crm csv", path: "testdata/crm.csv", sample: 10, golden: "inspect_crm.golden"},
		{name: "crm csv with default country", path: "testdata/crm.csv", spec: MappingSpec{DefaultCountry: "IE", Language: "en"}, sample: 2, golden: "inspect_crm_default.golden"},
		{name: "xlsx", path: book, spec: MappingSpec{Region: "county", Postcode: "eircode"}, sample: 5, golden: "inspect_xlsx.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Inspect(context.Background(), tt.path, tt.opts, tt.spec, tt.sample)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := rep.Print(&out); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tt.golden, bytes.ReplaceAll(out.Bytes(), []byte(dir), []byte("TMP")))
		})
	}
}

func TestInspectErrors(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		spec    MappingSpec
		wantErr string
	}{
		{name: "mapping", path: "testdata/crm.csv", spec: MappingSpec{City: "Village"}, wantErr: `--city-col "Village": no such column`},
		{name: "open", path: "testdata/none.csv", wantErr: "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Inspect(context.Background(), tt.path, Options{}, tt.spec, 3)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestInspectSampleData checks the dry run on the bundled sample exports:
// the mapping is the expected one, the counts agree with an independent
// count made with encoding/csv, and the CSV and the XLSX report alike.
func TestInspectSampleData(t *testing.T) {
	csvPath := filepath.Join("..", "sample_data", "customers.csv")
	xlsxPath := filepath.Join("..", "sample_data", "customers.xlsx")
	for _, p := range []string{csvPath, xlsxPath} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s: not there yet", p)
		}
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	all, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := make(map[string]int)
	for i, h := range all[0] {
		col[strings.TrimPrefix(h, "\uFEFF")] = i
	}
	var rows, noAddress, noCountry int
	for _, r := range all[1:] {
		rows++
		blank := func(name string) bool { return strings.TrimSpace(r[col[name]]) == "" }
		switch {
		case blank("Address 1") && blank("Address 2") && blank("Postcode"):
			noAddress++
		case blank("Country"):
			noCountry++
		}
	}
	wantCols := map[string]string{"line1": "Address 1", "line2": "Address 2", "city": "Town", "region": "County",
		"postcode": "Postcode", "country": "Country", "id": "Customer ID"}

	var reports []*Report
	for _, p := range []string{csvPath, xlsxPath} {
		rep, err := Inspect(context.Background(), p, Options{}, MappingSpec{}, 5)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rep.Columns, wantCols) {
			t.Errorf("%s: mapping %v, want %v", p, rep.Columns, wantCols)
		}
		if rep.Rows != rows || rep.NoAddress != noAddress || rep.NoCountry != noCountry {
			t.Errorf("%s: %d rows, %d no address, %d no country; want %d, %d, %d",
				p, rep.Rows, rep.NoAddress, rep.NoCountry, rows, noAddress, noCountry)
		}
		reports = append(reports, rep)
	}
	if !reflect.DeepEqual(reports[0].Sample, reports[1].Sample) {
		t.Errorf("CSV and XLSX samples differ:\n%+v\n%+v", reports[0].Sample, reports[1].Sample)
	}
}

func TestInspectTitledWorkbook(t *testing.T) {
	path := writeSheet(t, [][]any{
		{"Customer export – generated 01/06/2024"},
		nil,
		{"Full Address"},
		{"1 Park Row, Leeds, LS1 0QP, UK"},
	})
	rep, err := Inspect(context.Background(), path, Options{}, MappingSpec{DefaultCountry: "IE"}, 5)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.Print(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"header:      row 3 (detected; 1 title row(s) above it skipped",
		`addressLine=["1 Park Row, Leeds, LS1 0QP"] country="GB"`,
		"a country name ending the address is used",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestMapperForNamesOtherSheets(t *testing.T) {
	f := excelize.NewFile()
	if err := f.SetSheetRow("Sheet1", "A1", &[]any{"Notes"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.NewSheet("Customers"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "two.xlsx")
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	_, err := Inspect(context.Background(), path, Options{}, MappingSpec{DefaultCountry: "IE"}, 1)
	for _, want := range []string{`sheet "Sheet1" was read; the workbook also has "Customers": pass --sheet NAME`, "--header-row N"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error = %v, want it to hold %q", err, want)
		}
	}
}

// TestMapperForNamesTheDelimiter: a --delimiter that is not the file's
// reads each header as one column; the error says so.
func TestMapperForNamesTheDelimiter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(path, []byte("Address 1,Town,Country\n1 Main St,Cork,IE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Inspect(context.Background(), path, Options{Delimiter: ';'}, MappingSpec{}, 1)
	if want := `the header is one column holding ',': pass --delimiter`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error = %v, want it to hold %q", err, want)
	}
}

func TestCheckPath(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "in.csv")
	xlsPath := filepath.Join(dir, "old.xls")
	for _, p := range []string{csvPath, xlsPath} {
		if err := os.WriteFile(p, []byte("a\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		path string
		is   error
		msg  string
	}{
		{path: csvPath},
		{path: "-"},
		{path: xlsPath, is: ErrUnsupportedFormat, msg: ".xls (Excel 97-2003) cannot be read; save it as .xlsx or CSV"},
		{path: filepath.Join(dir, "missing.xls"), is: ErrUnsupportedFormat, msg: ".xls"},
		{path: filepath.Join(dir, "missing.csv"), is: fs.ErrNotExist, msg: "no such file"},
	}
	for _, tt := range tests {
		err := CheckPath(tt.path)
		if (tt.is == nil) != (err == nil) || (tt.is != nil && !errors.Is(err, tt.is)) || (err != nil && !strings.Contains(err.Error(), tt.msg)) {
			t.Errorf("CheckPath(%s) = %v, want %v holding %q", tt.path, err, tt.is, tt.msg)
		}
	}
}
