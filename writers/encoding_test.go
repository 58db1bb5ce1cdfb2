package writers

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
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
		})
	}
	if _, err := NewEnriched(filepath.Join(t.TempDir(), "x.csv"), header, Options{Encoding: "latin-9"}); err == nil {
		t.Error("an unknown encoding was accepted")
	}
}
