package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/cache"
	"github.com/addrclean/addrclean/internal/cliflag"
	"github.com/addrclean/addrclean/runs"
)

// cacheLockTimeout is how long a run or a cache command waits for another
// process's lock on the cache file.
var cacheLockTimeout = cache.DefaultTimeout

// cacheOptions are how a run (!mustExist) or a cache command (mustExist)
// opens --cache.
func cacheOptions(mustExist bool, log zerolog.Logger) runs.CacheOptions {
	return runs.CacheOptions{Timeout: cacheLockTimeout, MustExist: mustExist, Logger: log}
}

// service is what answers the run; its key is read when it is needed.
func (o *runOptions) service() runs.Service {
	return runs.Service{BaseURL: o.baseURL, Reference: o.reference, Version: version, Key: func() (api.Secret, error) {
		return readAPIKey(connectOptions{apiKeyFile: o.apiKeyFile, apiKeyFlag: o.apiKeyFlag})
	}}
}

// cmdCache is 'addrclean cache stats|prune|clear'.
func cmdCache(ctx context.Context, args []string, s streams) (err error) {
	defer func() {
		// Stopped by Ctrl-C (on a slow database, say): exit 130, as a run.
		if err != nil && ctx.Err() != nil {
			err = withCode(exitInterrupted, err)
		}
	}()
	var (
		path   string
		ttl    time.Duration
		asJSON bool
	)
	fs := cliflag.New("cache", cacheUsage, s.err)
	fs.StringVar(&path, "cache", "", "cache file `PATH`, or postgres:// DBURL (required)")
	fs.DurationVar(&ttl, "cache-ttl", cache.DefaultTTL, "age beyond which entries are expired (stats) or removed (prune)")
	fs.BoolVar(&asJSON, "json", false, "stats as one JSON object")
	pos, err := cliflag.Interspersed(fs, args)
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
	d, err := runs.OpenCache(ctx, path, cacheOptions(true, zerolog.Nop()))
	if err != nil {
		return err
	}
	defer d.Close()
	switch action {
	case "stats":
		st, err := d.Stats(ctx, ttl)
		if err != nil {
			return withCode(exitFatal, err)
		}
		if asJSON {
			enc := json.NewEncoder(s.out)
			enc.SetIndent("", "  ")
			return enc.Encode(st)
		}
		return st.WriteTable(s.out, ttl)
	case "prune":
		n, err := d.Prune(ctx, ttl)
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

// clearCache is 'addrclean cache clear' (runs.ClearCache).
func clearCache(ctx context.Context, path string, s streams) error {
	c, err := runs.ClearCache(ctx, path, cacheOptions(true, zerolog.Nop()))
	switch {
	case c.Replaced:
		fmt.Fprintf(s.out, "cache %s was damaged or of an older format: replaced it with a new, empty cache (its entries are lost)\n", path)
	case c.Path != "":
		fmt.Fprintf(s.out, "cleared %d entries from %s\n", c.Entries, c.Path)
	}
	return err
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
	case o.cacheLeaseSet && !runs.IsSharedCache(o.cache):
		return usageErrorf("--cache-lease is for a cache shared in PostgreSQL (--cache postgres://...)")
	case o.cacheLease < time.Second:
		return usageErrorf("--cache-lease %v: want a duration of a second or more, such as 30s", o.cacheLease)
	// --rate-shared needs the database where the runners meet, and a rate
	// to share between them.
	case o.rateShared && !runs.IsSharedCache(o.cache):
		return usageErrorf("--rate-shared paces the runners together through the database of a shared cache: give --cache postgres://... (the same for every runner)")
	case o.rateShared && (o.rate == 0 || (o.baseURL == "" && !o.rateSet)):
		return usageErrorf("--rate-shared shares --rate between the runners: give --rate, the requests per second of the whole set")
	}
	return nil
}
