package runs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/cache"
	"github.com/addrclean/addrclean/internal/samefile"
)

// TestCacheByName: --cache is a file, sqlite:PATH or a postgres:// URL;
// the clash checks see the file of the first two and none of a server's,
// and a URL that cannot be read is a usage error, not a file of that name.
func TestCacheByName(t *testing.T) {
	tests := []struct {
		spec   string
		path   string
		shared bool
	}{
		{"cache.db", "cache.db", false},
		{"sqlite:dir/cache.db", "dir/cache.db", false},
		{"postgres://u:pw@db/verify", "", true},
		{"postgresql://u@db/verify", "", true},
		{"", "", false},
	}
	for _, tt := range tests {
		if got := CacheUse(tt.spec); got != (samefile.Use{Name: "--cache", Path: tt.path, Role: samefile.ReadWrite}) {
			t.Errorf("CacheUse(%q) = %+v, want path %q", tt.spec, got, tt.path)
		}
		if got := IsSharedCache(tt.spec); got != tt.shared {
			t.Errorf("IsSharedCache(%q) = %v", tt.spec, got)
		}
	}
	var ue *UsageError
	if _, err := OpenCache(context.Background(), "postgres://[bad", CacheOptions{Logger: zerolog.Nop()}); !errors.As(err, &ue) {
		t.Errorf("a malformed URL: %v, want a UsageError", err)
	}
	// sqlite:PATH is the file at PATH.
	path := filepath.Join(t.TempDir(), "c.db")
	c, err := OpenCache(context.Background(), "sqlite:"+path, CacheOptions{Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := cache.Open(path, cache.Options{MustExist: true})
	if err != nil {
		t.Fatalf("sqlite:PATH did not make the cache at PATH: %v", err)
	}
	_ = d.Close()
	// A dry run never creates a cache.
	st, closeCache, err := PeekCache(context.Background(), filepath.Join(t.TempDir(), "none.db"), Service{}, cache.DefaultTTL, CacheOptions{Logger: zerolog.Nop()})
	closeCache()
	if st != nil || err != nil {
		t.Errorf("peek at a missing cache: %v, %v; want nothing", st, err)
	}
}

// TestClearCache: a cache that can be read loses its entries; a damaged
// file is replaced by a new, empty cache, saying so; a file that is no
// cache is left alone.
func TestClearCache(t *testing.T) {
	dir := t.TempDir()
	o := CacheOptions{MustExist: true, Logger: zerolog.Nop()}
	good := filepath.Join(dir, "good.db")
	d, err := cache.Open(good, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	store, err := d.Store(cache.LiveNamespace("https://api.example.com", api.Secret("k")), cache.DefaultTTL)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Put(context.Background(), "key", &api.VerifyResponse{Action: api.ActionAccept}); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(dir, "damaged.db")
	writeFile(t, damaged, "SQLite format 3\x00"+strings.Repeat("\xff", 5000))
	notCache := filepath.Join(dir, "notes.txt")
	writeFile(t, notCache, "my notes\n")
	for _, tt := range []struct {
		spec string
		want Cleared
		err  error
	}{
		{good, Cleared{Entries: 1, Path: good}, nil},
		{good, Cleared{Entries: 0, Path: good}, nil},
		{damaged, Cleared{Path: damaged, Replaced: true}, nil},
		{damaged, Cleared{Path: damaged}, nil}, // a new, empty cache now
		{notCache, Cleared{}, cache.ErrNotCache},
	} {
		got, err := ClearCache(context.Background(), tt.spec, o)
		if got != tt.want || !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
			t.Errorf("ClearCache(%s) = %+v, %v; want %+v, %v", filepath.Base(tt.spec), got, err, tt.want, tt.err)
		}
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
