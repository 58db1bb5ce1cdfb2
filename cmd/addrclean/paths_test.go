package main

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/service/servicetest"
)

// snapshot is every file of dir: its content, or a link's target.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if d.Type()&os.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			files[p] = "-> " + target
			return err
		}
		b, err := os.ReadFile(p)
		files[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// mustLink makes a symbolic (hard false) or hard link newname to oldname.
func mustLink(t *testing.T, oldname, newname string, symbolic bool) string {
	t.Helper()
	link := os.Link
	if symbolic {
		link = os.Symlink
	}
	if err := link(oldname, newname); err != nil {
		t.Fatal(err)
	}
	return newname
}

// countRequests is the real service handler; its Requests counts every
// request it is sent.
func countRequests(t *testing.T) (*httptest.Server, *servicetest.Faults) {
	t.Helper()
	var f *servicetest.Faults
	srv := newTestService(t, func(h http.Handler) http.Handler {
		f = servicetest.Wrap(h)
		return f
	})
	return srv, f
}

// checkRefused checks a command's exit 2, want in its stderr (with "dir/"
// standing for dir) and that dir is as it was before.
func checkRefused(t *testing.T, dir string, before map[string]string, code int, stderr, want string) {
	t.Helper()
	if code != exitUsage {
		t.Errorf("exit %d, want %d\n%s", code, exitUsage, tail(stderr, 2000))
	}
	if want := strings.ReplaceAll(want, "dir/", dir+"/"); !strings.Contains(stderr, want) {
		t.Errorf("stderr %q\nwant %q", tail(stderr, 2000), want)
	}
	if after := snapshot(t, dir); !maps.Equal(before, after) {
		t.Errorf("the directory changed:\nbefore %q\n after %q", before, after)
	}
}

// TestRunRefusesOutputOverInput runs each clash of issue 25 against a live
// service: exit 2 naming both flags and paths, no call paid, and no file of
// the directory changed (nothing written, nothing removed).
func TestRunRefusesOutputOverInput(t *testing.T) {
	srv, calls := countRequests(t)
	isolateJournals(t)
	tests := []struct {
		name string
		// args are the flags and INPUT for a directory holding in.csv,
		// ref.csv and key; want is in stderr, whose "dir/" is the
		// directory.
		args func(t *testing.T, dir string) []string
		want string
	}{
		{"--summary over INPUT", func(t *testing.T, d string) []string {
			return []string{"--summary", d + "/in.csv", d + "/in.csv"}
		}, "--summary dir/in.csv would overwrite INPUT dir/in.csv: they are the same file"},
		{"--summary = -o", func(t *testing.T, d string) []string {
			return []string{"-o", d + "/o.csv", "--summary", d + "/o.csv", d + "/in.csv"}
		}, "--out dir/o.csv and --summary dir/o.csv are the same file"},
		{"--summary = --review", func(t *testing.T, d string) []string {
			return []string{"--review", d + "/r.csv", "--summary", d + "/./r.csv", d + "/in.csv"}
		}, "--review dir/r.csv and --summary dir/./r.csv are the same file"},
		{"-o over --reference", func(t *testing.T, d string) []string {
			return []string{"-o", d + "/ref.csv", "--reference", d + "/ref.csv", d + "/in.csv"}
		}, "--out dir/ref.csv would overwrite --reference dir/ref.csv"},
		{"--review over --api-key-file", func(t *testing.T, d string) []string {
			return []string{"--review", d + "/key.csv", "--api-key-file", d + "/key.csv", d + "/in.csv"}
		}, "--review dir/key.csv would overwrite --api-key-file dir/key.csv"},
		{"--report over INPUT through a symbolic link", func(t *testing.T, d string) []string {
			mustLink(t, d+"/in.csv", d+"/page.html", true)
			return []string{"--report", d + "/page.html", d + "/in.csv"}
		}, "--report dir/page.html would overwrite INPUT dir/in.csv"},
		{"--report over INPUT through a hard link", func(t *testing.T, d string) []string {
			mustLink(t, d+"/in.csv", d+"/page.html", false)
			return []string{"--report", d + "/page.html", d + "/in.csv"}
		}, "--report dir/page.html would overwrite INPUT dir/in.csv"},
		{"--summary over INPUT through a symbolic link", func(t *testing.T, d string) []string {
			mustLink(t, d+"/in.csv", d+"/s.json", true)
			return []string{"--summary", d + "/s.json", d + "/in.csv"}
		}, "--summary dir/s.json would overwrite INPUT dir/in.csv"},
		{"--summary over INPUT through a linked directory", func(t *testing.T, d string) []string {
			mustLink(t, d, d+"/via", true)
			return []string{"--summary", d + "/via/in.csv", d + "/in.csv"}
		}, "--summary dir/via/in.csv would overwrite INPUT dir/in.csv"},
		{"the journal over INPUT through a symbolic link", func(t *testing.T, d string) []string {
			mustLink(t, d+"/in.csv", d+"/o.csv.journal", true)
			return []string{"-o", d + "/o.csv", d + "/in.csv"}
		}, "the journal dir/o.csv.journal would overwrite INPUT dir/in.csv"},
		{"the journal over --reference through a hard link", func(t *testing.T, d string) []string {
			mustLink(t, d+"/ref.csv", d+"/o.csv.journal", false)
			return []string{"-o", d + "/o.csv", "--reference", d + "/ref.csv", d + "/in.csv"}
		}, "the journal dir/o.csv.journal would overwrite --reference dir/ref.csv"},
		{"--summary = the journal", func(t *testing.T, d string) []string {
			return []string{"-o", d + "/o.csv", "--summary", d + "/o.csv.journal", d + "/in.csv"}
		}, "--summary dir/o.csv.journal and the journal dir/o.csv.journal are the same file"},
		{"--cache over INPUT", func(t *testing.T, d string) []string {
			return []string{"--cache", d + "/in.csv", d + "/in.csv"}
		}, "--cache dir/in.csv would overwrite INPUT dir/in.csv"},
		{"--summary = --cache", func(t *testing.T, d string) []string {
			return []string{"--cache", d + "/c.db", "--summary", d + "/c.db", d + "/in.csv"}
		}, "--cache dir/c.db and --summary dir/c.db are the same file"},
		{"-o over the SQLite INPUT through a symbolic link", func(t *testing.T, d string) []string {
			loadSample(t, "sqlite:"+d+"/crm.db", "customers")
			mustLink(t, d+"/crm.db", d+"/crm.csv", true)
			return []string{"--table", "customers", "--id-col", "Customer ID", "-o", d + "/crm.csv", "sqlite:" + d + "/crm.db"}
		}, "--out dir/crm.csv would overwrite INPUT dir/crm.db"},
		{"--out-db over INPUT", func(t *testing.T, d string) []string {
			return []string{"--out-db", "sqlite:" + d + "/in.csv", "--out-table", "results", d + "/in.csv"}
		}, "--out-db dir/in.csv would overwrite INPUT dir/in.csv"},
		// Before, an output that is a directory failed at the final rename,
		// after every call was paid.
		{"-o a directory", func(t *testing.T, d string) []string {
			mustMkdir(t, d+"/out.csv")
			return []string{"-o", d + "/out.csv", d + "/in.csv"}
		}, "--out dir/out.csv is a directory: name a file to write"},
		{"--summary a directory", func(t *testing.T, d string) []string {
			mustMkdir(t, d+"/s.json")
			return []string{"--summary", d + "/s.json", d + "/in.csv"}
		}, "--summary dir/s.json is a directory"},
		// Before, these failed at the end of the run (exit 1), after every
		// call was paid.
		{"--report in a directory that does not exist", func(t *testing.T, d string) []string {
			return []string{"-o", d + "/o.csv", "--report", d + "/missing/page.html", d + "/in.csv"}
		}, "--report dir/missing/page.html: the directory dir/missing does not exist"},
		{"--summary in a directory that does not exist", func(t *testing.T, d string) []string {
			return []string{"--summary", d + "/missing/s.json", d + "/in.csv"}
		}, "--summary dir/missing/s.json: the directory dir/missing does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range map[string]string{
				"in.csv":  "Address 1,Town,Country\n1 Main St,Cork,IE\n",
				"ref.csv": "not read: the run must stop first\n",
				"key":     testKey + "\n",
				"key.csv": testKey + "\n",
			} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			args := tt.args(t, dir)
			before := snapshot(t, dir)
			start := calls.Requests()
			var keyArgs []string
			if !strings.Contains(strings.Join(args, " "), "--api-key-file") {
				keyArgs = []string{"--api-key-file", dir + "/key"}
			}
			code, _, stderr := cli(append(append([]string{"run", "--no-progress", "--base-url", srv.URL}, keyArgs...), args...)...)
			checkRefused(t, dir, before, code, stderr, tt.want)
			if n := calls.Requests() - start; n != 0 {
				t.Errorf("%d calls to the service before the refusal", n)
			}
		})
	}
}

// TestAfterRunCommandsRefuseOutputOverInput covers apply, report and
// reference import: exit 2 naming both, and nothing written.
func TestAfterRunCommandsRefuseOutputOverInput(t *testing.T) {
	tests := []struct {
		name string
		args func(t *testing.T, dir string) []string
		want string
	}{
		{"apply -o over --review through a hard link", func(t *testing.T, d string) []string {
			mustLink(t, d+"/review.csv", d+"/final.csv", false)
			return []string{"apply", "--enriched", d + "/cleaned.csv", "--review", d + "/review.csv", "-o", d + "/final.csv"}
		}, "--out dir/final.csv would overwrite --review dir/review.csv"},
		{"apply -o over --enriched through a symbolic link", func(t *testing.T, d string) []string {
			mustLink(t, d+"/cleaned.csv", d+"/final.csv", true)
			return []string{"apply", "--enriched", d + "/cleaned.csv", "--review", d + "/review.csv", "-o", d + "/final.csv"}
		}, "--out dir/final.csv would overwrite --enriched dir/cleaned.csv"},
		{"apply -o over the SQLite database", func(t *testing.T, d string) []string {
			loadSample(t, "sqlite:"+d+"/crm.db", "customers")
			mustLink(t, d+"/crm.db", d+"/final.csv", true)
			return []string{"apply", "sqlite:" + d + "/crm.db", "--table", "customers", "--id-col", "Customer ID",
				"--out-table", "out", "--review-table", "review", "-o", d + "/final.csv"}
		}, "--out dir/final.csv would overwrite DBURL dir/crm.db"},
		{"report -o over ENRICHED through a symbolic link", func(t *testing.T, d string) []string {
			mustLink(t, d+"/cleaned.csv", d+"/page.html", true)
			return []string{"report", "-o", d + "/page.html", d + "/cleaned.csv"}
		}, "--out dir/page.html would overwrite ENRICHED dir/cleaned.csv"},
		{"report -o over --summary", func(t *testing.T, d string) []string {
			return []string{"report", "--summary", d + "/s.html", "-o", d + "/s.html", d + "/cleaned.csv"}
		}, "--out dir/s.html would overwrite --summary dir/s.html"},
		{"report -o in a directory that does not exist", func(t *testing.T, d string) []string {
			return []string{"report", "-o", d + "/missing/page.html", d + "/cleaned.csv"}
		}, "--out dir/missing/page.html: the directory dir/missing does not exist"},
		{"reference import OUT = IN", func(t *testing.T, d string) []string {
			return []string{"reference", "import", "--from", "paf", d + "/cleaned.csv", d + "/./cleaned.csv"}
		}, "OUT dir/./cleaned.csv would overwrite IN dir/cleaned.csv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, name := range []string{"cleaned.csv", "review.csv"} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(name+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			args := tt.args(t, dir)
			before := snapshot(t, dir)
			code, _, stderr := cli(args...)
			checkRefused(t, dir, before, code, stderr, tt.want)
		})
	}
}

// TestRunPathsAllowed are paths that look alike but are not one file, or
// are one database: the check must let them through.
func TestRunPathsAllowed(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "crm.db")
	loadSample(t, db, "customers")
	isolateJournals(t)
	res := runDB(t, dir, "--table", "customers", "--id-col", "Customer ID", "--limit", "5",
		"--out-db", "sqlite:"+dir+"/./crm.db", "--out-table", "results", "--cache", filepath.Join(dir, "c.db"), db)
	if res.code != exitOK && res.code != exitRowErrors {
		t.Fatalf("exit %d\n%s", res.code, tail(res.stderr, 2000))
	}
	// With --journal off the journal's path is never written: a link there
	// to the input is no clash.
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("Address 1,Town,Country\n1 Main St,Cork,IE\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustLink(t, in, filepath.Join(dir, "o.csv.journal"), true)
	before := snapshot(t, dir)
	code, _, stderr := cli("run", "--no-progress", "--journal", "off", "-o", filepath.Join(dir, "o.csv"), "--review", filepath.Join(dir, "r.csv"), in)
	if code != exitOK && code != exitRowErrors {
		t.Fatalf("--journal off: exit %d\n%s", code, tail(stderr, 2000))
	}
	if b, _ := os.ReadFile(in); string(b) != before[in] {
		t.Errorf("the input changed: %q", b)
	}
}

// TestRunOutputTableOverInputTableSpelt: the output table is the input
// table when --out-db names the input's SQLite file another way; before,
// only the same spelling was caught and the input table got the av_
// columns added before the run failed.
func TestRunOutputTableOverInputTableSpelt(t *testing.T) {
	isolateJournals(t)
	dir := t.TempDir()
	loadSample(t, "sqlite:"+filepath.Join(dir, "crm.db"), "customers")
	mustLink(t, filepath.Join(dir, "crm.db"), filepath.Join(dir, "link.db"), true)
	t.Chdir(dir)
	for _, outDB := range []string{"sqlite:./crm.db", "sqlite:" + filepath.Join(dir, "crm.db"), "sqlite:link.db"} {
		t.Run(outDB, func(t *testing.T) {
			before := snapshot(t, dir)
			code, _, stderr := cli("run", "--no-progress", "--table", "customers", "--id-col", "Customer ID",
				"--out-db", outDB, "--out-table", "customers", "sqlite:crm.db")
			checkRefused(t, dir, before, code, stderr, "the output table customers is the input table")
		})
	}
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
}
