// Package cache keeps verify answers across runs in one bbolt file, so that a
// re-run pays only for the addresses it has not seen within a time to live.
//
// A file holds namespaces, one per service and key (LiveNamespace) or per
// reference of the embedded service (EmbeddedNamespace); a namespace holds
// entries keyed by the SHA-256 of the pipeline's address key, each the time
// it was stored and the answer as JSON. Neither an API key nor an address
// key is written in clear. A Store is one namespace with a time to live: it
// satisfies pipeline.Cache.
//
// Every error names the file. A file locked by another process is reported
// after Options.Timeout (ErrLocked), a file that is not an addrclean cache
// or cannot be read is ErrCorrupt: callers stop rather than re-verify, so a
// broken cache never turns into a silent second bill. Answers are written
// with bbolt's Batch: concurrent Puts share one durable commit, so a killed
// process loses only the answers not yet committed, and the file opens
// cleanly afterwards.
package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/addrclean/addrclean/api"
)

// DefaultTimeout is how long Open waits for another process's lock.
const DefaultTimeout = time.Second

// DefaultTTL is how long an answer is reused (--cache-ttl).
const DefaultTTL = 30 * 24 * time.Hour

// batchDelay is bbolt's MaxBatchDelay for Puts.
const batchDelay = 2 * time.Millisecond

// ErrLocked is wrapped by Open's error when another process holds the file.
var ErrLocked = errors.New("locked by another addrclean process")

// ErrCorrupt is wrapped by every error about a file that is not an addrclean
// cache or that cannot be read.
var ErrCorrupt = errors.New("not a readable addrclean cache")

// ErrNotExist is wrapped by Open's error when Options.MustExist is set and
// there is no file.
var ErrNotExist = errors.New("does not exist")

// Names inside the file.
var (
	metaBucket   = []byte("addrclean") // format marker and namespace labels
	formatKey    = []byte("format")    // → formatValue
	formatValue  = []byte("addrclean-cache/1")
	labelsBucket = []byte("labels") // in metaBucket: namespace id → label
)

// entryVersion is the first byte of an entry: the layout that follows
// (8 bytes of big-endian Unix nanoseconds, then the answer as JSON).
const entryVersion = 1

const entryHeader = 1 + 8

// Options tune Open. The zero value is usable.
type Options struct {
	// Timeout is how long to wait for another process's lock (default
	// DefaultTimeout).
	Timeout time.Duration
	// MustExist refuses to create a missing file (housekeeping commands).
	MustExist bool
	// Now is the clock for storing and expiring entries (default time.Now).
	Now func() time.Time
}

// DB is an open cache file. It is safe for concurrent use.
type DB struct {
	db   *bolt.DB
	path string
	now  func() time.Time
}

// Open opens the cache file at path, creating it (mode 0600) unless
// opts.MustExist is set. A file locked by another process is an error
// wrapping ErrLocked; a file that is not an addrclean cache, or is damaged,
// an error wrapping ErrCorrupt.
func Open(path string, opts Options) (d *DB, err error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	fi, statErr := os.Stat(path)
	switch {
	case statErr == nil && fi.IsDir():
		return nil, fmt.Errorf("cache %s is a directory", path)
	case errors.Is(statErr, fs.ErrNotExist) && opts.MustExist:
		return nil, fmt.Errorf("cache %s %w", path, ErrNotExist)
	}
	defer func() {
		if p := recover(); p != nil {
			d, err = nil, fmt.Errorf("cache %s: %w: %v", path, ErrCorrupt, p)
		}
	}()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.Timeout})
	if err != nil {
		switch {
		case errors.Is(err, berrors.ErrTimeout):
			return nil, fmt.Errorf("cache %s is %w (waited %s)", path, ErrLocked, opts.Timeout)
		case errors.Is(err, fs.ErrPermission), errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("cache %s: %w", path, err)
		}
		return nil, fmt.Errorf("cache %s: %w: %v (move it away to start a new cache)", path, ErrCorrupt, err)
	}
	// Concurrent Puts wait this long for others to share their commit.
	// bbolt's default of 10ms made a lone Put cost 12ms; 2ms gives 2.8ms
	// alone and 0.26ms each from 16 goroutines (BenchmarkPut*).
	db.MaxBatchDelay = batchDelay
	d = &DB{db: db, path: path, now: opts.Now}
	if err := d.init(); err != nil {
		_ = db.Close()
		return nil, err
	}
	return d, nil
}

// init checks the format marker, writing it into a new file.
func (d *DB) init() error {
	return d.update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(metaBucket)
		if meta == nil {
			// A new file has no buckets at all; any other bbolt file is
			// someone else's.
			if k, _ := tx.Cursor().First(); k != nil {
				return fmt.Errorf("%w: a bbolt file of another program", ErrCorrupt)
			}
			var err error
			if meta, err = tx.CreateBucket(metaBucket); err != nil {
				return err
			}
			if err := meta.Put(formatKey, formatValue); err != nil {
				return err
			}
			_, err = meta.CreateBucket(labelsBucket)
			return err
		}
		if v := meta.Get(formatKey); !bytes.Equal(v, formatValue) {
			return fmt.Errorf("%w: unknown format %q", ErrCorrupt, v)
		}
		if meta.Bucket(labelsBucket) == nil {
			return fmt.Errorf("%w: no namespace labels", ErrCorrupt)
		}
		return nil
	})
}

// Path returns the file's path.
func (d *DB) Path() string { return d.path }

// Close releases the file and its lock.
func (d *DB) Close() error {
	if err := d.db.Close(); err != nil {
		return fmt.Errorf("cache %s: close: %w", d.path, err)
	}
	return nil
}

// view and update run fn in a transaction, turning a panic of bbolt on a
// damaged page into ErrCorrupt and naming the file in every error.
func (d *DB) view(fn func(*bolt.Tx) error) error {
	return d.wrap(func() error { return d.db.View(fn) })
}

func (d *DB) update(fn func(*bolt.Tx) error) error {
	return d.wrap(func() error { return d.db.Update(fn) })
}

func (d *DB) batch(fn func(*bolt.Tx) error) error {
	return d.wrap(func() error { return d.db.Batch(fn) })
}

func (d *DB) wrap(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("cache %s: %w: %v", d.path, ErrCorrupt, p)
		}
	}()
	if err := fn(); err != nil {
		return fmt.Errorf("cache %s: %w", d.path, err)
	}
	return nil
}

// Namespace is the part of a cache that holds the answers of one service
// and key, or of one reference of the embedded service: answers given under
// one are never used under another.
type Namespace struct {
	// ID names the namespace's bucket: a prefix and a SHA-256 in hex.
	ID string
	// Label describes it for people (cache stats); it never holds a key.
	Label string
}

// LiveNamespace is the namespace of a live service: the SHA-256 of the base
// URL (without a trailing slash), a NUL byte and the hex SHA-256 of the API
// key. The key itself is never stored; the label is the base URL without
// any user information.
func LiveNamespace(baseURL string, key api.Secret) Namespace {
	baseURL = strings.TrimRight(baseURL, "/")
	kh := sha256.Sum256([]byte(key))
	h := sha256.Sum256([]byte(baseURL + "\x00" + hex.EncodeToString(kh[:])))
	label := baseURL
	if u, err := url.Parse(baseURL); err == nil {
		u.User = nil
		label = u.String()
	}
	return Namespace{ID: "live-" + hex.EncodeToString(h[:]), Label: "live " + label + " (key sha256 " + hex.EncodeToString(kh[:4]) + "…)"}
}

// EmbeddedNamespace is the namespace of the embedded service over a
// reference file: the SHA-256 of "embedded", the build (a new matcher may
// answer differently) and the SHA-256 of the reference's bytes, read from
// ref. name labels it (the reference's path).
func EmbeddedNamespace(name, build string, ref io.Reader) (Namespace, error) {
	rh := sha256.New()
	if _, err := io.Copy(rh, ref); err != nil {
		return Namespace{}, fmt.Errorf("hashing the reference %s: %w", name, err)
	}
	refSum := hex.EncodeToString(rh.Sum(nil))
	h := sha256.Sum256([]byte("embedded\x00" + build + "\x00" + refSum))
	return Namespace{ID: "embedded-" + hex.EncodeToString(h[:]),
		Label: fmt.Sprintf("embedded, reference %s (sha256 %s…), build %s", name, refSum[:8], build)}, nil
}

// Store is one namespace of a DB with a time to live; it satisfies
// pipeline.Cache. It is safe for concurrent use.
type Store struct {
	d      *DB
	bucket []byte
	ttl    time.Duration
}

// Store returns the namespace ns of d, creating it, where answers older than
// ttl are misses (and are overwritten by the next Put).
func (d *DB) Store(ns Namespace, ttl time.Duration) (*Store, error) {
	if ttl <= 0 {
		return nil, fmt.Errorf("cache %s: time to live %s: want a positive duration", d.path, ttl)
	}
	if !validID(ns.ID) {
		return nil, fmt.Errorf("cache %s: invalid namespace id %q", d.path, ns.ID)
	}
	b := []byte(ns.ID)
	err := d.update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return err
		}
		return tx.Bucket(metaBucket).Bucket(labelsBucket).Put(b, []byte(ns.Label))
	})
	if err != nil {
		return nil, err
	}
	return &Store{d: d, bucket: b, ttl: ttl}, nil
}

// validID accepts namespace ids made by this package: they never collide
// with the meta bucket.
func validID(id string) bool {
	return (strings.HasPrefix(id, "live-") || strings.HasPrefix(id, "embedded-")) && len(id) < 200
}

// entryKey is the stored key of an address key.
func entryKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// Get returns the answer stored for key if it is younger than the store's
// time to live. A missing or expired entry is a miss (nil, false, nil); a
// read that fails or an entry that cannot be decoded is an error wrapping
// ErrCorrupt, never a miss.
func (s *Store) Get(_ context.Context, key string) (*api.VerifyResponse, bool, error) {
	var (
		resp *api.VerifyResponse
		ok   bool
	)
	now := s.d.now()
	err := s.d.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(s.bucket)
		if b == nil {
			return fmt.Errorf("%w: namespace %s is gone", ErrCorrupt, s.bucket)
		}
		v := b.Get(entryKey(key))
		if v == nil {
			return nil
		}
		at, body, err := decodeEntry(v)
		if err != nil {
			return err
		}
		if now.Sub(at) > s.ttl {
			return nil
		}
		// Unmarshal copies what it keeps, so the answer outlives the
		// transaction's memory map.
		var r api.VerifyResponse
		if err := json.Unmarshal(body, &r); err != nil {
			return fmt.Errorf("%w: entry: %v", ErrCorrupt, err)
		}
		resp, ok = &r, true
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("%w (read)", err)
	}
	return resp, ok, nil
}

// Put stores resp for key, stamped with the current time, replacing any
// older entry. It returns once the entry is durably committed; concurrent
// Puts share a commit.
func (s *Store) Put(_ context.Context, key string, resp *api.VerifyResponse) error {
	if resp == nil {
		return nil
	}
	body, err := json.Marshal(resp)
	if err != nil {
		return fmt.Errorf("cache %s: encoding an answer: %w", s.d.path, err)
	}
	v := make([]byte, entryHeader, entryHeader+len(body))
	v[0] = entryVersion
	binary.BigEndian.PutUint64(v[1:], uint64(s.d.now().UnixNano()))
	v = append(v, body...)
	k := entryKey(key)
	if err := s.d.batch(func(tx *bolt.Tx) error {
		b := tx.Bucket(s.bucket)
		if b == nil {
			return fmt.Errorf("%w: namespace %s is gone", ErrCorrupt, s.bucket)
		}
		return b.Put(k, v)
	}); err != nil {
		return fmt.Errorf("%w (write)", err)
	}
	return nil
}

// decodeEntry splits a stored value into its time and JSON body.
func decodeEntry(v []byte) (time.Time, []byte, error) {
	if len(v) < entryHeader || v[0] != entryVersion {
		return time.Time{}, nil, fmt.Errorf("%w: entry of unknown layout", ErrCorrupt)
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(v[1:entryHeader]))), v[entryHeader:], nil
}
