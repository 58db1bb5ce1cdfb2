package runs

import (
	"context"
	"errors"
	"iter"
	"time"

	"github.com/addrclean/addrclean/api"
)

// aheadStore is a cache file's namespace that an estimate can ask about
// all its requests at once, after reading its rows ahead (*cache.Store).
type aheadStore interface {
	Get(ctx context.Context, key string) (*api.VerifyResponse, bool, error)
	CountAnswered(ctx context.Context, n int, has func(digest uint64) bool, all iter.Seq[uint64]) (int64, error)
	ScanAhead(ctx context.Context) (stop func())
}

// aheadCache is a cache file that a dry run opens in the background while
// it reads its input: opening checks every page of the file, and its rows
// are then read ahead (cache.Store.ScanAhead), on the other core. The
// estimate asks it once, at the end (it is a pipeline.SetCountingCache),
// and waits for the open then; an open that fails calls fail at once, so
// that the reading stops.
type aheadCache struct {
	done  chan struct{}
	store aheadStore // nil: the cache answers nothing (see PeekCache)
	err   error
	stop  func() // the store's ScanAhead
	close func()
}

// peekCacheAhead starts PeekCache of the file spec in the background.
// Close the aheadCache.
func peekCacheAhead(ctx context.Context, spec string, svc Service, ttl time.Duration, o CacheOptions, fail func(error)) *aheadCache {
	a := &aheadCache{done: make(chan struct{}), stop: func() {}, close: func() {}}
	go func() {
		defer close(a.done)
		c, closeCache, err := PeekCache(ctx, spec, svc, ttl, o)
		if err != nil {
			a.err = err
			fail(err)
			return
		}
		a.close = closeCache
		if st, ok := c.(aheadStore); ok {
			a.store = st
			a.stop = st.ScanAhead(ctx)
		} else if c != nil {
			a.err = errors.New("--cache: not a cache file") // PeekCache of a file is a *cache.Store
			fail(a.err)
		}
	}()
	return a
}

// wait waits for the open and returns its error.
func (a *aheadCache) wait(ctx context.Context) error {
	select {
	case <-a.done:
		return a.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Get is the store's Get, once open.
func (a *aheadCache) Get(ctx context.Context, key string) (*api.VerifyResponse, bool, error) {
	if err := a.wait(ctx); err != nil || a.store == nil {
		return nil, false, err
	}
	return a.store.Get(ctx, key)
}

// Put refuses: a dry run stores nothing.
func (a *aheadCache) Put(context.Context, string, *api.VerifyResponse) error {
	return errors.New("--dry-run: the cache is read only")
}

// CountAnswered is the store's, once open; a cache that does not exist or
// is damaged (the run starts an empty one) answers nothing.
func (a *aheadCache) CountAnswered(ctx context.Context, n int, has func(digest uint64) bool, all iter.Seq[uint64]) (int64, error) {
	if err := a.wait(ctx); err != nil || a.store == nil {
		return 0, err
	}
	return a.store.CountAnswered(ctx, n, has, all)
}

// Close stops the reading ahead and closes the file.
func (a *aheadCache) Close() {
	<-a.done
	a.stop()
	a.close()
}
