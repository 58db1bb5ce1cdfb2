package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReferenceImport(t *testing.T) {
	dir := t.TempDir()
	oaDir := filepath.Join(dir, "ie")
	if err := os.Mkdir(oaDir, 0o755); err != nil {
		t.Fatal(err)
	}
	oa, err := os.ReadFile("../../refimport/testdata/oa.csv")
	if err != nil {
		t.Fatal(err)
	}
	oaIn := filepath.Join(oaDir, "clare.csv")
	if err := os.WriteFile(oaIn, oa, 0o644); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "stale.csv")
	if err := os.WriteFile(stale, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		args     []string
		stdin    string
		out      string // the OUT file, checked when the run succeeds
		wantCode int
		wantErr  string
	}{
		{"paf", []string{"import", "--from", "paf", "../../refimport/testdata/paf.csv", filepath.Join(dir, "paf.csv")}, "",
			filepath.Join(dir, "paf.csv"), exitOK, "read 221, wrote 221"},
		{"paf json on stdin", []string{"import", "--from", "paf", "-", filepath.Join(dir, "j.csv")}, `[{"udprn":1,"post_town":"LEEDS","thoroughfare":"Main Street","building_number":"2","postcode":"LS1 1AA"}]`,
			filepath.Join(dir, "j.csv"), exitOK, "wrote 1"},
		{"openaddresses, country from the directory", []string{"import", "--from", "openaddresses", oaIn, filepath.Join(dir, "oa.csv")}, "",
			filepath.Join(dir, "oa.csv"), exitOK, "wrote 5, skipped 3"},
		{"openaddresses, no country", []string{"import", "--from", "openaddresses", "-", filepath.Join(dir, "x.csv")}, "", "", exitUsage, "--country"},
		{"unknown format", []string{"import", "--from", "osm", "a", "b"}, "", "", exitUsage, "want paf or openaddresses"},
		{"no action", []string{"--from", "paf", "a", "b"}, "", "", exitUsage, "reference import"},
		{"bad input keeps the old OUT", []string{"import", "--from", "paf", "-", stale}, "not,a,paf\nfile,at,all\n", "", exitFatal, "not in the expected format"},
		{"missing input", []string{"import", "--from", "paf", filepath.Join(dir, "nope.csv"), filepath.Join(dir, "y.csv")}, "", "", exitFatal, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runMain(context.Background(), append([]string{"reference"}, tc.args...),
				streams{in: strings.NewReader(tc.stdin), out: &stdout, err: &stderr})
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr %s", code, tc.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.wantErr) {
				t.Errorf("stderr lacks %q: %s", tc.wantErr, stderr.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout: %s", stdout.String())
			}
			if tc.out != "" {
				b, err := os.ReadFile(tc.out)
				if err != nil || !strings.HasPrefix(string(b), "id,organisation,") {
					t.Errorf("OUT: %v %.80q", err, b)
				}
			}
		})
	}
	if b, _ := os.ReadFile(stale); string(b) != "keep me" {
		t.Errorf("a failed import changed OUT: %q", b)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// TestReferenceImportServes checks that a converted PAF file is a
// reference the embedded service answers from.
func TestReferenceImportServes(t *testing.T) {
	out := filepath.Join(t.TempDir(), "paf.csv")
	var stderr bytes.Buffer
	if code := runMain(context.Background(), []string{"reference", "import", "--from", "paf", "../../refimport/testdata/paf.csv", out},
		streams{in: strings.NewReader(""), out: &bytes.Buffer{}, err: &stderr}); code != exitOK {
		t.Fatalf("import: exit %d: %s", code, stderr.String())
	}
	t.Setenv("ADDRCLEAN_BASE_URL", "")
	var stdout bytes.Buffer
	code := runMain(context.Background(), []string{"verify", "--reference", out, "--country", "Channel Islands", "--city", "St Helier", "PO Box 2051"},
		streams{in: strings.NewReader(""), out: &stdout, err: &stderr})
	if code != exitOK || !strings.Contains(stdout.String(), "PO Box 2051") || !strings.Contains(stdout.String(), "Accept") {
		t.Errorf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
}
