package sqlitefile

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/addrclean/addrclean/internal/sqlitefile/filetest"
)

// TestOpenReadOnlyChangesNothing: a ReadOnly open checks a file and leaves
// the directory as it was, to the byte: a file switched out of WAL mode by
// hand (sqlite3) keeps its mode and gets no -wal, -shm or -journal beside
// it; an empty file, an SQLite file without tables and a missing one are
// refused (Absent) and not made databases. Write then readies the file as
// Open does (WAL mode).
func TestOpenReadOnlyChangesNothing(t *testing.T) {
	ctx := context.Background()
	errAbsent := errors.New("absent")
	o := Options{Kind: "test", Format: "addrclean-test/1", FormatFamily: "addrclean-test/",
		Schema:  []string{"CREATE TABLE t (id integer PRIMARY KEY)"},
		Corrupt: errors.New("damaged"), NotOurs: errors.New("not ours"), Locked: errors.New("locked")}
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	f, err := Open(ctx, at("delete"), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	filetest.Exec(t, at("delete"), "PRAGMA journal_mode = DELETE")
	filetest.Exec(t, at("no-tables"), "PRAGMA user_version = 7")
	if err := os.WriteFile(at("empty"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	o.ReadOnly, o.Absent = true, errAbsent
	for _, tc := range []struct {
		name    string
		wantErr error
	}{{"delete", nil}, {"empty", errAbsent}, {"no-tables", errAbsent}, {"missing", errAbsent}} {
		t.Run(tc.name, func(t *testing.T) {
			before := dirSums(t, dir)
			f, err := Open(ctx, at(tc.name), o)
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Fatalf("Open: %v, want %v", err, tc.wantErr)
			}
			if f != nil {
				// Held as a write would hold it: a second look (another
				// run) is refused at once, not at its first write.
				if g, err := Open(ctx, at(tc.name), o); !errors.Is(err, o.Locked) {
					t.Errorf("a second look: %v, want %v", err, o.Locked)
					if g != nil {
						_ = g.Close()
					}
				}
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if after := dirSums(t, dir); after != before {
				t.Errorf("the directory changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
	if m := filetest.JournalMode(t, at("delete")); m != "delete" {
		t.Fatalf("journal mode %q after the looks, want delete", m)
	}
	f, err = Open(ctx, at("delete"), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(f.Write(ctx), f.Close()); err != nil {
		t.Fatal(err)
	}
	if m := filetest.JournalMode(t, at("delete")); m != "wal" {
		t.Fatalf("journal mode %q after Write, want wal", m)
	}
}

// dirSums lists the files of dir with the SHA-256 of each.
func dirSums(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var s string
	for _, e := range es {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		s += fmt.Sprintf("%s=%x ", e.Name(), sha256.Sum256(b))
	}
	return s
}
