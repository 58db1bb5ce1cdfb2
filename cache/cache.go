package cache

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/internal/sqlitefile"
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
// not a cache at all: not an SQLite file, or another program's. Recreate
// and Options.Rebuild leave such a file alone: --cache may name the wrong
// path.
var ErrNotCache = errors.New("not an addrclean cache file")

// ErrNotExist is wrapped by Open's error when Options.MustExist is set and
// there is no file, or one without any table (empty), which is left as it
// was.
var ErrNotExist = errors.New("does not exist")

// Format is the value of format in the file's addrclean_meta table.
const Format = "addrclean-cache/2"

// schema is the cache's tables (docs/storage.md), in types and DDL that
// PostgreSQL takes as they are. Not WITHOUT ROWID: an answer (1.5 KB) is
// more than an index b-tree keeps in a page, so each would take an overflow
// page (4.7 KB an answer on disk, two reads a Get); in a rowid table answers
// are appended in the order stored and the key's index stays small.
var schema = []string{
	`CREATE TABLE cache_namespaces (
	id    text PRIMARY KEY, -- live-<sha256> or embedded-<sha256>
	label text NOT NULL     -- for people; never a key
)`,
	`CREATE TABLE cache_answers (
	namespace   text   NOT NULL, -- cache_namespaces.id
	key         text   NOT NULL, -- hex SHA-256 of the address key
	obtained_ms bigint NOT NULL, -- when the service gave the answer, Unix milliseconds
	answer      text   NOT NULL, -- the service's JSON
	crc         bigint NOT NULL, -- CRC-32C of namespace, key, obtained_ms and answer
	PRIMARY KEY (namespace, key)
)`,
}

// Options tune Open. The zero value is usable.
type Options struct {
	// Timeout is how long to wait for another process's lock (default
	// DefaultTimeout).
	Timeout time.Duration
	// MustExist refuses to create a missing file (housekeeping commands,
	// a look), and opens the file as it is: nothing is written to it, not
	// even its journal mode, before Store, Prune or Clear.
	MustExist bool
	// Rebuild moves a damaged cache, or a bbolt cache of an older
	// addrclean, aside (to PATH.damaged-<time> or PATH.bbolt-<time>) and
	// starts a new one, logging a warning, instead of failing.
	Rebuild bool
	// Logger receives the warnings about damage that is survived: a file
	// moved aside, entries that fail their checksum (misses), a file that
	// fails under a run. Default: none.
	Logger zerolog.Logger
}

// DB is an open cache file. It is safe for concurrent use.
type DB struct {
	f     *sqlitefile.File
	batch *sqlitefile.Batch[entry]
	get   *sql.Stmt
	stmts map[string]*sql.Stmt // the queries of many keys, by their text, prepared when first used
	path  string
	log   zerolog.Logger

	failure // the first failure under a run
}

// entry is one answer waiting for its batch's commit.
type entry struct {
	ns, key string
	at      int64 // Unix ms
	answer  []byte
}

// fileOptions describe cache files to sqlitefile.
func fileOptions(timeout time.Duration) sqlitefile.Options {
	return sqlitefile.Options{
		Kind: "cache", Format: Format, FormatFamily: "addrclean-cache/", Schema: schema,
		Corrupt: ErrCorrupt, NotOurs: ErrNotCache, Locked: ErrLocked, Timeout: timeout,

		Hint: func(path string, notCache bool) string {
			if notCache {
				return " (is it the right path? if it is, remove the file)"
			}
			return fmt.Sprintf("; 'addrclean cache clear --cache %s' starts it afresh (or remove the file)", shellQuote(path))
		},
	}
}

// Open opens the cache file at path, creating it (mode 0600) unless
// opts.MustExist is set, and checks it (PRAGMA quick_check reads every
// page). A file locked by another process is an error wrapping ErrLocked;
// a file that is damaged, or is not an addrclean cache (then also
// ErrNotCache), an error wrapping ErrCorrupt, unless opts.Rebuild moves a
// damaged one aside. Entries that fail their checksum do not fail Open:
// they are misses, counted when met.
func Open(path string, opts Options) (*DB, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	fo := fileOptions(opts.Timeout)
	if opts.MustExist {
		// A look (a dry run, a run's look before its checks) writes
		// nothing, not even the journal mode of a file switched out of
		// WAL by hand, and creates no cache in a missing file or one
		// without tables (made by touch or mktemp). What writes readies
		// the file first (Store, Prune, Clear).
		fo.ReadOnly, fo.Absent = true, ErrNotExist
	}
	f, err := sqlitefile.Open(context.Background(), path, fo)
	if err != nil && opts.Rebuild && errors.Is(err, ErrCorrupt) && (!errors.Is(err, ErrNotCache) || errors.Is(err, sqlitefile.ErrOldBbolt)) {
		why := "damaged"
		if errors.Is(err, sqlitefile.ErrOldBbolt) {
			why = "bbolt"
		}
		aside, merr := sqlitefile.SetAside(path, why)
		if merr != nil {
			return nil, fmt.Errorf("%w; moving it aside: %w", err, merr)
		}
		if why == "bbolt" {
			opts.Logger.Warn().Str("cache", path).Str("moved_to", aside).
				Msgf("cache %s was written by an older addrclean (bbolt): moved it to %s and started a new cache; its answers are verified again as they are met (remove %s when you no longer need it)", path, aside, aside)
		} else {
			opts.Logger.Warn().Str("cache", path).Str("moved_to", aside).Err(err).
				Msgf("cache %s is damaged: moved it to %s and started a new, empty cache; its answers are verified again as they are met (if this recurs, check the disk)", path, aside)
		}
		f, err = sqlitefile.Open(context.Background(), path, fileOptions(opts.Timeout))
	}
	if err != nil {
		return nil, err
	}
	d := &DB{f: f, path: path, log: opts.Logger, stmts: map[string]*sql.Stmt{}}
	err = f.Do(context.Background(), func(c *sql.Conn) error {
		var err error
		d.get, err = c.PrepareContext(context.Background(), "SELECT obtained_ms, answer, crc FROM cache_answers WHERE namespace = ? AND key = ?")
		return err
	})
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	d.batch, err = sqlitefile.NewBatch(f, 0, 0, `INSERT INTO cache_answers (namespace, key, obtained_ms, answer, crc) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (namespace, key) DO UPDATE SET obtained_ms = excluded.obtained_ms, answer = excluded.answer, crc = excluded.crc`,
		func(e entry) []any {
			return []any{e.ns, e.key, e.at, string(e.answer), int64(checksum(e.ns, e.key, e.at, e.answer))}
		})
	if err != nil {
		_ = d.get.Close()
		_ = f.Close()
		return nil, err
	}
	return d, nil
}

// Path returns the file's path.
func (d *DB) Path() string { return d.path }

// failure is the first error that made a cache fail under a run: from then
// on it holds nothing.
type failure struct {
	once sync.Once
	err  atomic.Pointer[error]
}

// Failed returns the error that made the cache fail under a run (nil if
// none): from then on it held nothing.
func (f *failure) Failed() error {
	if p := f.err.Load(); p != nil {
		return *p
	}
	return nil
}

// record keeps err if it is the first, and then calls said with it.
func (f *failure) record(err error, said func(error)) {
	f.once.Do(func() {
		f.err.Store(&err)
		said(err)
	})
}

// fail records err as the cache's failure under a run and says so once.
func (d *DB) fail(err error) {
	d.record(err, func(err error) {
		d.log.Warn().Str("cache", d.path).Err(err).
			Msgf("cache %s failed during the run: going on without it (the answers it holds are verified again); the next run checks it and starts a new one if it is damaged", d.path)
	})
}

// Close commits the answers waiting, and releases the file and its lock.
// A file deleted or replaced while it was open is reported: the answers
// written since went to a file no one will read.
func (d *DB) Close() error {
	err := d.batch.Close()
	if d.Failed() != nil {
		err = nil // said already; Close must not fail the run for it
	}
	if d.get != nil {
		_ = d.get.Close()
	}
	for _, st := range d.stmts {
		_ = st.Close()
	}
	if d.f.Replaced() {
		d.log.Warn().Str("cache", d.path).Msgf("cache %s was deleted or replaced during the run: the answers stored since are lost", d.path)
	}
	return errors.Join(err, d.f.Close())
}

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
	// ID names the namespace: a prefix and a SHA-256 in hex.
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
	d   *DB
	ns  string
	ttl time.Duration

	damaged atomic.Int64
	ahead   atomic.Pointer[ahead] // a scan started by ScanAhead, for the next CountAnswered
}

// Store returns the namespace ns of d, creating it, where answers older than
// ttl are misses (and are overwritten by the next Put).
func (d *DB) Store(ns Namespace, ttl time.Duration) (*Store, error) {
	if err := checkStore(d.path, ns, ttl); err != nil {
		return nil, err
	}
	if err := d.f.Write(context.Background()); err != nil {
		return nil, err
	}
	err := d.f.Tx(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO cache_namespaces (id, label) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET label = excluded.label`, ns.ID, ns.Label)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Store{d: d, ns: ns.ID, ttl: ttl}, nil
}

// Peek returns the namespace ns of d as Store does, for a look that
// changes nothing (a dry run): it writes nothing, not even the namespace's
// label, and a namespace that is not there (no row, no answer) is nil: it
// answers nothing, as the run that creates it will find nothing in it. Only reading is
// meant: do not Put into the Store.
func (d *DB) Peek(ctx context.Context, ns Namespace, ttl time.Duration) (*Store, error) {
	if err := checkStore(d.path, ns, ttl); err != nil {
		return nil, err
	}
	var found bool
	err := d.f.Do(ctx, func(c *sql.Conn) error {
		err := c.QueryRowContext(ctx, peekSQL("?1"), ns.ID).Scan(new(int))
		found = err == nil
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil || !found {
		return nil, err
	}
	return &Store{d: d, ns: ns.ID, ttl: ttl}, nil
}

// peekSQL finds a namespace (its id the parameter p) by its row or by an
// answer: answers whose row is gone (no key ties them to it) are still the
// run's hits, since its Store adds the row again.
func peekSQL(p string) string {
	return "SELECT 1 WHERE EXISTS (SELECT 1 FROM cache_namespaces WHERE id = " + p +
		") OR EXISTS (SELECT 1 FROM cache_answers WHERE namespace = " + p + ")"
}

// checkStore refuses a time to live or a namespace id that Store and Peek
// cannot use, naming the cache (path).
func checkStore(path string, ns Namespace, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("cache %s: time to live %s: want a positive duration", path, ttl)
	}
	if !validID(ns.ID) {
		return fmt.Errorf("cache %s: invalid namespace id %q", path, ns.ID)
	}
	return nil
}

// validID accepts namespace ids made by this package.
func validID(id string) bool {
	return (strings.HasPrefix(id, "live-") || strings.HasPrefix(id, "embedded-")) && len(id) < 200
}

// entryKey is the stored key of an address key.
func entryKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

// Damaged returns how many entries Get found damaged (failing their
// checksum): each was a miss, so its address was verified again.
func (s *Store) Damaged() int64 { return s.damaged.Load() }

// Get returns the answer stored for key if it is younger than the store's
// time to live. A missing or expired entry is a miss (nil, false, nil); so
// is an entry that fails its checksum (counted in Damaged, and logged):
// verifying the address again is right, where using it could give another
// address's answer. A file that fails to read makes the cache fail (see
// DB.Failed): this and every later Get is a miss. Only a cancelled ctx is
// an error.
func (s *Store) Get(ctx context.Context, key string) (*api.VerifyResponse, bool, error) {
	resp, _, _, ok, err := s.GetEncoded(ctx, key)
	return resp, ok, err
}

// GetAt is Get, with the time the answer was stored: when the service gave
// it (obtained_ms), for an output's verified_at.
func (s *Store) GetAt(ctx context.Context, key string) (*api.VerifyResponse, time.Time, bool, error) {
	resp, _, at, ok, err := s.GetEncoded(ctx, key)
	return resp, at, ok, err
}

// GetEncoded is GetAt, with the answer's JSON as stored (what
// api.AppendVerifyResponse wrote): a run passes it on to the journal and
// its dedup spill instead of encoding the answer again.
func (s *Store) GetEncoded(ctx context.Context, key string) (*api.VerifyResponse, []byte, time.Time, bool, error) {
	d := s.d
	if d.Failed() != nil {
		return nil, nil, time.Time{}, false, nil
	}
	k := entryKey(key)
	var (
		at     int64
		body   []byte
		crc    int64
		queued bool
	)
	d.batch.Pending(func(es []entry) {
		for i := len(es) - 1; i >= 0; i-- {
			if e := es[i]; e.key == k && e.ns == s.ns {
				at, body, crc, queued = e.at, e.answer, int64(checksum(e.ns, e.key, e.at, e.answer)), true
				return
			}
		}
	})
	if !queued {
		err := d.f.Do(ctx, func(*sql.Conn) error { return d.get.QueryRowContext(ctx, s.ns, k).Scan(&at, &body, &crc) })
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil, nil, time.Time{}, false, nil
		case err != nil && ctx.Err() != nil:
			return nil, nil, time.Time{}, false, ctx.Err()
		case err != nil:
			d.fail(fmt.Errorf("%w (read)", err))
			return nil, nil, time.Time{}, false, nil
		}
	}
	if !checksumOK(crc, s.ns, k, at, body) {
		s.miss()
		return nil, nil, time.Time{}, false, nil
	}
	stored := time.UnixMilli(at)
	if time.Since(stored) > s.ttl {
		return nil, nil, time.Time{}, false, nil
	}
	// Past the checksum a body that does not decode was written so (a
	// bug): a miss, like a damaged one.
	resp, err := api.DecodeVerifyResponse(body)
	if err != nil || resp == nil {
		s.miss()
		return nil, nil, time.Time{}, false, nil
	}
	return resp, body, stored, true, nil
}

func (s *Store) miss() {
	if s.damaged.Add(1) == 1 {
		s.d.log.Warn().Str("cache", s.d.path).
			Msg("cache: an entry failed its checksum; it is treated as a miss and verified again (later ones are counted, not logged)")
	}
}

// Put stores resp for key, stamped with the current time, replacing any
// older entry. It queues the answer: it is committed with its batch, within
// a second. A cache that failed takes nothing; a failed commit makes it fail.
func (s *Store) Put(ctx context.Context, key string, resp *api.VerifyResponse) error {
	if resp == nil {
		return nil
	}
	return s.PutEncoded(ctx, key, api.AppendVerifyResponse(make([]byte, 0, 2048), resp))
}

// PutEncoded is Put of an answer already encoded by
// api.AppendVerifyResponse (answer is kept: the caller must not change it).
func (s *Store) PutEncoded(_ context.Context, key string, answer []byte) error {
	if len(answer) == 0 || s.d.Failed() != nil {
		return nil
	}
	e := entry{ns: s.ns, key: entryKey(key), at: time.Now().UnixMilli(), answer: answer}
	if err := s.d.batch.Add(e); err != nil {
		s.d.fail(fmt.Errorf("%w (write)", err))
	}
	return nil
}
