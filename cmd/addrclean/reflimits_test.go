package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/internal/hostile"
)

// TestReferenceLimits gives each command that loads a reference one over
// its limits (issue 25: a street of one 30,000-letter word took 957 MB):
// run, verify and serve refuse it naming the row, reference import
// leaves the record out and counts it. A load the first signal cancels
// exits 130. Before, the reference loaded, and a cancelled load exited 1.
func TestReferenceLimits(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(25, 7))
	long := hostile.Word(rng, 30000)
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	header := strings.Join(gazetteer.Columns, ",") + "\n"
	ref := write("ref.csv", header+"IE1,,,,12,Main Street,,Ennis,Clare,,IE,,,\nIE2,,,,1,"+long+" Street,,Ennis,Clare,,IE,,,\n")
	good := write("good.csv", header+"IE1,,,,12,Main Street,,Ennis,Clare,,IE,,,\n")
	in := write("in.csv", "id,address,city,country\n1,12 Main Street,Ennis,IE\n")
	if err := os.Mkdir(filepath.Join(dir, "ie"), 0o755); err != nil {
		t.Fatal(err)
	}
	oa := write("ie/oa.csv", "LON,LAT,NUMBER,STREET,CITY,HASH\n-8.9,52.8,12,Main Street,Ennis,h1\n-8.9,52.8,1,"+long+",Ennis,h2\n")
	const refused = "line 3: column street: 30007 bytes, over the limit of 1024"
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		args    []string
		code    int
		wantErr string
	}{
		{"verify", context.Background(), []string{"verify", "--reference", ref, "--country", "IE", "12 Main Street", "Ennis"}, exitFatal, refused},
		{"run", context.Background(), []string{"run", "--reference", ref, "--journal", "off", "-o", filepath.Join(dir, "o.csv"), "--review", filepath.Join(dir, "r.csv"), in}, exitFatal, refused},
		{"serve", context.Background(), []string{"serve", "--reference", ref, "--listen", "127.0.0.1:0"}, exitFatal, refused},
		{"reference import", context.Background(), []string{"reference", "import", "--from", "openaddresses", oa, filepath.Join(dir, "out.csv")}, exitOK,
			"read 2, wrote 1, skipped 1 (value over 1024 bytes: 1)"},
		{"verify, interrupted", cancelled, []string{"verify", "--reference", good, "--country", "IE", "12 Main Street", "Ennis"}, exitInterrupted, "context canceled"},
		{"serve, interrupted", cancelled, []string{"serve", "--reference", good, "--listen", "127.0.0.1:0"}, exitInterrupted, "context canceled"},
		{"reference import, interrupted", cancelled, []string{"reference", "import", "--from", "openaddresses", oa, filepath.Join(dir, "out2.csv")}, exitInterrupted, "context canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runMain(tc.ctx, tc.args, streams{in: strings.NewReader(""), out: &stdout, err: &stderr})
			if code != tc.code || !strings.Contains(stderr.String(), tc.wantErr) {
				t.Fatalf("exit %d, want %d with %q; stderr: %.500s", code, tc.code, tc.wantErr, stderr.String())
			}
		})
	}
}
