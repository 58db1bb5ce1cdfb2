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
)

// cacheNow is the clock of the result cache; tests move it.
var cacheNow = time.Now

// cacheLockTimeout is how long a run or a cache command waits for another
// process's lock on the cache file.
var cacheLockTimeout = cache.DefaultTimeout

// openCache opens the cache file of --cache: a locked one is fatal (exit 1).
// A run (!mustExist) moves a damaged cache, or a bbolt one of an older
// addrclean, aside and starts a new one, saying so on log; the housekeeping
// commands (mustExist) stop at it (exit 1) and say what to do.
func openCache(path string, mustExist bool, log zerolog.Logger) (*cache.DB, error) {
	d, err := cache.Open(path, cacheOptions(mustExist, log))
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
func (o *runOptions) cacheStore(cdb *cache.DB, embedded bool, log zerolog.Logger) (_ pipeline.Cache, logCached func(hits int64), _ error) {
	if cdb == nil {
		return nil, func(int64) {}, nil
	}
	ns, err := cacheNamespace(*o, embedded)
	if err != nil {
		return nil, nil, err
	}
	st, err := cdb.Store(ns, o.cacheTTL)
	if err != nil {
		return nil, nil, withCode(exitFatal, err)
	}
	cstore := &countingCache{Store: st}
	log.Info().Str("cache", o.cache).Str("namespace", ns.Label).Dur("cache_ttl", o.cacheTTL).Msg("reusing answers from the cache")
	return cstore, func(hits int64) {
		log.Info().Str("cache", cdb.Path()).Str("namespace", ns.Label).Int64("cache_hits", hits).Int64("stored", cstore.puts.Load()).
			Msgf("cache: %d answer(s) reused, %d stored", hits, cstore.puts.Load())
		if n := cstore.Damaged(); n > 0 {
			log.Warn().Str("cache", cdb.Path()).Int64("damaged", n).
				Msgf("cache: %d entries failed their checksum and were verified again; if this recurs, check the disk, or start afresh with 'addrclean cache clear --cache %s'", n, cdb.Path())
		}
	}, nil
}

// countingCache counts the answers a run stored, for its log line.
type countingCache struct {
	*cache.Store
	puts atomic.Int64
}

func (c *countingCache) Put(ctx context.Context, key string, resp *api.VerifyResponse) error {
	if err := c.Store.Put(ctx, key, resp); err != nil {
		return err
	}
	c.puts.Add(1)
	return nil
}

const cacheUsage = `Usage: addrclean cache stats|prune|clear --cache PATH [flags]

Housekeeping of the result cache that 'addrclean run --cache PATH' keeps.

  stats   entries per namespace (service and key hash, or embedded reference),
          how many are older than --cache-ttl or damaged, the oldest and
          newest, the file size
  prune   remove the entries older than --cache-ttl, and the damaged ones
          (they are only ever verified again)
  clear   remove every entry (asks nothing; the file shrinks); a damaged file
          that cannot be read, or a bbolt cache of an older addrclean, is
          replaced by a new, empty one

The cache is an SQLite file (schema: docs/storage.md); sqlite3 can read it
when no run holds it. Every command checks the whole file first and stops at
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

Flags:
`

// cmdCache is 'addrclean cache stats|prune|clear'.
func cmdCache(_ context.Context, args []string, s streams) error {
	var (
		path   string
		ttl    time.Duration
		asJSON bool
	)
	fs := newFlagSet("cache", cacheUsage, s.err)
	fs.StringVar(&path, "cache", "", "cache file `PATH` (required)")
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
		return clearCache(path, s)
	}
	d, err := openCache(path, true, zerolog.Nop())
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
		fmt.Fprintf(s.out, "pruned %d entries older than %s from %s\n", n.Expired, ttl, path)
		if n.Unusable > 0 {
			fmt.Fprintf(s.out, "pruned %d damaged entries from %s\n", n.Unusable, path)
		}
	}
	return d.Close()
}

// clearCache is 'addrclean cache clear': every entry is removed, and a
// damaged file, which cannot be cleared entry by entry, is replaced by a
// new cache. It is the advice of every error about a damaged cache.
func clearCache(path string, s streams) error {
	d, err := openCache(path, true, zerolog.Nop())
	if err == nil {
		n, err := d.Clear()
		if err == nil {
			fmt.Fprintf(s.out, "cleared %d entries from %s\n", n, path)
			return d.Close()
		}
		_ = d.Close()
		if !errors.Is(err, cache.ErrCorrupt) {
			return withCode(exitFatal, err)
		}
	} else if !errors.Is(err, cache.ErrCorrupt) || errors.Is(err, cache.ErrNotCache) {
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
	}
	return nil
}
