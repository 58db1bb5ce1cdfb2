package runs

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

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
