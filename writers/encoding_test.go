package writers

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/record"
	"github.com/rs/zerolog"
	"github.com/xuri/excelize/v2"
)

// CSV for Excel users: a UTF-8 byte-order mark on request, or
// windows-1252 with '?' for what it lacks (and a warning counting them).
func TestCSVBOMAndEncoding(t *testing.T) {
	header := []string{"Name", "Town"}
	res := Result{Row: 1, Cells: []string{"Seán Ó Súilleabháin", "Łódź €"}, Err: "no address"}
	tests := []struct {
		name     string
		opts     Options
		prefix   string // the file starts with it
		contains string
		warn     string
	}{
		{name: "utf-8", opts: Options{}, prefix: "Name,Town", contains: "Seán Ó Súilleabháin,Łódź €"},
		{name: "bom", opts: Options{BOM: true}, prefix: "\xEF\xBB\xBFName,Town", contains: "Seán"},
		{name: "windows-1252", opts: Options{Encoding: "windows-1252"}, prefix: "Name,Town",
			contains: "Se\xe1n \xd3 S\xfailleabh\xe1in,?\xf3d? \x80", warn: `"characters":2`},
		{name: "cp1252 alias, no BOM in it", opts: Options{Encoding: "cp1252", BOM: true}, prefix: "Name,Town",
			contains: "Se\xe1n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			tt.opts.Logger = zerolog.New(&logs)
			path := filepath.Join(t.TempDir(), "out.csv")
			w, err := NewEnriched(path, header, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(context.Background(), res); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(got, []byte(tt.prefix)) || !bytes.Contains(got, []byte(tt.contains)) {
				t.Errorf("output %q: want it to start with %q and hold %q", got, tt.prefix, tt.contains)
			}
			if tt.warn != "" && !strings.Contains(logs.String(), tt.warn) {
				t.Errorf("logs %q lack %q", logs.String(), tt.warn)
			}
			for line := range strings.Lines(logs.String()) {
				if strings.Count(line, `"output":`) > 1 { // a JSON reader keeps one of the two
					t.Errorf("a log line has the key output twice: %s", line)
				}
			}
		})
	}
	if _, err := NewEnriched(filepath.Join(t.TempDir(), "x.csv"), header, Options{Encoding: "latin-9"}); err == nil {
		t.Error("an unknown encoding was accepted")
	}
}

// Numbers and dates of a workbook became text ('1001', '01/03/2019'): the
// input's typed cells are numbers in its number format, in the enriched
// output (through the duplicate pass's spool) and the review output.
func TestXLSXKeepsTypedCells(t *testing.T) {
	header := []string{"ID", "Amount", "Joined", "Address"}
	res := Result{
		Row:   1,
		Cells: []string{"1001", "120.50", "01/03/2019", "=1+1"},
		Types: []record.CellType{
			{Kind: record.KindNumber, Value: "1001"},
			{Kind: record.KindNumber, Value: "120.5", NumFmt: 2},
			{Kind: record.KindDate, Value: "43525", CustomFmt: "dd/mm/yyyy"},
		},
		Err: "no address",
	}
	for _, kind := range []string{"enriched", "review"} {
		path := filepath.Join(t.TempDir(), kind+".xlsx")
		var w Writer
		var err error
		if kind == "enriched" {
			w, err = NewEnriched(path, header, Options{})
		} else {
			w, err = NewReview(path, header, Options{})
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(context.Background(), res); err != nil {
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
		col := 1 // first input column
		if kind == "review" {
			col = slices.Index(ReviewLayout(header, ""), header[0]) + 1 // after the review's own
		}
		for k, want := range []struct {
			typ        excelize.CellType
			raw, shown string
		}{
			{excelize.CellTypeNumber, "1001", "1001"},
			{excelize.CellTypeNumber, "120.5", "120.50"},
			{excelize.CellTypeNumber, "43525", "01/03/2019"},
			{excelize.CellTypeSharedString, "'=1+1", "'=1+1"}, // text is still neutralised
		} {
			cell, _ := excelize.CoordinatesToCellName(col+k, 2)
			typ, _ := f.GetCellType(sheet, cell)
			raw, _ := f.GetCellValue(sheet, cell, excelize.Options{RawCellValue: true})
			shown, _ := f.GetCellValue(sheet, cell)
			// A number cell is written without a type attribute: unset.
			same := typ == want.typ || want.typ == excelize.CellTypeNumber && typ == excelize.CellTypeUnset ||
				want.typ == excelize.CellTypeSharedString && typ == excelize.CellTypeInlineString
			if !same || raw != want.raw || shown != want.shown {
				t.Errorf("%s %s: type %v raw %q shown %q; want %v %q %q", kind, cell, typ, raw, shown, want.typ, want.raw, want.shown)
			}
		}
		_ = f.Close()
	}
}

func TestEncodeTypesRoundTrip(t *testing.T) {
	types := []record.CellType{{}, {Kind: record.KindDate, Value: "43525", CustomFmt: `dd/mm/yyyy "x"`}, {}, {Kind: record.KindNumber, Value: "-1.5e3", NumFmt: 4}}
	got := decodeTypes(encodeTypes(types))
	if !slices.Equal(got, types) {
		t.Errorf("round trip %+v, want %+v", got, types)
	}
	if encodeTypes([]record.CellType{{}, {}}) != "" || decodeTypes("junk") != nil {
		t.Error("text-only types are not empty")
	}
}

// FuzzDecodeTypes: the types cell read back from the spool never panics
// and never yields an index past a sheet's columns.
func FuzzDecodeTypes(f *testing.F) {
	f.Add(encodeTypes([]record.CellType{{Kind: record.KindNumber, Value: "1"}, {}, {Kind: record.KindDate, Value: "2", CustomFmt: "d"}}))
	f.Add("99999999\x1f1\x1f0\x1f\x1f1\x1e")
	f.Fuzz(func(t *testing.T, s string) {
		if got := decodeTypes(s); len(got) > xlsxMaxCols {
			t.Fatalf("%d types", len(got))
		}
	})
}
