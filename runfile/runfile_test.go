package runfile

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/writers"
)

func TestParseLine(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr bool
		keys    []string
		row     int
		extra   map[string]string
	}{
		{name: "input order kept", in: `{"row":3,"action":"Error","input":{"z":"1","a":"2","m":""},"error":"no address","decision":"keep","duplicates":2}`,
			keys: []string{"z", "a", "m"}, row: 3, extra: map[string]string{"decision": "keep", "duplicates": "2", "action": "Error"}},
		{name: "not an object", in: `[1,2]`, wantErr: true},
		{name: "no row", in: `{"input":{}}`, wantErr: true},
		{name: "row not a number", in: `{"row":"x"}`, wantErr: true},
		{name: "row zero", in: `{"row":0}`, wantErr: true},
		{name: "input cell not a string", in: `{"row":1,"input":{"a":1}}`, wantErr: true},
		{name: "truncated", in: `{"row":1,"input":{"a":"b"`, wantErr: true},
		{name: "bad response", in: `{"row":1,"response":[]}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := parseLine([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if l.row != tt.row || !slices.Equal(l.inKeys, tt.keys) {
				t.Fatalf("row %d keys %q", l.row, l.inKeys)
			}
			for k, v := range tt.extra {
				if l.extra[k] != v {
					t.Errorf("extra[%s] = %q, want %q", k, l.extra[k], v)
				}
			}
		})
	}
}

func FuzzParseLine(f *testing.F) {
	f.Add([]byte(`{"row":3,"action":"Error","input":{"z":"1"},"error":"no address","decision":"keep"}`))
	f.Add([]byte(`{"row":1,"response":{"type":"verify","address":{"lines":[{"value":"x"}]}}}`))
	f.Add([]byte(`{"row":1e3}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := parseLine(b)
		if err == nil && l.row < 1 {
			t.Fatalf("row %d accepted", l.row)
		}
	})
}

// TestColumnsOfARerun: an input that is itself an enriched file has av_
// columns of its own; the last set is the run's.
func TestColumnsOfARerun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "e.csv")
	header := append([]string{"id"}, writers.EnrichedColumns...)
	w, err := writers.NewEnriched(path, header, writers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cells := make([]string, len(header))
	cells[0], cells[1] = "C1", "Accept" // the old run's av_action
	if err := w.Write(context.Background(), writers.Result{Row: 1, Cells: cells, Err: "no address"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	e, err := OpenEnriched(context.Background(), path, readers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if !slices.Equal(e.InputHeader(), header) {
		t.Fatalf("input header %q", e.InputHeader())
	}
	r, err := e.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.Get("av_action") != "Error" || r.Input()[1] != "Accept" || r.Num != 1 {
		t.Fatalf("av_action %q, input %q", r.Get("av_action"), r.Input())
	}
	if _, err := e.Next(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last row: %v", err)
	}
}

func TestNotAnOutput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(path, []byte("a,b\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenEnriched(context.Background(), path, readers.Options{}); !errors.Is(err, ErrNotEnriched) {
		t.Errorf("OpenEnriched: %v", err)
	}
	if _, err := OpenReview(context.Background(), path, readers.Options{}); !errors.Is(err, ErrNotReview) {
		t.Errorf("OpenReview: %v", err)
	}
	// A review written before the decision column existed.
	old := filepath.Join(dir, "old.csv")
	if err := os.WriteFile(old, []byte("row,a,"+strings.Join(writers.ReviewColumns, ",")+"\n1,x,Suggest,,,,,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenReview(context.Background(), old, readers.Options{}); !errors.Is(err, ErrNotReview) || !strings.Contains(err.Error(), "decision") {
		t.Errorf("OpenReview of an old review: %v", err)
	}
}

// TestWorkbookSheets: an XLSX output past a sheet's rows continues on
// "Enriched 2"; the rows of every sheet are read, numbered on.
func TestWorkbookSheets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "e.xlsx")
	f := excelize.NewFile()
	header := append(append([]string{"id"}, writers.EnrichedColumns...), writers.DuplicateColumns...)
	row := func(id, action string) []any {
		r := make([]any, len(header))
		r[0], r[1] = id, action
		return r
	}
	sheets := map[string][][]any{
		"Enriched":   {row("C1", "Accept"), row("C2", "Suggest")},
		"Enriched 2": {row("C3", "Error")},
	}
	if err := f.SetSheetName("Sheet1", "Enriched"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.NewSheet("Enriched 2"); err != nil {
		t.Fatal(err)
	}
	for name, rows := range sheets {
		h := make([]any, len(header))
		for i, c := range header {
			h[i] = c
		}
		if err := f.SetSheetRow(name, "A1", &h); err != nil {
			t.Fatal(err)
		}
		for i, r := range rows {
			if err := f.SetSheetRow(name, "A"+strconv.Itoa(i+2), &r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	e, err := OpenEnriched(context.Background(), path, readers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var got []string
	for {
		r, err := e.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, strconv.Itoa(r.Num)+" "+r.Input()[0]+" "+r.Get("av_action"))
	}
	if want := []string{"1 C1 Accept", "2 C2 Suggest", "3 C3 Error"}; !slices.Equal(got, want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
}
