package samefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(name), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	in := mk("in.csv")
	other := mk("other.csv")
	if err := os.Symlink(in, filepath.Join(dir, "sym.csv")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(in, filepath.Join(dir, "hard.csv")); err != nil {
		t.Fatal(err)
	}
	// A directory reached through a link, and a link to a file that does
	// not exist yet.
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real/later.json", filepath.Join(dir, "dangling.json")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)

	r := func(name, path string) Use { return Use{Name: name, Path: path, Role: Read} }
	w := func(name, path string) Use { return Use{Name: name, Path: path, Role: Write} }
	tests := []struct {
		name string
		uses []Use
		want string // "" for no clash, else the error's text
	}{
		{"different files", []Use{r("INPUT", in), w("-o", other)}, ""},
		{"same spelling", []Use{r("INPUT", in), w("--summary", in)}, "--summary " + in + " would overwrite INPUT " + in + ": they are the same file"},
		{"relative and absolute", []Use{r("INPUT", "in.csv"), w("--summary", in)}, "--summary " + in + " would overwrite INPUT in.csv"},
		{"dot segments", []Use{r("INPUT", in), w("-o", "real/../in.csv")}, "-o real/../in.csv would overwrite INPUT"},
		{"symbolic link", []Use{r("INPUT", in), w("--summary", "sym.csv")}, "--summary sym.csv would overwrite INPUT"},
		{"hard link", []Use{r("--reference", "hard.csv"), w("-o", in)}, "-o " + in + " would overwrite --reference hard.csv"},
		{"write listed first", []Use{w("-o", in), r("INPUT", "sym.csv")}, "-o " + in + " would overwrite INPUT sym.csv"},
		{"two outputs, neither exists", []Use{w("-o", "new.csv"), w("--summary", "real/../new.csv")}, "-o new.csv and --summary real/../new.csv are the same file"},
		{"missing file through a linked directory", []Use{w("-o", "real/x.csv"), w("--review", "linkdir/x.csv")}, "-o real/x.csv and --review linkdir/x.csv"},
		{"dangling link to a missing file", []Use{w("--summary", "dangling.json"), w("--report", "real/later.json")}, "--summary dangling.json and --report real/later.json"},
		{"missing and existing differ", []Use{r("INPUT", in), w("-o", "real/in.csv")}, ""},
		{"two reads", []Use{r("INPUT", in), r("--api-key-file", "sym.csv")}, ""},
		{"a cache alone", []Use{{"--cache", "c.db", ReadWrite}}, ""},
		{"a cache over the input", []Use{r("INPUT", in), {"--cache", "hard.csv", ReadWrite}}, "--cache hard.csv would overwrite INPUT"},
		{"one database read and written", []Use{{"INPUT", "db.sqlite", ReadDatabase}, {"--out-db", "./db.sqlite", WriteDatabase}}, ""},
		{"a database written over a file read", []Use{r("--reference", "hard.csv"), {"--out-db", in, WriteDatabase}}, "--out-db " + in + " would overwrite --reference hard.csv"},
		{"a file over a database", []Use{{"INPUT", "db.sqlite", ReadDatabase}, w("--summary", "db.sqlite")}, "--summary db.sqlite would overwrite INPUT db.sqlite"},
		{"stdin and stdout", []Use{r("INPUT", "-"), w("-o", "-")}, ""},
		{"unset", []Use{r("--reference", ""), w("--summary", "")}, ""},
		{"an output that is a directory", []Use{r("INPUT", in), w("-o", "real")}, "-o real is a directory: name a file to write"},
		{"an output through a link to a directory", []Use{w("--report", "linkdir")}, "--report linkdir is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.uses...)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Check: %v, want no clash", err)
				}
				return
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Check:\n got %q\nwant %q", err, tt.want)
			}
			if errors.As(err, new(*IsDir)) {
				return
			}
			if a, b := tt.uses[0].Path, tt.uses[len(tt.uses)-1].Path; len(tt.uses) == 2 && !Same(a, b) {
				t.Errorf("Same(%q, %q) is false for a clash", a, b)
			}
			var c *Clash
			if !errors.As(err, &c) {
				t.Fatalf("Check: %v, want a *Clash", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Check:\n got %q\nwant %q", err, tt.want)
			}
		})
	}
}

func TestLinkLoopEnds(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.Symlink(b, a); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(a, b); err != nil {
		t.Fatal(err)
	}
	// A loop is no file to write; the check only has to end.
	_ = Check(Use{"-o", a, Write}, Use{"--review", b, Write})
}

// BenchmarkCheck is the table of a run with every path given: five files
// that exist, four that do not yet.
func BenchmarkCheck(b *testing.B) {
	dir := b.TempDir()
	var uses []Use
	for name, role := range map[string]Role{"in.csv": Read, "ref.csv": Read, "key": Read, "c.db": ReadWrite, "o.csv.journal": Write} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(name), 0o600); err != nil {
			b.Fatal(err)
		}
		uses = append(uses, Use{Name: name, Path: p, Role: role})
	}
	for _, name := range []string{"o.csv", "r.csv", "s.json", "page.html"} {
		uses = append(uses, Use{Name: name, Path: filepath.Join(dir, name), Role: Write})
	}
	for b.Loop() {
		if err := Check(uses...); err != nil {
			b.Fatal(err)
		}
	}
}

func TestSame(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "crm.db")
	if err := os.WriteFile(db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"crm.db", "./crm.db", true},
		{db, "crm.db", true},
		{"crm.db", "other.db", false},
		{"new.db", "./new.db", true},
	} {
		if got := Same(tt.a, tt.b); got != tt.want {
			t.Errorf("Same(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
