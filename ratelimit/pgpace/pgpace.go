// Package pgpace keeps a timeline of request slots in PostgreSQL, so that
// several runners (processes, machines) verifying against one service with
// one key send at one rate between them (run --rate-shared). It is the
// ratelimit.Shared of those runners: each request takes the next slot with
// one UPDATE, and a 429 pushes the next slot back for all of them and is
// counted, so that all of them slow down.
//
// The table, in the connection's first schema (next to the shared cache's):
//
//	addrclean_pace (service text PRIMARY KEY,   -- the service and key: a SHA-256, never the key
//	                next_at timestamptz NOT NULL, -- the next free slot, by the database's clock
//	                pauses  bigint NOT NULL)      -- 429s that paused the timeline, so far
//
// Times are the database's: runners on machines whose clocks disagree still
// space their requests evenly, as each learns how far its slot is from the
// database's now.
package pgpace

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/internal/redact"
	"github.com/addrclean/addrclean/ratelimit"
)

// Table is the name of the timeline's table.
const Table = "addrclean_pace"

// ErrBadURL is wrapped by Open's error when the URL cannot be read.
var ErrBadURL = errors.New("bad pacing URL")

// ErrNotPace is wrapped by Open's error when a table named Table is not
// addrclean's.
var ErrNotPace = errors.New("not an addrclean pacing table")

const ddl = `CREATE TABLE ` + Table + ` (
	service text        PRIMARY KEY,      -- the service and key (cache namespace id)
	next_at timestamptz NOT NULL,         -- the next free slot
	pauses  bigint      NOT NULL DEFAULT 0 -- 429s that paused the timeline, so far
)`

// setupLock is the advisory lock key under which runners starting together
// create the table one at a time ("addrclean-pace" in ASCII, truncated).
const setupLock = 0x6164_6472_7061_6365

// statementTimeout bounds one reservation: the row is locked for the
// length of one UPDATE, so a long wait means a database in trouble, and the
// runner had better pace alone than stall.
const statementTimeout = 2 * time.Second

// Pacer is a timeline of one service and key in PostgreSQL. It is safe for
// concurrent use.
type Pacer struct {
	pool    *pgxpool.Pool
	service string
	display string
	secrets []string
	log     zerolog.Logger
	// failing is set while reservations fail, so that a database down
	// is logged once, and its return once.
	failing atomic.Bool
}

// Open connects to the database of rawURL (postgres://...), checks that a
// table named Table there is the timeline's (ErrNotPace), and returns the
// timeline of service (an identity of the service and key that holds no
// secret: the cache's namespace id). It creates nothing: Prepare does, once
// the run can no longer be refused. display is the URL as errors and logs
// may show it; maxConns caps the connections (a run's workers at most).
func Open(ctx context.Context, rawURL, display, service string, maxConns int32, log zerolog.Logger) (*Pacer, error) {
	secrets := redact.URLPasswords(rawURL)
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("pacing %s: %w: %w", display, ErrBadURL, redact.Scrub(err, secrets...))
	}
	if p := cfg.ConnConfig.Password; p != "" {
		secrets = append(secrets, p)
	}
	params := cfg.ConnConfig.RuntimeParams
	if _, set := params["application_name"]; !set {
		params["application_name"] = "addrclean pace"
	}
	// A slot lost in a server crash costs nothing: the next runner takes
	// the slot after the one before it. Not waiting for the WAL flush
	// keeps each reservation at one round trip and no fsync.
	params["synchronous_commit"] = "off"
	params["statement_timeout"] = fmt.Sprint(statementTimeout.Milliseconds())
	if maxConns > 0 && !strings.Contains(rawURL, "pool_max_conns") {
		cfg.MaxConns = maxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pacing %s: %w", display, redact.Scrub(err, secrets...))
	}
	p := &Pacer{pool: pool, service: service, display: display, secrets: secrets, log: log}
	if err := p.setUp(ctx, false); err != nil {
		pool.Close()
		return nil, p.wrap(err)
	}
	return p, nil
}

// Prepare creates the table when it is missing (checking it again: another
// runner may have made it meanwhile). Call it before the first Reserve; a
// nil Pacer has nothing to prepare.
func (p *Pacer) Prepare(ctx context.Context) error {
	if p == nil {
		return nil
	}
	if err := p.setUp(ctx, true); err != nil {
		return p.wrap(err)
	}
	return nil
}

// setUp refuses a table of the name Table that is not addrclean's and, with
// create, creates it if it is missing, under an advisory lock so that
// runners starting together do not race.
func (p *Pacer) setUp(ctx context.Context, create bool) error {
	return pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = 5000"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(setupLock)); err != nil {
			return err
		}
		var cols string
		err := tx.QueryRow(ctx, `SELECT coalesce(string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ',' ORDER BY a.attnum), '')
			FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
			WHERE c.relnamespace = current_schema()::regnamespace AND c.relname = $1`, Table).Scan(&cols)
		switch {
		case err != nil:
			return err
		case cols == "" && create:
			_, err = tx.Exec(ctx, ddl)
			return err
		case cols == "":
			return nil
		case cols != "service text,next_at timestamp with time zone,pauses bigint":
			return fmt.Errorf("%w: table %s has columns %s; point --cache at another database or schema (search_path)", ErrNotPace, Table, cols)
		}
		return nil
	})
}

// Close closes the connections; a nil Pacer has none.
func (p *Pacer) Close() {
	if p != nil {
		p.pool.Close()
	}
}

// wrap names the database in err and takes any password out of it.
func (p *Pacer) wrap(err error) error {
	return fmt.Errorf("pacing %s: %w", p.display, redact.Scrub(err, p.secrets...))
}

// reserveSQL takes the slot after the last one taken, or now when that is
// past, in one statement: the row's lock orders the runners, and the slot
// and now are both read from the database's clock.
const reserveSQL = `INSERT INTO ` + Table + ` AS p (service, next_at)
	VALUES ($1, clock_timestamp() + $2 * interval '1 microsecond')
	ON CONFLICT (service) DO UPDATE SET next_at = greatest(p.next_at, clock_timestamp()) + $2 * interval '1 microsecond'
	RETURNING p.next_at - $2 * interval '1 microsecond', clock_timestamp(), p.pauses`

// reserve takes the next slot, interval after the one before, and returns
// it, the database's time after taking it and the count of pauses.
func (p *Pacer) reserve(ctx context.Context, interval time.Duration) (slot, now time.Time, pauses int64, err error) {
	err = p.pool.QueryRow(ctx, reserveSQL, p.service, interval.Microseconds()).Scan(&slot, &now, &pauses)
	return slot, now, pauses, err
}

// Reserve takes the next slot of the timeline (ratelimit.Shared). A failure
// is logged (once, until reservations work again) and returned: the runner
// then paces alone.
func (p *Pacer) Reserve(ctx context.Context, interval time.Duration) (ratelimit.Slot, error) {
	slot, now, pauses, err := p.reserve(ctx, max(interval, time.Microsecond))
	if err != nil {
		if ctx.Err() == nil && !p.failing.Swap(true) {
			p.log.Warn().Err(p.wrap(err)).Msg("shared pacing failed: this runner paces alone at --rate until the database answers again")
		}
		return ratelimit.Slot{}, p.wrap(err)
	}
	if p.failing.Swap(false) {
		p.log.Info().Str("pacing", p.display).Msg("shared pacing works again")
	}
	return ratelimit.Slot{Wait: slot.Sub(now), Pauses: pauses}, nil
}

// Pause moves the next free slot to d from now at the earliest and counts
// the pause (ratelimit.Shared): every runner waits out a 429 one of them
// saw, and slows down.
func (p *Pacer) Pause(ctx context.Context, d time.Duration) (int64, error) {
	var pauses int64
	err := p.pool.QueryRow(ctx, `INSERT INTO `+Table+` AS p (service, next_at, pauses)
		VALUES ($1, clock_timestamp() + $2 * interval '1 microsecond', 1)
		ON CONFLICT (service) DO UPDATE SET next_at = greatest(p.next_at, clock_timestamp() + $2 * interval '1 microsecond'),
			pauses = p.pauses + 1
		RETURNING p.pauses`, p.service, d.Microseconds()).Scan(&pauses)
	if err != nil {
		return 0, p.wrap(err)
	}
	return pauses, nil
}
