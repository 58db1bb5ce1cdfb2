// Package cache keeps verify answers across runs in one bbolt file, so that a
// re-run pays only for the addresses it has not seen within a time to live.
//
// A file holds namespaces, one per service and key (LiveNamespace) or per
// reference of the embedded service (EmbeddedNamespace); a namespace holds
// entries keyed by the SHA-256 of the pipeline's address key, each the time
// it was stored and the answer as JSON under a CRC-32C. Neither an API key
// nor an address key is written in clear. A Store is one namespace with a
// time to live: it satisfies pipeline.Cache.
//
// Every error names the file. A file locked by another process is reported
// after Options.Timeout (ErrLocked). A file that is not an addrclean cache,
// or whose pages are damaged, is ErrCorrupt: Open checks the file before
// using it, and a fault or a panic of bbolt on a damaged page met later is
// turned into ErrCorrupt too, never a crash; callers stop rather than
// re-verify, so a broken file never turns into a silent second bill. An
// entry that fails its checksum is different: it is a miss (verified again
// and overwritten), counted by Store.Damaged and logged.
//
// Answers are written by a group commit: concurrent Puts share one durable
// bbolt transaction, run on a caller's goroutine (where a panic can be
// caught, unlike in bbolt's Batch), so a killed process loses only the
// answers not yet committed, and the file opens cleanly afterwards.
package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	bolt "go.etcd.io/bbolt"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/internal/boltfile"
)

// DefaultTimeout is how long Open waits for another process's lock.
const DefaultTimeout = time.Second

// DefaultTTL is how long an answer is reused (--cache-ttl).
const DefaultTTL = 30 * 24 * time.Hour

// ErrLocked is wrapped by Open's error when another process holds the file.
var ErrLocked = errors.New("locked by another addrclean process")

// ErrCorrupt is wrapped by every error about a file that is not an addrclean
// cache or that cannot be read. Errors about a damaged cache say how to
// start it afresh (addrclean cache clear, which Recreate implements).
var ErrCorrupt = errors.New("not a readable addrclean cache")

// ErrNotCache is wrapped, with ErrCorrupt, by errors about a file that is
// not a cache at all: not a bbolt file, or another program's. Recreate
// refuses such a file: --cache may name the wrong path.
var ErrNotCache = errors.New("not an addrclean cache file")

// ErrNotExist is wrapped by Open's error when Options.MustExist is set and
// there is no file.
var ErrNotExist = errors.New("does not exist")

// Names inside the file.
var (
	metaBucket   = []byte("addrclean") // format marker and namespace labels
	labelsBucket = []byte("labels")    // in metaBucket: namespace id → label
)

// Options tune Open. The zero value is usable.
type Options struct {
	// Timeout is how long to wait for another process's lock (default
	// DefaultTimeout).
	Timeout time.Duration
	// MustExist refuses to create a missing file (housekeeping commands).
	MustExist bool
	// Now is the clock for storing and expiring entries (default time.Now).
	Now func() time.Time
	// Logger receives the warnings about damage that is survived: entries
	// that fail their checksum (misses), a damaged meta page (the other
	// one is used). Default: none.
	Logger zerolog.Logger

	noSync    bool // tests that open hundreds of damaged files skip fsync
	skipCheck bool // BenchmarkOpenLarge measures Open without check
}

// DB is an open cache file. It is safe for concurrent use.
type DB struct {
	b    *boltfile.DB
	path string
	now  func() time.Time
	log  zerolog.Logger
}

// Open opens the cache file at path, creating it (mode 0600) unless
// opts.MustExist is set, and checks it: every page of the file is read
// (0.8 s for a million entries, 5 s when none is in the page cache), so
// that bbolt is never handed damage it would crash on. A file locked by
// another process is an error wrapping ErrLocked; a file that is damaged,
// or is not an addrclean cache (then also ErrNotCache), an error wrapping
// ErrCorrupt. Entries that fail their checksum do not fail Open: they are
// logged (opts.Logger) and are misses.
func Open(path string, opts Options) (*DB, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && opts.MustExist {
		return nil, fmt.Errorf("cache %s %w", path, ErrNotExist)
	}
	return openFile(path, opts, false)
}

// openFile opens path, or replaces it with a new file (Recreate), and
// initialises it.
func openFile(path string, opts Options, replace bool) (*DB, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("cache %s is a directory", path)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	var damaged, outdated int64
	bo := fileOptions
	bo.Timeout, bo.NoSync, bo.SkipCheck, bo.Logger = opts.Timeout, opts.noSync, opts.skipCheck, opts.Logger
	bo.Entry = func(k, v []byte) {
		switch _, _, st := decodeEntry(k, v); st {
		case entryDamaged:
			damaged++
		case entryOutdated:
			outdated++
		}
	}
	open := boltfile.Open
	if replace {
		open = boltfile.Replace
	}
	b, err := open(path, bo)
	if err != nil {
		return nil, err
	}
	if damaged > 0 {
		opts.Logger.Warn().Str("cache", path).Int64("damaged", damaged).
			Msgf("cache: %d entries fail their checksum: they are misses, verified again and replaced ('addrclean cache prune' removes them)", damaged)
	}
	if outdated > 0 {
		opts.Logger.Info().Str("cache", path).Int64("outdated", outdated).
			Msgf("cache: %d entries were written by an older version, without a checksum: they are misses, verified again and replaced", outdated)
	}
	d := &DB{b: b, path: path, now: opts.Now, log: opts.Logger}
	if err := d.init(); err != nil {
		_ = b.Close()
		return nil, err
	}
	return d, nil
}

// fileOptions describe cache files to boltfile.
var fileOptions = boltfile.Options{
	Kind: "cache", Marker: metaBucket, Format: []byte("addrclean-cache/1"), Corrupt: ErrCorrupt, NotOurs: ErrNotCache, Locked: ErrLocked,
	Hint: func(path string, notCache bool) string {
		if notCache {
			return " (is it the right path? if it is, remove the file)"
		}
		return fmt.Sprintf("; 'addrclean cache clear --cache %s' starts it afresh (or remove the file)", shellQuote(path))
	},
}

// init checks the namespace labels, writing the marker and them into a new
// file.
func (d *DB) init() error {
	if !d.b.Fresh() {
		return d.b.View(func(tx *bolt.Tx) error {
			if tx.Bucket(metaBucket).Bucket(labelsBucket) == nil {
				return d.b.Corrupt("no namespace labels")
			}
			return nil
		})
	}
	return d.b.Update(func(tx *bolt.Tx) error {
		meta, err := d.b.Mark(tx)
		if err == nil {
			_, err = meta.CreateBucket(labelsBucket)
		}
		return err
	})
}

// Path returns the file's path.
func (d *DB) Path() string { return d.path }

// Close releases the file and its lock.
func (d *DB) Close() error { return d.b.Close() }

// shellQuote quotes s for a POSIX shell when it needs it, for commands
// suggested in messages.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_./:@%+=,-", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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

	damaged, outdated atomic.Int64
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
	err := d.b.Update(func(tx *bolt.Tx) error {
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

// Damaged returns how many entries Get found damaged (failing their
// checksum): each was a miss, so its address was verified again.
func (s *Store) Damaged() int64 { return s.damaged.Load() }

// Outdated returns how many entries Get found in the layout of an older
// version (without a checksum): each was a miss, verified again.
func (s *Store) Outdated() int64 { return s.outdated.Load() }

// Get returns the answer stored for key if it is younger than the store's
// time to live. A missing or expired entry is a miss (nil, false, nil); so
// is an entry that fails its checksum (counted in Damaged, and logged) or
// that an older version wrote (Outdated): verifying the address again is
// right, where using it could give another address's answer. A file that
// cannot be read is an error wrapping ErrCorrupt.
func (s *Store) Get(ctx context.Context, key string) (*api.VerifyResponse, bool, error) {
	resp, _, ok, err := s.GetAt(ctx, key)
	return resp, ok, err
}

// GetAt is Get, with the time the answer was stored: when the service
// gave it (pipeline.TimedCache).
func (s *Store) GetAt(_ context.Context, key string) (*api.VerifyResponse, time.Time, bool, error) {
	var (
		resp   *api.VerifyResponse
		state  entryState
		stored time.Time
	)
	now := s.d.now()
	err := s.d.b.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(s.bucket)
		if b == nil {
			return s.d.b.Corrupt(fmt.Sprintf("namespace %s is gone", s.bucket))
		}
		k := entryKey(key)
		v := b.Get(k)
		if v == nil {
			return nil
		}
		at, body, st := decodeEntry(k, v)
		if state = st; st != entryOK || now.Sub(at) > s.ttl {
			return nil
		}
		// The decoder copies what it keeps, so the answer outlives the
		// transaction's memory map. Past the checksum a body that does not
		// decode was written so (a bug): a miss, like a damaged one.
		if resp, _ = api.DecodeVerifyResponse(body); resp == nil {
			state = entryDamaged
		}
		stored = at
		return nil
	})
	if err != nil {
		return nil, time.Time{}, false, fmt.Errorf("%w (read)", err)
	}
	switch state {
	case entryDamaged:
		if s.damaged.Add(1) == 1 {
			s.d.log.Warn().Str("cache", s.d.path).
				Msg("cache: an entry failed its checksum; it is treated as a miss and verified again (later ones are counted, not logged)")
		}
	case entryOutdated:
		s.outdated.Add(1)
	}
	return resp, stored, resp != nil, nil
}

// Put stores resp for key, stamped with the current time, replacing any
// older entry. It returns once the entry is durably committed; concurrent
// Puts share a commit.
func (s *Store) Put(_ context.Context, key string, resp *api.VerifyResponse) error {
	if resp == nil {
		return nil
	}
	// The JSON is written after room for the header: one buffer, no copy.
	v := api.AppendVerifyResponse(make([]byte, entryHeader, entryHeader+2048), resp)
	k := entryKey(key)
	if err := s.d.b.Put(s.bucket, k, sealEntry(k, s.d.now(), v)); err != nil {
		return fmt.Errorf("%w (write)", err)
	}
	return nil
}
