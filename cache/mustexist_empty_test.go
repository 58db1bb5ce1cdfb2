package cache

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenMustExistEmptyFile: a look (MustExist: a dry run, the housekeeping
// commands) at a file without tables — made by touch or mktemp, or an SQLite
// file with none — is ErrNotExist and leaves the file's bytes as they were;
// a run's open still makes it a cache.
func TestOpenMustExistEmptyFile(t *testing.T) {
	for _, kind := range []string{"no bytes", "sqlite without tables"} {
		t.Run(kind, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "answers.cache")
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if kind == "sqlite without tables" {
				db, err := sql.Open("sqlite", path)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := db.Exec("PRAGMA user_version = 1"); err != nil {
					t.Fatal(err)
				}
				_ = db.Close()
			}
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			d, err := Open(path, Options{MustExist: true})
			if err == nil {
				_ = d.Close()
			}
			if !errors.Is(err, ErrNotExist) {
				t.Errorf("MustExist over a file without tables: %v, want ErrNotExist", err)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(after) != string(before) {
				t.Errorf("MustExist changed the file: %d bytes, was %d", len(after), len(before))
			}
			if _, err := os.Stat(path + "-wal"); err == nil {
				t.Error("MustExist left a WAL")
			}
			d, err = Open(path, Options{})
			if err != nil {
				t.Fatalf("a run's open of the empty file: %v", err)
			}
			_ = d.Close()
		})
	}
}
