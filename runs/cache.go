package runs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/cache"
	"github.com/addrclean/addrclean/internal/samefile"
	"github.com/addrclean/addrclean/internal/sqlitefile"
	"github.com/addrclean/addrclean/pipeline"
	"github.com/addrclean/addrclean/runs/endpoint"
	sampledata "github.com/addrclean/addrclean/sample_data"
	"github.com/addrclean/addrclean/table"
)

// Cache is the cache of --cache: an SQLite file (*cache.DB) or a
// PostgreSQL database shared by runners (*cache.PG).
type Cache interface {
	// Path is the file, or the URL without its password.
	Path() string
	Stats(ctx context.Context, ttl time.Duration) (cache.Stats, error)
	Prune(ctx context.Context, ttl time.Duration) (cache.Pruned, error)
	Clear(ctx context.Context) (int64, error)
	Close() error
}

// CacheOptions say how --cache is opened.
type CacheOptions struct {
	// Lease is how long a killed runner's claims hold in a shared cache.
	Lease time.Duration
	// MustExist: the housekeeping commands stop at a missing or damaged
	// cache; a run (false) moves a damaged file aside, creates a missing one.
	MustExist bool
	// Timeout is how long to wait for another process's lock on the file.
	Timeout time.Duration
	Logger  zerolog.Logger

	// readOnly opens a shared cache for a dry run's look (PeekCache),
	// which writes nothing (cache.PGOptions.ReadOnly).
	readOnly bool
}

// OpenCache opens the cache of --cache: a file path (or sqlite:PATH), or a
// postgres:// URL. A URL that cannot be read is a UsageError; a locked
// file, or a database that cannot be reached, is fatal. A run (not
// MustExist) moves a damaged file, or a bbolt one of an older addrclean,
// aside and starts a new one, saying so on the log, and creates a
// database's tables.
func OpenCache(ctx context.Context, spec string, o CacheOptions) (Cache, error) {
	if table.IsURL(spec) {
		u, err := table.ParseURL(spec)
		if err != nil {
			return nil, usagef("--cache: %v", err)
		}
		if u.Scheme == "postgres" {
			if u.HasPassword {
				o.Logger.Warn().Msg(endpoint.PasswordWarning)
			}
			p, err := cache.OpenPG(ctx, u.Raw, u.Display, cache.PGOptions{Lease: o.Lease, MustExist: o.MustExist, ReadOnly: o.readOnly, Logger: o.Logger})
			if errors.Is(err, cache.ErrBadURL) {
				return nil, usagef("--cache: %v", err)
			}
			return p, err
		}
		spec = u.Path
	}
	return cache.Open(spec, o.fileOptions())
}

// openExisting opens the cache of spec as it is, creating and changing
// nothing, so that a run refused afterwards leaves no cache behind. A cache
// that does not exist yet, or a file that a run moves aside and starts
// afresh (damaged, or a bbolt cache of an older addrclean), is no error: c
// is nil and absent says which; OpenCache then creates it. Anything else
// (locked, not a cache, a database that cannot be reached) is err.
func openExisting(ctx context.Context, spec string, o CacheOptions) (c Cache, absent, err error) {
	o.MustExist = true
	c, err = OpenCache(ctx, spec, o)
	switch {
	case err == nil:
		return c, nil, nil
	case errors.Is(err, cache.ErrNotExist),
		errors.Is(err, cache.ErrCorrupt) && (!errors.Is(err, cache.ErrNotCache) || errors.Is(err, sqlitefile.ErrOldBbolt)):
		return nil, err, nil
	}
	return nil, nil, err // not c: a nil *cache.DB in a non-nil Cache
}

// RecreateCache replaces a cache file that cannot be read (cause, the
// error of opening it) by a new, empty one (addrclean cache clear); a
// cache named by a database URL is not replaced: cause is returned.
func RecreateCache(spec string, o CacheOptions, cause error) (Cache, error) {
	if table.IsURL(spec) {
		return nil, cause
	}
	return cache.Recreate(spec, o.fileOptions())
}

func (o CacheOptions) fileOptions() cache.Options {
	return cache.Options{Timeout: o.Timeout, MustExist: o.MustExist, Rebuild: !o.MustExist, Logger: o.Logger}
}

// CacheUse is --cache for the clash checks: its file (an SQLite one's,
// for sqlite:PATH); a PostgreSQL one has none.
func CacheUse(spec string) samefile.Use {
	use := samefile.Use{Name: "--cache", Path: spec, Role: samefile.ReadWrite}
	if table.IsURL(spec) {
		use.Path = ""
		if u, err := table.ParseURL(spec); err == nil && u.Scheme == "sqlite" {
			use.Path = u.Path
		}
	}
	return use
}

// IsSharedCache reports a cache shared in PostgreSQL.
func IsSharedCache(spec string) bool {
	u, err := table.ParseURL(spec)
	return err == nil && u.Scheme == "postgres"
}

// Service is what answers a run: the live service at BaseURL with Key, or
// (BaseURL "") the embedded one over Reference (the bundled sample when
// empty), built as Version.
type Service struct {
	BaseURL string
	// Key reads the API key when it is needed (nil: none), so that a
	// command that needs none never fails on it.
	Key       func() (api.Secret, error)
	Reference string
	Version   string
}

// key is the API key, "" without one.
func (s Service) key() (api.Secret, error) {
	if s.Key == nil {
		return "", nil
	}
	return s.Key()
}

// ReferenceName names a reference file, or the bundled sample.
func ReferenceName(path string) string {
	if path == "" {
		return "bundled sample"
	}
	return path
}

// Namespace is the namespace of the service's answers in a cache: the live
// service and the SHA-256 of its key, or the embedded service's build and
// reference.
func (s Service) Namespace() (cache.Namespace, error) {
	if s.BaseURL != "" {
		key, err := s.key()
		if err != nil {
			return cache.Namespace{}, err
		}
		return cache.LiveNamespace(s.BaseURL, key), nil
	}
	if s.Reference == "" {
		return cache.EmbeddedNamespace(ReferenceName(""), s.Version, bytes.NewReader(sampledata.ReferenceBytes()))
	}
	f, err := os.Open(s.Reference)
	if err != nil {
		return cache.Namespace{}, fmt.Errorf("--reference: %w", err)
	}
	defer f.Close()
	return cache.EmbeddedNamespace(s.Reference, s.Version, f)
}

// CacheStore is the run's namespace of c for svc, answers younger than
// ttl (nil without a cache). logCached reports what the run took from it
// and gave to it, and the entries it could not use (damaged, a warning):
// verified again.
func CacheStore(c Cache, svc Service, ttl time.Duration, log zerolog.Logger) (_ pipeline.Cache, logCached func(hits int64), _ error) {
	if c == nil {
		return nil, func(int64) {}, nil
	}
	ns, err := svc.Namespace()
	if err != nil {
		return nil, nil, err
	}
	st, shared, err := store(c, ns, ttl)
	if err != nil {
		return nil, nil, err
	}
	cstore := &countingCache{runStore: st}
	var pc pipeline.Cache = cstore
	var waited, took func() int64
	if shared != nil {
		pc = sharedCountingCache{countingCache: cstore, release: shared.Release}
		waited, took = shared.Waited, shared.TakenOver
	}
	log.Info().Str("cache", c.Path()).Str("namespace", ns.Label).Dur("cache_ttl", ttl).Msg("reusing answers from the cache")
	return pc, func(hits int64) {
		ev := log.Info().Str("cache", c.Path()).Str("namespace", ns.Label).Int64("cache_hits", hits).Int64("stored", cstore.puts.Load())
		if waited != nil {
			// Of the hits, those that another runner was paying for.
			ev.Int64("waited_for_other_runners", waited()).Int64("claims_taken_over", took()).
				Msgf("cache: %d answer(s) reused (%d waited for from another runner), %d stored; %d claim(s) of stopped runners taken over",
					hits, waited(), cstore.puts.Load(), took())
		} else {
			ev.Msgf("cache: %d answer(s) reused, %d stored", hits, cstore.puts.Load())
		}
		if n := cstore.Damaged(); n > 0 {
			log.Warn().Str("cache", c.Path()).Int64("damaged", n).
				Msgf("cache: %d entries failed their checksum and were verified again; if this recurs, check the disk, or start afresh with 'addrclean cache clear --cache %s'", n, c.Path())
		}
	}, nil
}

// cacheShown is --cache spec as logs show it: a DBURL without its
// password.
func cacheShown(spec string) string {
	if !table.IsURL(spec) {
		return spec
	}
	if u, err := table.ParseURL(spec); err == nil {
		return u.Display
	}
	return "the --cache DBURL"
}

// PeekCache is the namespace a dry run of svc reads from --cache spec,
// read only: nothing is created or written, in a file or in a database
// (docs/estimate.md). A cache that does not exist yet answers nothing; so
// does a damaged one (the run will move it aside), a namespace that is not
// in it (the run will create it empty) and a shared one's missing tables.
// A shared one is only looked at (no claim taken, no wait for another
// runner). The caller calls close.
func PeekCache(ctx context.Context, spec string, svc Service, ttl time.Duration, o CacheOptions) (_ pipeline.Cache, close func(), _ error) {
	none := func() {}
	o.readOnly = true
	c, absent, err := openExisting(ctx, spec, o)
	switch {
	case err != nil:
		return nil, none, err
	case errors.Is(absent, cache.ErrNotExist):
		o.Logger.Info().Str("cache", cacheShown(spec)).Msg("the cache does not exist yet: it answers nothing")
		return nil, none, nil
	case absent != nil:
		o.Logger.Warn().Err(absent).Str("cache", cacheShown(spec)).
			Msg("the cache is damaged or of an older addrclean: the run will move it aside and start an empty one, so it is counted as answering nothing")
		return nil, none, nil
	}
	close = func() { _ = c.Close() }
	ns, err := svc.Namespace()
	var st pipeline.Cache
	if err == nil {
		st, err = peek(ctx, c, ns, ttl)
	}
	switch {
	case err != nil:
		close()
		return nil, none, err
	case st == nil:
		close()
		o.Logger.Info().Str("cache", cacheShown(spec)).Str("namespace", ns.Label).
			Msg("the cache holds no answers of this service yet: it answers nothing")
		return nil, none, nil
	}
	return st, close, nil
}

// peek is the namespace ns of c, read only (nil when it is not there):
// a file's *cache.Store, a shared cache's *cache.PGPeek, which takes no
// claim and waits for no other runner.
func peek(ctx context.Context, c Cache, ns cache.Namespace, ttl time.Duration) (pipeline.Cache, error) {
	switch d := c.(type) {
	case *cache.DB:
		if st, err := d.Peek(ctx, ns, ttl); st != nil || err != nil {
			return st, err
		}
		return nil, nil // not a nil *cache.Store in a non-nil pipeline.Cache
	case *cache.PG:
		if st, err := d.Peek(ctx, ns, ttl); st != nil || err != nil {
			return st, err
		}
		return nil, nil
	}
	return nil, fmt.Errorf("--cache %s: a cache of an unknown kind", c.Path())
}

// store is the namespace ns of c, with answers younger than ttl; shared is
// the same store when c is shared by runners (nil for a file).
func store(c Cache, ns cache.Namespace, ttl time.Duration) (_ runStore, shared *cache.PGStore, _ error) {
	switch d := c.(type) {
	case *cache.DB:
		st, err := d.Store(ns, ttl)
		return st, nil, err
	case *cache.PG:
		st, err := d.Store(ns, ttl)
		return st, st, err
	}
	return nil, nil, fmt.Errorf("--cache %s: a cache of an unknown kind", c.Path())
}

// The cache wrapper of a run must keep the stored times of its answers:
// they are the verified_at of table outputs.
var _ pipeline.TimedCache = (*countingCache)(nil)

// runStore is a namespace of either kind of cache.
type runStore interface {
	pipeline.BatchCache
	Damaged() int64
}

// countingCache counts the answers a run stored, for its log line.
type countingCache struct {
	runStore
	puts atomic.Int64
}

func (c *countingCache) Put(ctx context.Context, key string, resp *api.VerifyResponse) error {
	if err := c.runStore.Put(ctx, key, resp); err != nil {
		return err
	}
	c.puts.Add(1)
	return nil
}

func (c *countingCache) PutEncoded(ctx context.Context, key string, answer []byte) error {
	if err := c.runStore.PutEncoded(ctx, key, answer); err != nil {
		return err
	}
	c.puts.Add(1)
	return nil
}

// sharedCountingCache is a countingCache over a shared cache: it keeps the
// Release of pipeline.SharedCache.
type sharedCountingCache struct {
	*countingCache
	release func(ctx context.Context, key string) error
}

func (c sharedCountingCache) Release(ctx context.Context, key string) error {
	return c.release(ctx, key)
}

// Cleared is what ClearCache did.
type Cleared struct {
	Entries int64  // the entries removed from a cache that could be read
	Path    string // the cache as messages name it
	// Replaced: the cache was damaged, or a bbolt one of an older
	// addrclean, and a new, empty one took its place (its entries lost).
	Replaced bool
}

// ClearCache is 'addrclean cache clear': every entry is removed, and a
// damaged file, which cannot be cleared entry by entry, is replaced by a
// new cache: it is the advice of every error about a damaged cache. A file
// that is no cache at all is left alone (cache.ErrNotCache).
func ClearCache(ctx context.Context, spec string, o CacheOptions) (Cleared, error) {
	d, err := OpenCache(ctx, spec, o)
	if err == nil {
		n, err := d.Clear(ctx)
		if err == nil {
			return Cleared{Entries: n, Path: d.Path()}, d.Close()
		}
		_ = d.Close()
		if !errors.Is(err, cache.ErrCorrupt) {
			return Cleared{}, err
		}
	} else if !errors.Is(err, cache.ErrCorrupt) || errors.Is(err, cache.ErrNotCache) {
		return Cleared{}, err
	}
	if d, err = RecreateCache(spec, o, err); err != nil {
		return Cleared{}, err
	}
	return Cleared{Path: spec, Replaced: true}, d.Close()
}
