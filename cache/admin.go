package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/addrclean/addrclean/internal/sqlitefile"
)

// NamespaceStats describes one namespace.
type NamespaceStats struct {
	// ID is the namespace's id.
	ID string `json:"id"`
	// Label describes the service or reference; it never holds a key.
	Label string `json:"label"`
	// Entries is the number of stored answers.
	Entries int64 `json:"entries"`
	// Expired counts the entries older than the time to live given to Stats.
	Expired int64 `json:"expired"`
	// Damaged counts the entries that fail their checksum: they are
	// misses, and Prune removes them.
	Damaged int64 `json:"damaged"`
	// Oldest and Newest are the times of the oldest and newest readable
	// entries (zero when there are none).
	Oldest time.Time `json:"oldest"`
	Newest time.Time `json:"newest"`
}

// Stats describes a cache file.
type Stats struct {
	// Path is the file.
	Path string `json:"path"`
	// Size is the file's size in bytes (with its WAL, if any).
	Size int64 `json:"size"`
	// Entries is the total number of stored answers.
	Entries int64 `json:"entries"`
	// Damaged is the namespaces' total.
	Damaged int64 `json:"damaged"`
	// Namespaces are sorted by label.
	Namespaces []NamespaceStats `json:"namespaces"`
}

// scan calls fn with every stored answer, in key order, in pages of
// pruneChunk (each page read in its own statement, so that fn may write
// between pages), and whether its checksum passes.
func (d *DB) scan(ctx context.Context, fn func(ns, key string, at time.Time, ok bool) error, page func() error) error {
	if err := d.batch.Flush(); err != nil {
		return err
	}
	var lastNS, lastKey string
	for {
		n := 0
		err := d.f.Do(ctx, func(c *sql.Conn) error {
			rows, err := c.QueryContext(ctx,
				`SELECT namespace, key, obtained_ms, answer, crc FROM cache_answers WHERE (namespace, key) > (?, ?) ORDER BY namespace, key LIMIT ?`,
				lastNS, lastKey, pruneChunk)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var (
					ns, key string
					at, crc int64
					body    []byte
				)
				if err := rows.Scan(&ns, &key, &at, &body, &crc); err != nil {
					return err
				}
				n++
				lastNS, lastKey = ns, key
				if err := fn(ns, key, time.UnixMilli(at), crc>>32 == 0 && uint32(crc) == checksum(ns, key, at, body)); err != nil {
					return err
				}
			}
			return rows.Err()
		})
		if err != nil {
			return err
		}
		if page != nil {
			if err := page(); err != nil {
				return err
			}
		}
		if n < pruneChunk {
			return nil
		}
	}
}

// Stats counts the entries of every namespace, those older than ttl (none
// when ttl is 0) and those that fail their checksum. It reads and checks
// every entry. A cancelled ctx stops it with its error.
func (d *DB) Stats(ctx context.Context, ttl time.Duration) (Stats, error) {
	st := Stats{Path: d.path, Namespaces: []NamespaceStats{}}
	labels := map[string]string{}
	err := d.f.Do(ctx, func(c *sql.Conn) error {
		rows, err := c.QueryContext(ctx, "SELECT id, label FROM cache_namespaces")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, label string
			if err := rows.Scan(&id, &label); err != nil {
				return err
			}
			labels[id] = label
		}
		return rows.Err()
	})
	if err != nil {
		return Stats{}, err
	}
	tl := newTally(ttl, time.Now())
	for id, label := range labels {
		tl.label(id, label)
	}
	err = d.scan(ctx, func(id, _ string, at time.Time, ok bool) error {
		tl.add(id, at, ok)
		return nil
	}, nil)
	if err != nil {
		return Stats{}, err
	}
	for _, s := range []string{"", "-wal"} {
		if fi, err := os.Stat(d.path + s); err == nil {
			st.Size += fi.Size()
		}
	}
	tl.into(&st)
	return st, nil
}

// tally counts the entries of a cache of either kind for Stats.
type tally struct {
	ttl  time.Duration
	now  time.Time
	byID map[string]*NamespaceStats
}

func newTally(ttl time.Duration, now time.Time) *tally {
	return &tally{ttl: ttl, now: now, byID: map[string]*NamespaceStats{}}
}

// label names namespace id.
func (t *tally) label(id, label string) { t.byID[id] = &NamespaceStats{ID: id, Label: label} }

// add counts an entry of namespace id stored at at; ok is false for one
// that fails its checksum.
func (t *tally) add(id string, at time.Time, ok bool) {
	ns := t.byID[id]
	if ns == nil {
		ns = &NamespaceStats{ID: id, Label: "(no label)"}
		t.byID[id] = ns
	}
	ns.Entries++
	switch {
	case !ok:
		ns.Damaged++
		return
	case t.ttl > 0 && t.now.Sub(at) > t.ttl:
		ns.Expired++
	}
	if ns.Oldest.IsZero() || at.Before(ns.Oldest) {
		ns.Oldest = at
	}
	if at.After(ns.Newest) {
		ns.Newest = at
	}
}

// into adds the totals and the namespaces, sorted by label, to st.
func (t *tally) into(st *Stats) {
	for _, ns := range t.byID {
		st.Entries += ns.Entries
		st.Damaged += ns.Damaged
		st.Namespaces = append(st.Namespaces, *ns)
	}
	sort.Slice(st.Namespaces, func(i, j int) bool { return st.Namespaces[i].Label < st.Namespaces[j].Label })
}

// pruneChunk bounds the entries read (and deleted) in one transaction, so
// that pruning a large file keeps memory flat and commits as it goes.
var pruneChunk = 10000

// Pruned counts the entries Prune removed.
type Pruned struct {
	// Expired were older than the time to live.
	Expired int64
	// Unusable failed their checksum: they could only ever be misses.
	Unusable int64
}

// Prune removes the entries older than ttl from every namespace, and those
// that fail their checksum. A cancelled ctx stops it with its error; the
// pages deleted before stay deleted.
func (d *DB) Prune(ctx context.Context, ttl time.Duration) (Pruned, error) {
	var p Pruned
	if ttl <= 0 {
		return p, fmt.Errorf("cache %s: time to live %s: want a positive duration", d.path, ttl)
	}
	if err := d.f.Write(ctx); err != nil {
		return p, err
	}
	now := time.Now()
	type key struct{ ns, key string }
	var old []key
	err := d.scan(ctx, func(ns, k string, at time.Time, ok bool) error {
		switch {
		case !ok:
			p.Unusable++
		case now.Sub(at) > ttl:
			p.Expired++
		default:
			return nil
		}
		old = append(old, key{ns, k})
		return nil
	}, func() error {
		// Deleted between pages: the next page starts after the last key read.
		err := d.f.Tx(ctx, func(tx *sql.Tx) error {
			for _, o := range old {
				if _, err := tx.ExecContext(ctx, "DELETE FROM cache_answers WHERE namespace = ? AND key = ?", o.ns, o.key); err != nil {
					return err
				}
			}
			return nil
		})
		old = old[:0]
		return err
	})
	return p, err
}

// Clear removes every namespace and entry, returns how many entries it
// removed, and gives the file's pages back (VACUUM). A cancelled ctx stops
// it with its error.
func (d *DB) Clear(ctx context.Context) (int64, error) {
	if err := errors.Join(d.batch.Flush(), d.f.Write(ctx)); err != nil {
		return 0, err
	}
	var removed int64
	err := d.f.Tx(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, "DELETE FROM cache_answers")
		if err != nil {
			return err
		}
		removed, _ = r.RowsAffected()
		_, err = tx.ExecContext(ctx, "DELETE FROM cache_namespaces")
		return err
	})
	if err != nil {
		return 0, err
	}
	err = d.f.Do(ctx, func(c *sql.Conn) error {
		_, err := c.ExecContext(ctx, "VACUUM")
		return err
	})
	return removed, err
}

// Recreate replaces the damaged cache at path (or a bbolt cache of an older
// addrclean) with a new, empty one: what 'addrclean cache clear' does when
// Open or Clear reports ErrCorrupt, since a file SQLite cannot read cannot
// be cleared entry by entry. The old entries are lost. A file locked by
// another process is refused (ErrLocked), and so is a file that is not a
// cache (ErrNotCache): the path may be the wrong one.
func Recreate(path string, opts Options) (*DB, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	f, err := sqlitefile.Open(context.Background(), path, fileOptions(opts.Timeout))
	switch {
	case err == nil:
		_ = f.Close() // a cache in good order: cleared all the same
	case errors.Is(err, ErrLocked), errors.Is(err, ErrNotCache) && !errors.Is(err, sqlitefile.ErrOldBbolt), !errors.Is(err, ErrCorrupt):
		return nil, err
	}
	if err := sqlitefile.Remove(path); err != nil {
		return nil, fmt.Errorf("cache %s: %w", path, err)
	}
	opts.MustExist = false
	return Open(path, opts)
}
