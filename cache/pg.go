package cache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/internal/redact"
	"github.com/addrclean/addrclean/internal/sqlitefile"
)

// DefaultLease is how long a claim on a request holds without being renewed
// (--cache-lease): a runner killed while paying for a request leaves a claim
// that others take over after at most this long.
const DefaultLease = 30 * time.Second

// ErrBadURL is wrapped by OpenPG's error when the URL cannot be read.
var ErrBadURL = errors.New("bad cache URL")

// claimsDDL is the table that keeps concurrent runners from paying twice:
// one row per request being verified, with the runner holding it and when
// its lease ends (by the database's clock, the one all runners share).
const claimsDDL = `CREATE TABLE cache_claims (
	namespace text        NOT NULL, -- cache_namespaces.id
	key       text        NOT NULL, -- cache_answers.key
	owner     text        NOT NULL, -- the runner: host, process id and a random id
	expires   timestamptz NOT NULL, -- the lease's end, renewed while the call lasts
	PRIMARY KEY (namespace, key)
)`

// pgSetupLock is the advisory lock key under which runners starting together
// create the tables one at a time ("addrclean-cache" in ASCII, truncated).
const pgSetupLock = 0x6164_6472_636c_6561

// PGOptions tune OpenPG. The zero value is usable.
type PGOptions struct {
	// Lease is how long a claim holds unless renewed (default
	// DefaultLease). Claims are renewed every third of it while their
	// call lasts.
	Lease time.Duration
	// LockTimeout bounds the wait for the tables' locks while they are set
	// up (default 5s).
	LockTimeout time.Duration
	// MaxConns caps the connections to the database (default 8 or the
	// URL's pool_max_conns).
	MaxConns int32
	// MustExist refuses a database without the cache's tables (ErrNotExist)
	// instead of creating them: the housekeeping commands, and a run's
	// first look, which must create nothing if it is refused afterwards.
	// A database with only some of them is refused too, naming those
	// missing.
	MustExist bool
	// ReadOnly opens the cache for a look that writes nothing (a dry
	// run): no table is created, one missing answers nothing (see Peek),
	// no claim is renewed or given up, and every transaction of its
	// connections is read only, so that the server refuses a write. Only
	// Peek and Stats are meant for it.
	ReadOnly bool
	// Logger receives the warnings: answers that fail their checksum, a
	// database that fails under a run.
	Logger zerolog.Logger
}

// PG is a cache in a PostgreSQL database: the tables of the SQLite cache
// (docs/storage.md), and cache_claims, with which concurrent runners pay
// once for a request (docs/shared-cache.md). It is safe for concurrent use.
type PG struct {
	pool    *pgxpool.Pool
	display string   // the URL without its password
	secrets []string // passwords to scrub from errors
	owner   string
	lease   time.Duration
	log     zerolog.Logger

	stopRenew context.CancelFunc
	renewed   sync.WaitGroup
	readOnly  bool
	// tables are the cache's tables found by a ReadOnly open (all of them
	// otherwise: the missing ones were created).
	tables map[string]bool

	failure
}

// OpenPG connects to the PostgreSQL database of rawURL (postgres://...),
// creates the cache's tables in the connection's first schema when they are
// missing, and checks them when they are there: tables of another program
// under the same names are refused (ErrNotCache). display is the URL as
// errors and logs may show it (no password); no error shows a password.
func OpenPG(ctx context.Context, rawURL, display string, opts PGOptions) (*PG, error) {
	secrets := redact.URLPasswords(rawURL)
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("cache %s: %w: %w", display, ErrBadURL, redact.Scrub(err, secrets...))
	}
	if p := cfg.ConnConfig.Password; p != "" {
		secrets = append(secrets, p)
	}
	if _, set := cfg.ConnConfig.RuntimeParams["application_name"]; !set {
		cfg.ConnConfig.RuntimeParams["application_name"] = "addrclean cache"
	}
	// A commit need not wait for its WAL to reach the disk: a server that
	// crashes loses at most its last fraction of a second of answers and
	// claims (answers are verified again, claims were to expire anyway),
	// never its consistency, and every paid request costs one fsync less
	// (the SQLite cache makes the same trade by batching). The URL may say
	// otherwise.
	if _, set := cfg.ConnConfig.RuntimeParams["synchronous_commit"]; !set {
		cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	}
	if opts.ReadOnly {
		// The server itself keeps a look from writing: a statement that
		// would fails, rather than changing the user's database.
		cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	} else if !strings.Contains(rawURL, "pool_max_conns") {
		cfg.MaxConns = 8
	}
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = 5 * time.Second
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("cache %s: %w", display, redact.Scrub(err, secrets...))
	}
	p := &PG{pool: pool, display: display, secrets: secrets, owner: newOwner(), lease: opts.Lease, log: opts.Logger, readOnly: opts.ReadOnly}
	if err := p.setUp(ctx, opts.LockTimeout, opts.MustExist); err != nil {
		pool.Close()
		return nil, err
	}
	if p.readOnly {
		p.stopRenew = func() {} // it takes no claim
		return p, nil
	}
	rctx, cancel := context.WithCancel(context.Background())
	p.stopRenew = cancel
	p.renewed.Add(1)
	go p.renew(rctx)
	return p, nil
}

// wrap names the database in err and takes any password out of it.
func (p *PG) wrap(err error) error {
	return fmt.Errorf("cache %s: %w", p.display, redact.Scrub(err, p.secrets...))
}

// newOwner names this runner in its claims: people reading cache_claims see
// which machine and process holds one; the random part keeps two processes
// with the same pid on two machines apart.
func newOwner() string {
	host, _ := os.Hostname()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b))
}

// pgColumns are the columns a cache's tables must have, in order.
var pgColumns = map[string]string{
	sqlitefile.MetaTable: "name text,value text",
	"cache_namespaces":   "id text,label text",
	"cache_answers":      "namespace text,key text,obtained_ms bigint,answer text,crc bigint",
	"cache_claims":       "namespace text,key text,owner text,expires timestamp with time zone",
}

// pgTables are the cache's tables, in the order they are created.
var pgTables = []string{sqlitefile.MetaTable, "cache_namespaces", "cache_answers", "cache_claims"}

// setUp checks the tables and creates the missing ones, in one transaction
// under an advisory lock, so that runners starting together do not race.
// With mustExist, or for a ReadOnly PG, it creates none (see PGOptions).
func (p *PG) setUp(ctx context.Context, lockTimeout time.Duration, mustExist bool) error {
	err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, fmt.Sprintf("SET LOCAL lock_timeout = %d", lockTimeout.Milliseconds())); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(pgSetupLock)); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT c.relname, string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ',' ORDER BY a.attnum)
			FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
			WHERE c.relnamespace = current_schema()::regnamespace AND c.relname = ANY($1)
			GROUP BY c.relname`, pgTables)
		if err != nil {
			return err
		}
		have := map[string]string{}
		for rows.Next() {
			var name, cols string
			if err := rows.Scan(&name, &cols); err != nil {
				return err
			}
			have[name] = cols
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for name, cols := range have {
			if cols != pgColumns[name] {
				return fmt.Errorf("%w: table %s is not an addrclean cache's (columns %s); point --cache at another database or schema (search_path)", ErrNotCache, name, cols)
			}
		}
		if _, ok := have[sqlitefile.MetaTable]; ok {
			var format string
			err := tx.QueryRow(ctx, "SELECT value FROM "+sqlitefile.MetaTable+" WHERE name = 'format'").Scan(&format)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			if format != Format {
				return fmt.Errorf("%w: its %s says format %q, not %q", ErrNotCache, sqlitefile.MetaTable, format, Format)
			}
		} else if len(have) > 0 {
			return fmt.Errorf("%w: tables named like a cache's, without %s", ErrNotCache, sqlitefile.MetaTable)
		} else if mustExist || p.readOnly {
			return fmt.Errorf("%w: no cache tables in its schema (a run with --cache creates them)", ErrNotExist)
		}
		var missing []string
		for _, name := range pgTables {
			if _, ok := have[name]; !ok {
				missing = append(missing, name)
			}
		}
		switch {
		case p.readOnly:
			// A look creates nothing: what is missing answers nothing,
			// as the run that creates it will find it empty.
			p.tables = map[string]bool{}
			for name := range have {
				p.tables[name] = true
			}
			return nil
		case mustExist && len(missing) > 0:
			return fmt.Errorf("%w: its schema lacks the cache table(s) %s (a run with --cache creates them)", ErrNotExist, strings.Join(missing, ", "))
		}
		for _, ddl := range append([]string{sqlitefile.MetaDDL}, append(schema, claimsDDL)...) {
			name := strings.Fields(ddl)[2]
			if _, ok := have[name]; ok {
				continue
			}
			if _, err := tx.Exec(ctx, ddl); err != nil {
				return err
			}
		}
		if _, ok := have[sqlitefile.MetaTable]; !ok {
			_, err := tx.Exec(ctx, "INSERT INTO "+sqlitefile.MetaTable+" (name, value) VALUES ('format', $1)", Format)
			return err
		}
		return nil
	})
	if err != nil {
		return p.wrap(err)
	}
	return nil
}

// renew extends the leases of this runner's claims every third of a lease,
// so that a call that takes long (retries, 429 waits) keeps its claim, and
// a killed runner's claims run out.
func (p *PG) renew(ctx context.Context) {
	defer p.renewed.Done()
	t := time.NewTicker(p.lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := p.renewOnce(ctx); err != nil && ctx.Err() == nil {
			p.fail(fmt.Errorf("renewing the claims: %w", err))
		}
	}
}

// renewOnce extends the leases of all this runner's claims by a lease from
// now.
func (p *PG) renewOnce(ctx context.Context) error {
	_, err := p.pool.Exec(ctx, "UPDATE cache_claims SET expires = clock_timestamp() + $2::bigint * interval '1 millisecond' WHERE owner = $1",
		p.owner, p.lease.Milliseconds())
	return err
}

// Path returns the database's URL without its password.
func (p *PG) Path() string { return p.display }

// fail records err as the cache's failure under a run and says so once.
func (p *PG) fail(err error) {
	p.record(p.wrap(err), func(err error) {
		// Claims this runner will no longer answer must run out, even if
		// the database comes back: renewing them would hold the other
		// runners until this one ends.
		p.stopRenew()
		p.log.Warn().Str("cache", p.display).Err(err).
			Msgf("cache %s failed during the run: going on without it (its answers are verified again, and other runners may pay for this run's requests too)", p.display)
	})
}

// Close gives up this runner's claims (others take them at once instead of
// after their lease) and disconnects.
func (p *PG) Close() error {
	p.stopRenew()
	p.renewed.Wait()
	if p.readOnly {
		p.pool.Close() // it took no claim
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := p.pool.Exec(ctx, "DELETE FROM cache_claims WHERE owner = $1", p.owner)
	p.pool.Close()
	if err != nil && p.Failed() == nil {
		return p.wrap(fmt.Errorf("giving up the claims: %w", err))
	}
	return nil
}

// Store returns the namespace ns of p, creating it, where answers older than
// ttl are misses.
func (p *PG) Store(ns Namespace, ttl time.Duration) (*PGStore, error) {
	if err := checkStore(p.display, ns, ttl); err != nil {
		return nil, err
	}
	if p.readOnly {
		return nil, fmt.Errorf("cache %s: opened read only: use Peek", p.display)
	}
	_, err := p.pool.Exec(context.Background(), `INSERT INTO cache_namespaces (id, label) VALUES ($1, $2)
		ON CONFLICT (id) DO UPDATE SET label = excluded.label WHERE cache_namespaces.label IS DISTINCT FROM excluded.label`, ns.ID, ns.Label)
	if err != nil {
		return nil, p.wrap(err)
	}
	return &PGStore{p: p, ns: ns.ID, ttl: ttl}, nil
}

// Peek returns the namespace ns of p as Store does, for a look that changes
// nothing (a dry run): it writes nothing, takes no claim and never waits
// for another runner. A namespace that is not there (no row, no answer),
// or a ReadOnly PG without cache_answers, is nil: it answers nothing, as the
// run that creates them will find them empty.
func (p *PG) Peek(ctx context.Context, ns Namespace, ttl time.Duration) (*PGPeek, error) {
	if err := checkStore(p.display, ns, ttl); err != nil {
		return nil, err
	}
	if p.tables != nil && !p.tables["cache_answers"] {
		return nil, nil
	}
	q := peekSQL("$1")
	if p.tables != nil && !p.tables["cache_namespaces"] {
		// The run creates it and adds the row: its answers are the run's.
		q = "SELECT 1 FROM cache_answers WHERE namespace = $1 LIMIT 1"
	}
	err := p.pool.QueryRow(ctx, q, ns.ID).Scan(new(int))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, p.wrap(err)
	}
	r := (&PGStore{p: p, ns: ns.ID, ttl: ttl}).ReadOnly()
	return &r, nil
}

// PGStore is one namespace of a PG with a time to live; it satisfies
// pipeline.SharedCache: a miss is a claim on the request, which the caller
// ends with Put (the answer) or Release (none).
type PGStore struct {
	p   *PG
	ns  string
	ttl time.Duration

	damaged   atomic.Int64
	waits     atomic.Int64
	takeovers atomic.Int64
}

// Damaged returns how many answers Get found damaged (failing their
// checksum): each was a miss.
func (s *PGStore) Damaged() int64 { return s.damaged.Load() }

// Waited returns how many of Get's lookups waited for another runner's
// answer.
func (s *PGStore) Waited() int64 { return s.waits.Load() }

// TakenOver returns how many claims of other runners Get took over because
// their lease had run out (a runner killed while paying for them).
func (s *PGStore) TakenOver() int64 { return s.takeovers.Load() }

// Poll bounds of a wait for another runner's answer: the first look after
// pollMin, then twice as long each time up to pollMax. An answer usually
// comes within a call's time, a few hundred milliseconds.
var (
	// onWait, when set (tests), is called when a Get starts waiting for
	// another runner's answer.
	onWait func(key string)

	pollMin = 20 * time.Millisecond
	pollMax = time.Second
)

// Get returns the answer stored for key if it is younger than the store's
// time to live. Otherwise it claims the request for this runner and returns
// a miss: the caller pays for the call, then ends the claim with Put or
// Release. While another runner holds a live claim on it, Get waits for that
// runner's answer (looking again with a growing pause) and returns it; a
// claim whose lease ran out (its runner was killed) is taken over. A
// database that fails makes the cache fail (a miss from then on, said once);
// only a cancelled ctx is an error.
func (s *PGStore) Get(ctx context.Context, key string) (*api.VerifyResponse, bool, error) {
	resp, _, ok, err := s.GetAt(ctx, key)
	return resp, ok, err
}

// GetAt is Get, with the time the answer was stored.
func (s *PGStore) GetAt(ctx context.Context, key string) (*api.VerifyResponse, time.Time, bool, error) {
	p := s.p
	k := entryKey(key)
	pause := pollMin
	waited, damaged := false, false
	for {
		if p.Failed() != nil {
			return nil, time.Time{}, false, nil
		}
		resp, at, bad, err := s.read(ctx, k)
		if bad && !damaged {
			damaged = true // one miss, however often it is read
			s.miss()
		}
		if err == nil && resp == nil {
			var claimed bool
			claimed, resp, at, err = s.claim(ctx, k)
			switch {
			case err == nil && claimed && resp != nil:
				err = s.release(ctx, k)
			case err == nil && claimed:
				return nil, time.Time{}, false, nil // ours to pay
			}
		}
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, time.Time{}, false, ctx.Err()
		case err != nil:
			p.fail(err)
			return nil, time.Time{}, false, nil
		case resp != nil:
			return resp, at, true, nil
		}
		// Another runner is paying for it: wait for its answer.
		if !waited {
			waited = true
			s.waits.Add(1)
			if onWait != nil {
				onWait(key)
			}
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, time.Time{}, false, ctx.Err()
		case <-t.C:
		}
		pause = min(2*pause, pollMax)
	}
}

// Peek returns the answer stored for key, as Get does, but takes no claim
// and never waits: for a look that pays nothing (an estimate), where a
// request another runner is paying for is a miss.
func (s *PGStore) Peek(ctx context.Context, key string) (*api.VerifyResponse, bool, error) {
	resp, _, _, err := s.read(ctx, entryKey(key))
	if err != nil {
		return nil, false, s.p.wrap(err)
	}
	return resp, resp != nil, nil
}

const readSQL = "SELECT obtained_ms, answer, crc FROM cache_answers WHERE namespace = $1 AND key = $2"

// ReadOnly returns s as a cache that only looks: its Get is Peek and its Put
// stores nothing. It satisfies pipeline.Cache (not SharedCache), for a dry
// run's estimate, which must neither claim nor wait.
func (s *PGStore) ReadOnly() PGPeek { return PGPeek{s: s} }

// PGPeek is a PGStore that only looks (PGStore.ReadOnly).
type PGPeek struct{ s *PGStore }

// Get is PGStore.Peek.
func (r PGPeek) Get(ctx context.Context, key string) (*api.VerifyResponse, bool, error) {
	return r.s.Peek(ctx, key)
}

// Put stores nothing.
func (PGPeek) Put(context.Context, string, *api.VerifyResponse) error { return nil }

// read returns the answer stored for the entry key k, if any and valid and
// younger than the time to live; bad reports one that fails its checksum.
func (s *PGStore) read(ctx context.Context, k string) (_ *api.VerifyResponse, _ time.Time, bad bool, _ error) {
	return s.scan(s.p.pool.QueryRow(ctx, readSQL, s.ns, k), k)
}

// scan is read's answer from row, a result of readSQL.
func (s *PGStore) scan(row pgx.Row, k string) (_ *api.VerifyResponse, _ time.Time, bad bool, _ error) {
	var (
		at, crc int64
		body    []byte
	)
	err := row.Scan(&at, &body, &crc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, time.Time{}, false, nil
	}
	if err != nil {
		return nil, time.Time{}, false, err
	}
	if !checksumOK(crc, s.ns, k, at, body) {
		return nil, time.Time{}, true, nil
	}
	stored := time.UnixMilli(at)
	if time.Since(stored) > s.ttl {
		return nil, time.Time{}, false, nil
	}
	resp, err := api.DecodeVerifyResponse(body)
	if err != nil || resp == nil {
		return nil, time.Time{}, true, nil
	}
	return resp, stored, false, nil
}

func (s *PGStore) miss() {
	if s.damaged.Add(1) == 1 {
		s.p.log.Warn().Str("cache", s.p.display).
			Msg("cache: an entry failed its checksum; it is treated as a miss and verified again (later ones are counted, not logged)")
	}
}

// claim takes the request k for this runner: a new claim, one of its own, or
// one whose lease ran out (counted in TakenOver). It reports false while
// another runner holds it. In the same round trip it reads the answer
// again: one stored since Get's first look (its runner's claim gone with
// it) is used, not paid for again. Each statement of the batch sees what was
// committed before it began (READ COMMITTED), the read included.
func (s *PGStore) claim(ctx context.Context, k string) (claimed bool, _ *api.VerifyResponse, _ time.Time, _ error) {
	b := &pgx.Batch{}
	b.Queue(`WITH prev AS (SELECT owner FROM cache_claims WHERE namespace = $1 AND key = $2)
		INSERT INTO cache_claims AS c (namespace, key, owner, expires)
		VALUES ($1, $2, $3, clock_timestamp() + $4::bigint * interval '1 millisecond')
		ON CONFLICT (namespace, key) DO UPDATE SET owner = excluded.owner, expires = excluded.expires
		WHERE c.expires < clock_timestamp() OR c.owner = excluded.owner
		RETURNING (SELECT owner FROM prev), c.xmax <> 0`, s.ns, k, s.p.owner, s.p.lease.Milliseconds())
	b.Queue(readSQL, s.ns, k)
	br := s.p.pool.SendBatch(ctx, b)
	var (
		prev    *string
		updated bool
	)
	err := br.QueryRow().Scan(&prev, &updated)
	claimed = err == nil
	if errors.Is(err, pgx.ErrNoRows) {
		err = nil
	}
	var (
		resp *api.VerifyResponse
		at   time.Time
	)
	if err == nil {
		resp, at, _, err = s.scan(br.QueryRow(), k)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, nil, time.Time{}, err
	}
	// An update (xmax set) replaced a claim; an insert may follow a claim
	// that its runner ended meanwhile with its answer, which is no takeover.
	if claimed && resp == nil && updated && prev != nil && *prev != s.p.owner {
		s.takeovers.Add(1)
	}
	return claimed, resp, at, nil
}

func (s *PGStore) release(ctx context.Context, k string) error {
	_, err := s.p.pool.Exec(ctx, "DELETE FROM cache_claims WHERE namespace = $1 AND key = $2 AND owner = $3", s.ns, k, s.p.owner)
	return err
}

// Put stores resp for key, stamped with the current time, and ends this
// runner's claim on it, in one statement: a runner waiting for the answer
// finds it at its next look. It returns once the answer is committed.
func (s *PGStore) Put(ctx context.Context, key string, resp *api.VerifyResponse) error {
	if resp == nil {
		return nil
	}
	return s.PutEncoded(ctx, key, api.AppendVerifyResponse(make([]byte, 0, 2048), resp))
}

// GetEncoded is GetAt; it gives no JSON (the answer is decoded as it is
// read): the caller encodes the answer when it needs it.
func (s *PGStore) GetEncoded(ctx context.Context, key string) (*api.VerifyResponse, []byte, time.Time, bool, error) {
	resp, at, ok, err := s.GetAt(ctx, key)
	return resp, nil, at, ok, err
}

// GetMany is GetEncoded of each of keys in turn, calling fn for those
// found: each may claim its key and wait for another runner, as Get does.
func (s *PGStore) GetMany(ctx context.Context, keys []string, fn func(i int, resp *api.VerifyResponse, answer []byte, at time.Time)) error {
	for i, k := range keys {
		resp, answer, at, ok, err := s.GetEncoded(ctx, k)
		if err != nil {
			return err
		}
		if ok {
			fn(i, resp, answer, at)
		}
	}
	return nil
}

// PutEncoded is Put of an answer encoded by api.AppendVerifyResponse.
func (s *PGStore) PutEncoded(ctx context.Context, key string, body []byte) error {
	if len(body) == 0 || s.p.Failed() != nil {
		return nil
	}
	k, at := entryKey(key), time.Now().UnixMilli()
	_, err := s.p.pool.Exec(ctx, `WITH put AS (
		INSERT INTO cache_answers (namespace, key, obtained_ms, answer, crc) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (namespace, key) DO UPDATE SET obtained_ms = excluded.obtained_ms, answer = excluded.answer, crc = excluded.crc)
	DELETE FROM cache_claims WHERE namespace = $1 AND key = $2 AND owner = $6`,
		s.ns, k, at, string(body), int64(checksum(s.ns, k, at, body)), s.p.owner)
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		s.p.fail(fmt.Errorf("writing: %w", err))
	}
	return nil
}

// Release ends this runner's claim on key without an answer (the call
// failed, was refused or was not made): a runner waiting for it takes the
// claim at its next look instead of after the lease. A key not claimed is
// left alone.
func (s *PGStore) Release(ctx context.Context, key string) error {
	if s.p.Failed() != nil {
		return nil
	}
	// Bounded: the caller may give a context without a deadline, to release
	// claims after the run stopped.
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.release(ctx, entryKey(key)); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.p.fail(fmt.Errorf("releasing a claim: %w", err))
	}
	return nil
}
