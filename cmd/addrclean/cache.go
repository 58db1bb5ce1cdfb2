package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/cache"
	"github.com/addrclean/addrclean/pipeline"
	sampledata "github.com/addrclean/addrclean/sample_data"
	"github.com/addrclean/addrclean/table"
)

// cacheNow is the clock of the result cache; tests move it.
var cacheNow = time.Now

// cacheLockTimeout is how long a run or a cache command waits for another
// process's lock on the cache file.
var cacheLockTimeout = cache.DefaultTimeout

// cacheDB is the cache of --cache: an SQLite file (*cache.DB) or a
// PostgreSQL database shared by runners (*cache.PG).
type cacheDB interface {
	// Path is the file, or the URL without its password.
	Path() string
	Stats(ttl time.Duration) (cache.Stats, error)
	Prune(ttl time.Duration) (cache.Pruned, error)
	Clear() (int64, error)
	Close() error
}

// openCache opens the cache of --cache: a file path (or sqlite:PATH), or a
// postgres:// URL. A locked file, or a database that cannot be reached, is
// fatal (exit 1); a URL that cannot be read is a usage error. A run
// (!mustExist) moves a damaged file, or a bbolt one of an older addrclean,
// aside and starts a new one, saying so on log, and creates a database's
// tables; the housekeeping commands (mustExist) stop at either (exit 1) and
// say what to do.
func openCache(ctx context.Context, spec string, lease time.Duration, mustExist bool, log zerolog.Logger) (cacheDB, error) {
	if table.IsURL(spec) {
		u, err := table.ParseURL(spec)
		if err != nil {
			return nil, usageErrorf("--cache: %v", err)
		}
		if u.Scheme == "postgres" {
			warnURLPassword(log, u)
			p, err := cache.OpenPG(ctx, u.Raw, u.Display, cache.PGOptions{Lease: lease, MustExist: mustExist, Now: cacheNow, Logger: log})
			if errors.Is(err, cache.ErrBadURL) {
				return nil, usageErrorf("--cache: %v", err)
			}
			if err != nil {
				return nil, withCode(exitFatal, err)
			}
			return p, nil
		}
		spec = u.Path
	}
	d, err := cache.Open(spec, cacheOptions(mustExist, log))
	if err != nil {
		return nil, withCode(exitFatal, err)
	}
	return d, nil
}

func cacheOptions(mustExist bool, log zerolog.Logger) cache.Options {
	return cache.Options{Timeout: cacheLockTimeout, MustExist: mustExist, Rebuild: !mustExist, Now: cacheNow, Logger: log}
}

// cacheNamespace is the namespace of the run's answers: the live service and
// the SHA-256 of its key, or the embedded service's build and reference.
func cacheNamespace(o runOptions, embedded bool) (cache.Namespace, error) {
	if !embedded {
		key, err := readAPIKey(connectOptions{apiKeyFile: o.apiKeyFile, apiKeyFlag: o.apiKeyFlag})
		if err != nil {
			return cache.Namespace{}, err
		}
		return cache.LiveNamespace(o.baseURL, key), nil
	}
	if o.reference == "" {
		return cache.EmbeddedNamespace(referenceName(""), version, bytes.NewReader(sampledata.ReferenceBytes()))
	}
	f, err := os.Open(o.reference)
	if err != nil {
		return cache.Namespace{}, withCode(exitFatal, fmt.Errorf("--reference: %w", err))
	}
	defer f.Close()
	ns, err := cache.EmbeddedNamespace(o.reference, version, f)
	if err != nil {
		return cache.Namespace{}, withCode(exitFatal, err)
	}
	return ns, nil
}

// cacheStore is the run's namespace of --cache (nil without one). logCached
// reports what the run took from it and gave to it, and the entries it
// could not use (damaged, a warning): verified again.
func (o *runOptions) cacheStore(cdb cacheDB, embedded bool, log zerolog.Logger) (_ pipeline.Cache, logCached func(hits int64), _ error) {
	if cdb == nil {
		return nil, func(int64) {}, nil
	}
	ns, err := cacheNamespace(*o, embedded)
	if err != nil {
		return nil, nil, err
	}
	var (
		cstore *countingCache
		pc     pipeline.Cache
		waited func() int64
		took   func() int64
	)
	switch d := cdb.(type) {
	case *cache.DB:
		st, err := d.Store(ns, o.cacheTTL)
		if err != nil {
			return nil, nil, withCode(exitFatal, err)
		}
		cstore = &countingCache{runStore: st}
		pc = cstore
	case *cache.PG:
		st, err := d.Store(ns, o.cacheTTL)
		if err != nil {
			return nil, nil, withCode(exitFatal, err)
		}
		cstore = &countingCache{runStore: st}
		pc = sharedCountingCache{countingCache: cstore, release: st.Release}
		waited, took = st.Waited, st.TakenOver
	}
	log.Info().Str("cache", cdb.Path()).Str("namespace", ns.Label).Dur("cache_ttl", o.cacheTTL).Msg("reusing answers from the cache")
	return pc, func(hits int64) {
		ev := log.Info().Str("cache", cdb.Path()).Str("namespace", ns.Label).Int64("cache_hits", hits).Int64("stored", cstore.puts.Load())
		if waited != nil {
			// Of the hits, those that another runner was paying for.
			ev.Int64("waited_for_other_runners", waited()).Int64("claims_taken_over", took()).
				Msgf("cache: %d answer(s) reused (%d waited for from another runner), %d stored; %d claim(s) of stopped runners taken over",
					hits, waited(), cstore.puts.Load(), took())
		} else {
			ev.Msgf("cache: %d answer(s) reused, %d stored", hits, cstore.puts.Load())
		}
		if n := cstore.Damaged(); n > 0 {
			log.Warn().Str("cache", cdb.Path()).Int64("damaged", n).
				Msgf("cache: %d entries failed their checksum and were verified again; if this recurs, check the disk, or start afresh with 'addrclean cache clear --cache %s'", n, cdb.Path())
		}
	}, nil
}

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

const cacheUsage = `Usage: addrclean cache stats|prune|clear --cache PATH|DBURL [flags]

Housekeeping of the result cache that 'addrclean run --cache PATH' keeps, in
an SQLite file or, shared by runners, in a PostgreSQL database
(--cache postgres://user@host/db; docs/shared-cache.md).

  stats   entries per namespace (service and key hash, or embedded reference),
          how many are older than --cache-ttl or damaged, the oldest and
          newest, the file size
  prune   remove the entries older than --cache-ttl, and the damaged ones
          (they are only ever verified again)
  clear   remove every entry (asks nothing; the file shrinks); a damaged file
          that cannot be read, or a bbolt cache of an older addrclean, is
          replaced by a new, empty one

The cache is an SQLite file (schema: docs/storage.md); sqlite3 can read it
when no run holds it. In PostgreSQL, the same tables in the URL's schema;
runs may go on while the commands work there (clear leaves live claims). Every command checks the whole file first and stops at
a damaged one (a run moves it aside and starts a new one, saying so).
A cache in use by a run is locked: the command waits a second, then fails.
Exit codes: 0 done; 1 the cache is missing, locked or damaged (or, for clear,
not a cache at all); 2 usage error.

Examples:
  What the cache holds, and how much of it is past 30 days:
    addrclean cache stats --cache ~/.addrclean.cache
  The same for a script:
    addrclean cache stats --json --cache ~/.addrclean.cache
  Drop the answers older than a week (a weekly cron job):
    addrclean cache prune --cache-ttl 168h --cache ~/.addrclean.cache
  Start again from nothing:
    addrclean cache clear --cache ~/.addrclean.cache
  The cache several machines share (the password in ~/.pgpass):
    addrclean cache stats --cache postgres://addrclean@db.internal/verify

Flags:
`

// cmdCache is 'addrclean cache stats|prune|clear'.
func cmdCache(ctx context.Context, args []string, s streams) error {
	var (
		path   string
		ttl    time.Duration
		asJSON bool
	)
	fs := newFlagSet("cache", cacheUsage, s.err)
	fs.StringVar(&path, "cache", "", "cache file `PATH`, or postgres:// DBURL (required)")
	fs.DurationVar(&ttl, "cache-ttl", cache.DefaultTTL, "age beyond which entries are expired (stats) or removed (prune)")
	fs.BoolVar(&asJSON, "json", false, "stats as one JSON object")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return usageErrorf("cache takes one action, stats, prune or clear; got %d", len(pos))
	}
	action := pos[0]
	switch {
	case action != "stats" && action != "prune" && action != "clear":
		fs.Usage()
		return usageErrorf("cache: unknown action %q: want stats, prune or clear", action)
	case path == "":
		return usageErrorf("cache %s needs --cache PATH", action)
	case ttl <= 0:
		return usageErrorf("--cache-ttl %v: want a positive duration such as 720h", ttl)
	case asJSON && action != "stats":
		return usageErrorf("--json is for cache stats")
	}
	if action == "clear" {
		return clearCache(ctx, path, s)
	}
	d, err := openCache(ctx, path, 0, true, zerolog.Nop())
	if err != nil {
		return err
	}
	defer d.Close()
	switch action {
	case "stats":
		st, err := d.Stats(ttl)
		if err != nil {
			return withCode(exitFatal, err)
		}
		if asJSON {
			enc := json.NewEncoder(s.out)
			enc.SetIndent("", "  ")
			return enc.Encode(st)
		}
		return printCacheStats(s.out, st, ttl)
	case "prune":
		n, err := d.Prune(ttl)
		if err != nil {
			return withCode(exitFatal, fmt.Errorf("pruned %d entries, then: %w", n.Expired+n.Unusable, err))
		}
		fmt.Fprintf(s.out, "pruned %d entries older than %s from %s\n", n.Expired, ttl, d.Path())
		if n.Unusable > 0 {
			fmt.Fprintf(s.out, "pruned %d damaged entries from %s\n", n.Unusable, d.Path())
		}
	}
	return d.Close()
}

// clearCache is 'addrclean cache clear': every entry is removed, and a
// damaged file, which cannot be cleared entry by entry, is replaced by a
// new cache. It is the advice of every error about a damaged cache.
func clearCache(ctx context.Context, path string, s streams) error {
	d, err := openCache(ctx, path, 0, true, zerolog.Nop())
	if err == nil {
		n, err := d.Clear()
		if err == nil {
			fmt.Fprintf(s.out, "cleared %d entries from %s\n", n, d.Path())
			return d.Close()
		}
		_ = d.Close()
		if !errors.Is(err, cache.ErrCorrupt) {
			return withCode(exitFatal, err)
		}
	} else if !errors.Is(err, cache.ErrCorrupt) || errors.Is(err, cache.ErrNotCache) || table.IsURL(path) {
		return err
	}
	d, err = cache.Recreate(path, cacheOptions(true, zerolog.Nop()))
	if err != nil {
		return withCode(exitFatal, err)
	}
	fmt.Fprintf(s.out, "cache %s was damaged or of an older format: replaced it with a new, empty cache (its entries are lost)\n", path)
	return d.Close()
}

// printCacheStats writes stats as a table.
func printCacheStats(w io.Writer, st cache.Stats, ttl time.Duration) error {
	fmt.Fprintf(w, "cache %s: %s, %d entries\n", st.Path, byteSize(st.Size), st.Entries)
	if st.Damaged > 0 {
		fmt.Fprintf(w, "%d damaged: misses, verified again; 'addrclean cache prune' removes them\n", st.Damaged)
	}
	if len(st.Namespaces) == 0 {
		_, err := fmt.Fprintln(w, "no namespaces")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "NAMESPACE\tENTRIES\tOLDER THAN %s\tDAMAGED\tOLDEST\tNEWEST\n", ttl)
	for _, ns := range st.Namespaces {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\n", ns.Label, ns.Entries, ns.Expired, ns.Damaged, stamp(ns.Oldest), stamp(ns.Newest))
	}
	return tw.Flush()
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// cacheFlagsError checks the cache flags of run.
func (o *runOptions) cacheFlagsError() error {
	switch {
	case o.cache == "" && o.cacheTTLSet:
		return usageErrorf("--cache-ttl needs --cache PATH")
	case o.cache == "" && o.markCached:
		return usageErrorf("--mark-cached needs --cache PATH")
	case o.cacheTTL <= 0:
		return usageErrorf("--cache-ttl %v: want a positive duration such as 720h", o.cacheTTL)
	case o.cache != "" && strings.TrimSpace(o.cache) == "":
		return usageErrorf("--cache %q: want a file path", o.cache)
	case o.cacheLeaseSet && !isPostgresURL(o.cache):
		return usageErrorf("--cache-lease is for a cache shared in PostgreSQL (--cache postgres://...)")
	case o.cacheLease < time.Second:
		return usageErrorf("--cache-lease %v: want a duration of a second or more, such as 30s", o.cacheLease)
	}
	return nil
}

// isPostgresURL reports a postgres:// or postgresql:// URL.
func isPostgresURL(s string) bool {
	u, err := table.ParseURL(s)
	return err == nil && u.Scheme == "postgres"
}
