package cache

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"
)

// NamespaceStats describes one namespace.
type NamespaceStats struct {
	// ID is the namespace's bucket name.
	ID string `json:"id"`
	// Label describes the service or reference; it never holds a key.
	Label string `json:"label"`
	// Entries is the number of stored answers.
	Entries int64 `json:"entries"`
	// Expired counts the entries older than the time to live given to Stats.
	Expired int64 `json:"expired"`
	// Damaged counts the entries that fail their checksum, and Outdated
	// those an older version wrote (without one): both are misses, and
	// Prune removes them.
	Damaged  int64 `json:"damaged"`
	Outdated int64 `json:"outdated"`
	// Oldest and Newest are the times of the oldest and newest readable
	// entries (zero when there are none).
	Oldest time.Time `json:"oldest"`
	Newest time.Time `json:"newest"`
}

// Stats describes a cache file.
type Stats struct {
	// Path is the file.
	Path string `json:"path"`
	// Size is the file's size in bytes (bbolt reuses freed pages but does
	// not shrink the file).
	Size int64 `json:"size"`
	// Entries is the total number of stored answers.
	Entries int64 `json:"entries"`
	// Damaged and Outdated are the namespaces' totals.
	Damaged  int64 `json:"damaged"`
	Outdated int64 `json:"outdated"`
	// Namespaces are sorted by label.
	Namespaces []NamespaceStats `json:"namespaces"`
}

// Stats counts the entries of every namespace, those older than ttl (none
// when ttl is 0) and those that cannot be used. It reads and checks every
// entry.
func (d *DB) Stats(ttl time.Duration) (Stats, error) {
	st := Stats{Path: d.path, Namespaces: []NamespaceStats{}}
	now := d.now()
	err := d.b.View(func(tx *bolt.Tx) error {
		st.Size = tx.Size()
		labels := tx.Bucket(metaBucket).Bucket(labelsBucket)
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if bytes.Equal(name, metaBucket) {
				return nil
			}
			ns := NamespaceStats{ID: string(name), Label: string(labels.Get(name))}
			err := b.ForEach(func(k, v []byte) error {
				ns.Entries++
				at, _, state := decodeEntry(k, v)
				switch state {
				case entryDamaged:
					ns.Damaged++
					return nil
				case entryOutdated:
					ns.Outdated++
					return nil
				}
				if ttl > 0 && now.Sub(at) > ttl {
					ns.Expired++
				}
				if ns.Oldest.IsZero() || at.Before(ns.Oldest) {
					ns.Oldest = at
				}
				if at.After(ns.Newest) {
					ns.Newest = at
				}
				return nil
			})
			st.Entries += ns.Entries
			st.Damaged += ns.Damaged
			st.Outdated += ns.Outdated
			st.Namespaces = append(st.Namespaces, ns)
			return err
		})
	})
	if err != nil {
		return Stats{}, err
	}
	if fi, err := os.Stat(d.path); err == nil {
		st.Size = fi.Size()
	}
	sort.Slice(st.Namespaces, func(i, j int) bool { return st.Namespaces[i].Label < st.Namespaces[j].Label })
	return st, nil
}

// pruneChunk bounds the entries deleted in one transaction, so that pruning
// a large file keeps memory flat and commits as it goes.
var pruneChunk = 10000

// Pruned counts the entries Prune removed.
type Pruned struct {
	// Expired were older than the time to live.
	Expired int64
	// Unusable failed their checksum or were written by an older version:
	// they could only ever be misses.
	Unusable int64
}

// Prune removes the entries older than ttl from every namespace, and those
// that fail their checksum or were written by an older version.
func (d *DB) Prune(ttl time.Duration) (Pruned, error) {
	var p Pruned
	if ttl <= 0 {
		return p, fmt.Errorf("cache %s: time to live %s: want a positive duration", d.path, ttl)
	}
	names, err := d.namespaces()
	if err != nil {
		return p, err
	}
	now := d.now()
	for _, name := range names {
		var from []byte // where the next chunk starts
		for done := false; !done; {
			var chunk Pruned
			err := d.b.Update(func(tx *bolt.Tx) error {
				chunk = Pruned{}
				b := tx.Bucket(name)
				if b == nil {
					done = true
					return nil
				}
				var old [][]byte
				c := b.Cursor()
				k, v := c.First()
				if from != nil {
					k, v = c.Seek(from)
				}
				for ; k != nil && len(old) < pruneChunk; k, v = c.Next() {
					switch at, _, state := decodeEntry(k, v); {
					case state != entryOK:
						chunk.Unusable++
					case now.Sub(at) > ttl:
						chunk.Expired++
					default:
						continue
					}
					old = append(old, bytes.Clone(k))
				}
				if k == nil {
					done = true
				} else {
					from = bytes.Clone(k)
				}
				// Deleting after the walk: a cursor skips entries when the
				// bucket changes under it.
				for _, k := range old {
					if err := b.Delete(k); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return p, err
			}
			p.Expired += chunk.Expired
			p.Unusable += chunk.Unusable
		}
	}
	return p, nil
}

// Clear removes every namespace and entry, and returns how many entries it
// removed. The file keeps its size; bbolt reuses the freed pages.
func (d *DB) Clear() (int64, error) {
	names, err := d.namespaces()
	if err != nil {
		return 0, err
	}
	var removed int64
	err = d.b.Update(func(tx *bolt.Tx) error {
		labels := tx.Bucket(metaBucket).Bucket(labelsBucket)
		for _, name := range names {
			if b := tx.Bucket(name); b != nil {
				removed += int64(b.Stats().KeyN)
				if err := tx.DeleteBucket(name); err != nil {
					return err
				}
			}
			if err := labels.Delete(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return removed, nil
}

func (d *DB) namespaces() ([][]byte, error) {
	var names [][]byte
	err := d.b.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			if !bytes.Equal(name, metaBucket) {
				names = append(names, bytes.Clone(name))
			}
			return nil
		})
	})
	return names, err
}

// Recreate replaces the damaged cache at path with a new, empty one: what
// 'addrclean cache clear' does when Open or Clear reports ErrCorrupt, since
// a file bbolt cannot read cannot be cleared entry by entry. The old
// entries are lost. It waits for the lock as Open does (ErrLocked) and
// holds it from before it empties the file until the new cache is open. It
// refuses a file that is not a cache (ErrNotCache): one without bbolt's
// magic number, or a readable bbolt file without addrclean's marker.
func Recreate(path string, opts Options) (*DB, error) {
	return openFile(path, opts, true)
}
