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
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/addrclean/addrclean/api"
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
	formatKey    = []byte("format")    // → formatValue
	formatValue  = []byte("addrclean-cache/1")
	labelsBucket = []byte("labels") // in metaBucket: namespace id → label
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
	db   *bolt.DB
	file *os.File // bbolt's handle, kept to release the lock if bbolt cannot
	path string
	now  func() time.Time
	log  zerolog.Logger

	// broken is the first ErrCorrupt met after Open (a panic or a fault
	// of bbolt): the pages in memory can no longer be trusted, so every
	// later call returns it.
	broken atomic.Pointer[error]
	stuck  atomic.Bool // a write transaction panicked: see Close
	closed atomic.Bool

	q commitQueue
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
	return openFile(path, opts, nil)
}

// openFile opens path with bbolt, through f when it is not nil (Recreate hands
// over a file it has locked and emptied), then checks and initialises it.
func openFile(path string, opts Options, f *os.File) (*DB, error) {
	d := &DB{path: path, now: opts.Now, log: opts.Logger}
	d.q.cond.L = &d.q.mu
	bopts := &bolt.Options{Timeout: opts.Timeout, OpenFile: func(name string, flag int, perm fs.FileMode) (*os.File, error) {
		if f == nil {
			var err error
			if f, err = os.OpenFile(name, flag, perm); err != nil {
				return nil, err
			}
		}
		d.file = f
		return f, nil
	}}
	if ok, detail := precheck(path); !ok {
		if !hasMagic(path) {
			return nil, &corruptError{path: path, detail: detail, notCache: true}
		}
		return nil, d.corrupt(detail)
	}
	// bbolt reads the meta and freelist pages while opening: a fault or a
	// panic there is the file's damage, not a bug to crash on.
	err := guard(func() error {
		var err error
		d.db, err = bolt.Open(path, 0o600, bopts)
		return err
	})
	if err != nil {
		var p *panicError
		switch {
		case errors.Is(err, berrors.ErrTimeout):
			return nil, fmt.Errorf("cache %s is %w (waited %s)", path, ErrLocked, opts.Timeout)
		case errors.Is(err, fs.ErrPermission), errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("cache %s: %w", path, err)
		case errors.As(err, &p) && d.file != nil:
			// bbolt left its file open, locked and mapped: the map keeps
			// the lock after the file is closed, so unlock it first.
			unlock(d.file)
			_ = d.file.Close()
		}
		if !hasMagic(path) {
			return nil, &corruptError{path: path, detail: err.Error(), notCache: true}
		}
		return nil, d.corrupt(err)
	}
	d.db.NoSync = opts.noSync
	err = nil
	if !opts.skipCheck {
		err = d.check()
	}
	if err == nil {
		err = d.init()
	}
	if err != nil {
		_ = d.Close()
		return nil, err
	}
	return d, nil
}

// corrupt is the error about damage to the file that detail describes.
func (d *DB) corrupt(detail any) error {
	return &corruptError{path: d.path, detail: fmt.Sprint(detail)}
}

// corruptError is an error about a file that is damaged or is not a cache;
// it wraps ErrCorrupt (and ErrNotCache), and says what to do.
type corruptError struct {
	path, detail string
	notCache     bool
}

func (e *corruptError) Error() string {
	if e.notCache {
		return fmt.Sprintf("cache %s: %v: %s (is it the right path? if it is, remove the file)", e.path, ErrCorrupt, e.detail)
	}
	return fmt.Sprintf("cache %s: %v: %s; 'addrclean cache clear --cache %s' starts it afresh (or remove the file)",
		e.path, ErrCorrupt, e.detail, shellQuote(e.path))
}

func (e *corruptError) Is(target error) bool {
	return target == ErrCorrupt || (e.notCache && target == ErrNotCache)
}

// init checks the format marker, writing it into a new file.
func (d *DB) init() error {
	var fresh bool
	err := d.view(func(tx *bolt.Tx) error {
		meta := tx.Bucket(metaBucket)
		if meta == nil {
			// A new file has no buckets at all; any other bbolt file is
			// someone else's.
			if k, _ := tx.Cursor().First(); k != nil {
				return &corruptError{path: d.path, detail: "a bbolt file of another program", notCache: true}
			}
			fresh = true
			return nil
		}
		if v := meta.Get(formatKey); !bytes.Equal(v, formatValue) {
			return d.corrupt(fmt.Sprintf("unknown format %q", v))
		}
		if meta.Bucket(labelsBucket) == nil {
			return d.corrupt("no namespace labels")
		}
		return nil
	})
	if err != nil || !fresh {
		return err
	}
	return d.update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucket(metaBucket)
		if err != nil {
			return err
		}
		if err := meta.Put(formatKey, formatValue); err != nil {
			return err
		}
		_, err = meta.CreateBucket(labelsBucket)
		return err
	})
}

// Path returns the file's path.
func (d *DB) Path() string { return d.path }

// Close releases the file and its lock.
func (d *DB) Close() error {
	if d.closed.Swap(true) {
		return nil
	}
	if d.stuck.Load() {
		// A panic in a write transaction can leave bbolt's writer lock
		// held (its rollback panics too), and bbolt's Close would wait for
		// it forever: release the file and its lock here; the memory map
		// goes with the process. The panic was reported as ErrCorrupt.
		unlock(d.file)
		if err := d.file.Close(); err != nil {
			return fmt.Errorf("cache %s: close: %w", d.path, err)
		}
		return nil
	}
	if err := guard(d.db.Close); err != nil {
		if d.file != nil {
			unlock(d.file)
			_ = d.file.Close()
		}
		return fmt.Errorf("cache %s: close: %w", d.path, err)
	}
	return nil
}

// view and update run fn in a transaction, turning a fault or a panic of
// bbolt on a damaged page into ErrCorrupt and naming the file in every
// error. After such a panic the DB is broken: bbolt's state in memory may
// be half changed, so every later call fails with the same error.
func (d *DB) view(fn func(*bolt.Tx) error) error {
	return d.wrap(false, func() error { return d.db.View(fn) })
}

func (d *DB) update(fn func(*bolt.Tx) error) error {
	return d.wrap(true, func() error { return d.db.Update(fn) })
}

func (d *DB) wrap(write bool, fn func() error) error {
	if p := d.broken.Load(); p != nil {
		return *p
	}
	if err := guard(fn); err != nil {
		return d.classify(write, err)
	}
	return nil
}

// classify names the file in err, and turns bbolt's panics and the errors
// only damage gives into ErrCorrupt.
func (d *DB) classify(write bool, err error) error {
	var (
		p  *panicError
		ce *corruptError
	)
	switch {
	case errors.As(err, &p):
		if write {
			d.stuck.Store(true)
		}
		err = d.corrupt(p)
		d.broken.CompareAndSwap(nil, &err)
		return *d.broken.Load()
	case errors.As(err, &ce):
		return err // names the file already
	case errors.Is(err, berrors.ErrIncompatibleValue), errors.Is(err, berrors.ErrInvalid),
		errors.Is(err, berrors.ErrInvalidMapping), errors.Is(err, berrors.ErrChecksum):
		// A bucket where an entry belongs, or the reverse: this package
		// writes neither.
		return d.corrupt(err)
	}
	return fmt.Errorf("cache %s: %w", d.path, err)
}

// panicError is a panic of bbolt, or a fault reading its memory map,
// caught by guard.
type panicError struct{ v any }

func (p *panicError) Error() string { return fmt.Sprint("bbolt: ", p.v) }

// guard runs fn on this goroutine, turning a panic, and a fault on the
// memory map (SIGBUS past the end of a truncated file, SIGSEGV past the
// map), into a *panicError. Without SetPanicOnFault a fault is a fatal
// error of the runtime, which no recover reaches.
func guard(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if v := recover(); v != nil {
			err = &panicError{v}
		}
	}()
	return fn()
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
func (s *Store) Get(_ context.Context, key string) (*api.VerifyResponse, bool, error) {
	var (
		resp  *api.VerifyResponse
		state entryState
	)
	now := s.d.now()
	err := s.d.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(s.bucket)
		if b == nil {
			return s.d.corrupt(fmt.Sprintf("namespace %s is gone", s.bucket))
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
		r, err := api.DecodeVerifyResponse(body)
		if err != nil {
			state = entryDamaged
			return nil
		}
		resp = r
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("%w (read)", err)
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
	return resp, resp != nil, nil
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
	if err := s.d.put(s.bucket, k, sealEntry(k, s.d.now(), v)); err != nil {
		return fmt.Errorf("%w (write)", err)
	}
	return nil
}
