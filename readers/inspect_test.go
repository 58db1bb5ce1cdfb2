package readers

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run go test -update after checking):\n--- got\n%s\n--- want\n%s", p, got, want)
	}
}

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
			golden(t, tt.golden, bytes.ReplaceAll(out.Bytes(), []byte(dir), []byte("TMP")))
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

// TestInspectSampleData checks the dry run on the bundled sample exports,
// once they exist.
func TestInspectSampleData(t *testing.T) {
	for _, name := range []string{"customers.csv", "customers.xlsx"} {
		p := filepath.Join("..", "sample_data", name)
		if _, err := os.Stat(p); err != nil {
			t.Logf("%s: not there yet", p)
			continue
		}
		t.Run(name, func(t *testing.T) {
			rep, err := Inspect(context.Background(), p, Options{}, MappingSpec{}, 3)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Rows == 0 || len(rep.Sample) == 0 {
				t.Errorf("report: %+v", rep)
			}
			for _, k := range []string{"line1", "country"} {
				if rep.Columns[k] == "" {
					t.Errorf("no %s column detected: %v", k, rep.Columns)
				}
			}
		})
	}
}
