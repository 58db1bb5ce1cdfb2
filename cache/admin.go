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
	// Oldest and Newest are the times of the oldest and newest entries
	// (zero when there are none).
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
	// Namespaces are sorted by label.
	Namespaces []NamespaceStats `json:"namespaces"`
}

// Stats counts the entries of every namespace, and those older than ttl
// (none when ttl is 0). It reads every entry's time.
func (d *DB) Stats(ttl time.Duration) (Stats, error) {
	st := Stats{Path: d.path, Namespaces: []NamespaceStats{}}
	now := d.now()
	err := d.view(func(tx *bolt.Tx) error {
		st.Size = tx.Size()
		labels := tx.Bucket(metaBucket).Bucket(labelsBucket)
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if bytes.Equal(name, metaBucket) {
				return nil
			}
			ns := NamespaceStats{ID: string(name), Label: string(labels.Get(name))}
			err := b.ForEach(func(_, v []byte) error {
				at, _, err := decodeEntry(v)
				if err != nil {
					return err
				}
				ns.Entries++
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

// Prune removes the entries older than ttl from every namespace and returns
// how many it removed.
func (d *DB) Prune(ttl time.Duration) (int64, error) {
	if ttl <= 0 {
		return 0, fmt.Errorf("cache %s: time to live %s: want a positive duration", d.path, ttl)
	}
	names, err := d.namespaces()
	if err != nil {
		return 0, err
	}
	now := d.now()
	var removed int64
	for _, name := range names {
		var from []byte // where the next chunk starts
		for done := false; !done; {
			err := d.update(func(tx *bolt.Tx) error {
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
					at, _, err := decodeEntry(v)
					if err != nil {
						return err
					}
					if now.Sub(at) > ttl {
						old = append(old, bytes.Clone(k))
					}
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
				removed += int64(len(old))
				return nil
			})
			if err != nil {
				return removed, err
			}
		}
	}
	return removed, nil
}

// Clear removes every namespace and entry, and returns how many entries it
// removed. The file keeps its size; bbolt reuses the freed pages.
func (d *DB) Clear() (int64, error) {
	names, err := d.namespaces()
	if err != nil {
		return 0, err
	}
	var removed int64
	err = d.update(func(tx *bolt.Tx) error {
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

// namespaces returns the bucket names of the namespaces.
func (d *DB) namespaces() ([][]byte, error) {
	var names [][]byte
	err := d.view(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			if !bytes.Equal(name, metaBucket) {
				names = append(names, bytes.Clone(name))
			}
			return nil
		})
	})
	return names, err
}
