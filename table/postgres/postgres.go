package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/addrclean/addrclean/internal/redact"
	"github.com/addrclean/addrclean/table"
)

func init() {
	table.Register(Open, "postgres")
}

// FetchRows is the rows a test reads to cross the reading's internal
// batches: rows stream one by one from the connection, so any count does.
const FetchRows = 1000

// DB is a PostgreSQL database. Each source and target has a connection of
// its own; catalog questions use a connection opened with the database,
// which also proves the URL and password work.
type DB struct {
	cfg      *pgx.ConnConfig
	meta     *pgx.Conn
	display  string
	secrets  []string
	lockWait time.Duration
}

// Open connects to the database of u. Its errors never show the password,
// whether it comes from the URL, PGPASSWORD or a .pgpass file.
func Open(ctx context.Context, u *table.URL, opts table.Options) (table.Database, error) {
	secrets := redact.URLPasswords(u.Raw)
	cfg, err := pgx.ParseConfig(u.Raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", table.ErrBadURL, u.Display, redact.Scrub(err, secrets...))
	}
	if cfg.Password != "" {
		secrets = append(secrets, cfg.Password)
	}
	// Cells are text as the server writes it; these make that text the same
	// whatever the server's or the role's settings.
	for k, v := range map[string]string{"DateStyle": "ISO, YMD", "TimeZone": "UTC", "IntervalStyle": "iso_8601",
		"extra_float_digits": "1", "application_name": "addrclean"} {
		if _, set := cfg.RuntimeParams[k]; !set {
			cfg.RuntimeParams[k] = v
		}
	}
	d := &DB{cfg: cfg, display: u.Display, secrets: secrets, lockWait: cmp.Or(opts.LockTimeout, table.DefaultLockTimeout)}
	// Reads wait for locks too: behind an ALTER TABLE or a VACUUM FULL of
	// the input, reading it (or planning a query of it) would hold the
	// run, without a word, for as long as the lock is held.
	if _, set := cfg.RuntimeParams["lock_timeout"]; !set {
		cfg.RuntimeParams["lock_timeout"] = strconv.FormatInt(max(d.lockWait.Milliseconds(), 1), 10)
	}
	if d.meta, err = d.connect(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *DB) connect(ctx context.Context) (*pgx.Conn, error) {
	c, err := pgx.ConnectConfig(ctx, d.cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", d.display, redact.Scrub(err, d.secrets...))
	}
	return c, nil
}

// Columns reads the columns of a table, view or materialized view.
func (d *DB) Columns(ctx context.Context, n table.Name) ([]table.Column, error) {
	var exists bool
	if err := d.meta.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", n.SQL()).Scan(&exists); err != nil {
		return nil, d.wrap(err)
	}
	if !exists {
		return nil, d.noTable(ctx, n)
	}
	rows, err := d.meta.Query(ctx, `SELECT attname, atttypid FROM pg_attribute
		WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped ORDER BY attnum`, n.SQL())
	if err != nil {
		return nil, d.wrap(err)
	}
	cols, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (table.Column, error) {
		var name string
		var oid uint32
		err := row.Scan(&name, &oid)
		return table.Column{Name: name, Type: typeOf(oid)}, err
	})
	if err != nil {
		return nil, d.wrap(err)
	}
	return cols, nil
}

// noTable is the error for a missing table, with the spelling that exists
// when only case differs (unquoted names fold to lower case in SQL).
func (d *DB) noTable(ctx context.Context, n table.Name) error {
	var other string
	err := d.meta.QueryRow(ctx, `SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE lower(c.relname) = lower($1) AND ($2 = '' OR lower(n.nspname) = lower($2))
		AND c.relkind IN ('r','v','m','p','f') AND pg_table_is_visible(c.oid) LIMIT 1`, n.Table, n.Schema).Scan(&other)
	if err == nil {
		return fmt.Errorf("%w: %s in %s (names are matched exactly: did you mean %s?)", table.ErrNoTable, n, d.display, other)
	}
	return fmt.Errorf("%w: %s in %s", table.ErrNoTable, n, d.display)
}

func typeOf(oid uint32) table.Type {
	switch oid {
	case 20, 21, 23: // int8, int2, int4
		return table.Integer
	case 16:
		return table.Bool
	case 700, 701:
		return table.Float
	case 1114, 1184:
		return table.Timestamp
	}
	return table.Text
}

// wrap scrubs secrets from err and marks what the user must fix: SQLSTATE
// class 42 (syntax error, undefined table, column or function...).
func (d *DB) wrap(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "42P01":
			return fmt.Errorf("%w: %w", table.ErrNoTable, err)
		case pe.Code == "42703":
			return fmt.Errorf("%w: %w", table.ErrNoColumn, err)
		case pe.Code == "42501": // insufficient privilege: not a mistake in the query
		case strings.HasPrefix(pe.Code, "42"):
			return fmt.Errorf("%w: %w", table.ErrBadQuery, err)
		}
	}
	return redact.Scrub(err, d.secrets...)
}

// Select declares a cursor for query in a repeatable-read, read-only
// transaction and fetches all its rows, as they come, in one batch of
// statements sent at once (see read.go): the server never waits for the
// client inside the transaction, query can neither end the transaction nor
// add a statement of its own (the extended protocol takes one statement;
// a cursor only a query), and nothing can be written through it.
func (d *DB) Select(ctx context.Context, query string) (table.Rows, error) {
	conn, err := d.connectReader(ctx)
	if err != nil {
		return nil, err
	}
	r := &rows{conn: conn, d: d}
	r.mrr = readBatch(ctx, conn.PgConn(), "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", nil,
		"DECLARE addrclean_source NO SCROLL CURSOR FOR "+query, "FETCH ALL FROM addrclean_source")
	rr, err := skipTo(r.mrr, 2)
	if err != nil {
		err = d.readErr(ctx, conn, err)
		r.Close()
		return nil, err
	}
	r.rr = rr
	r.cols, r.oids = columnsOf(rr.FieldDescriptions())
	return r, nil
}

// columnsOf returns the columns of a result and their types' OIDs.
func columnsOf(fields []pgconn.FieldDescription) ([]table.Column, []uint32) {
	cols := make([]table.Column, len(fields))
	oids := make([]uint32, len(fields))
	for i, f := range fields {
		cols[i], oids[i] = table.Column{Name: f.Name, Type: typeOf(f.DataTypeOID)}, f.DataTypeOID
	}
	return cols, oids
}

type rows struct {
	conn *pgx.Conn
	d    *DB
	mrr  *pgconn.MultiResultReader
	rr   *pgconn.ResultReader // nil once every row is read
	cols []table.Column
	oids []uint32
}

// cells are the texts of a row's values: the server's own, NULL as "",
// except that booleans read true/false rather than t/f.
func cells(vals [][]byte, oids []uint32) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		switch {
		case oids[i] == 16 && string(v) == "t":
			out[i] = "true"
		case oids[i] == 16 && string(v) == "f":
			out[i] = "false"
		default:
			out[i] = string(v)
		}
	}
	return out
}

func (r *rows) Columns() []table.Column { return r.cols }

func (r *rows) Next(ctx context.Context) ([]string, error) {
	if r.rr == nil {
		return nil, io.EOF
	}
	if r.rr.NextRow() {
		return cells(r.rr.Values(), r.oids), nil
	}
	_, err := r.rr.Close()
	r.rr = nil
	if err == nil {
		err = finish(r.mrr) // the COMMIT
	}
	if err != nil {
		return nil, r.d.readErr(ctx, r.conn, err)
	}
	return nil, io.EOF
}

// Close ends the transaction (and with it the cursor) by closing the
// connection, rows left unread or not: nothing was written.
func (r *rows) Close() error {
	if r.conn == nil {
		return nil
	}
	err := closeConn(r.conn)
	r.conn = nil
	return err
}

// UniqueKey looks for a unique, non-partial index on key alone.
func (d *DB) UniqueKey(ctx context.Context, n table.Name, key string) (bool, error) {
	var unique bool
	err := d.meta.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a
		ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
		WHERE i.indrelid = to_regclass($1) AND i.indisunique AND i.indnkeyatts = 1 AND i.indpred IS NULL
		AND i.indexprs IS NULL AND a.attname = $2)`, n.SQL(), key).Scan(&unique)
	return unique, d.wrap(err)
}

// Target stages each batch in a temporary table, upserted from in one
// statement.
func (d *DB) Target(ctx context.Context, n table.Name, key string, cols []table.Column) (table.Target, error) {
	q := n.SQL()
	var keySQL string
	if err := d.meta.QueryRow(ctx, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = to_regclass($1) AND attname = $2`, q, key).Scan(&keySQL); err != nil {
		return nil, d.wrap(err)
	}
	conn, err := d.connect(ctx)
	if err != nil {
		return nil, err
	}
	t := &target{d: d, conn: conn, q: q, name: n}
	// The staging table has the key as text, cast on upsert to the table's
	// own key type, and the other columns typed as the table's. The seen
	// table holds the keys written so far, so that an id that repeats
	// across batches is counted (it stays on the server, not in memory).
	var stage strings.Builder
	stage.WriteString("CREATE TEMP TABLE addrclean_stage (k text")
	t.copyCols = []string{"k"}
	var names []string
	for _, c := range table.Written(cols) {
		fmt.Fprintf(&stage, ", %s %s", table.QuoteIdent(c.Name), d.SQLType(c.Type))
		t.copyCols = append(t.copyCols, c.Name)
		names = append(names, table.QuoteIdent(c.Name))
	}
	sets := table.UpsertSets(cols, "cur", "EXCLUDED")
	stage.WriteString(") ON COMMIT DELETE ROWS")
	for _, sql := range []string{stage.String(), "CREATE TEMP TABLE addrclean_seen (k text PRIMARY KEY)"} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			_ = conn.Close(ctx)
			return nil, d.wrap(err)
		}
	}
	k := table.QuoteIdent(key)
	// Rows equal to their staged record are left out before the INSERT:
	// ON CONFLICT locks the row it meets even when its WHERE then skips the
	// update, and that lock is a write (WAL, a dirtied page) per unchanged
	// row. xmax is 0 in a row the INSERT made, the updater's id in one it
	// updated: the one way to tell them apart in RETURNING.
	same := fmt.Sprintf("SELECT 1 FROM %s AS cur WHERE cur.%s = CAST(s.k AS %s) AND NOT (%s)", q, k, keySQL, table.Changed(cols, "cur", "s"))
	t.upsert = fmt.Sprintf("WITH up AS (INSERT INTO %s AS cur (%s, %s) SELECT CAST(k AS %s), %s FROM pg_temp.addrclean_stage AS s "+
		"WHERE NOT EXISTS (%s) ON CONFLICT (%s) DO UPDATE SET %s WHERE %s RETURNING (cur.xmax = 0) AS ins) "+
		"SELECT count(*) FILTER (WHERE ins), count(*) FILTER (WHERE NOT ins) FROM up",
		q, k, strings.Join(names, ", "), keySQL, strings.Join(names, ", "), same, k, strings.Join(sets, ", "), table.Changed(cols, "cur", "EXCLUDED"))
	t.del = fmt.Sprintf("DELETE FROM %s WHERE %s = ANY(CAST($1::text[] AS %s[]))", q, k, keySQL)
	return t, nil
}

// sqlTypes are the PostgreSQL types of results columns other than text.
var sqlTypes = map[table.Type]string{
	table.Integer: "bigint", table.Bool: "boolean", table.Float: "double precision",
	table.Timestamp: "timestamp with time zone",
}

// SQLType is the PostgreSQL type of a results column of type t.
func (d *DB) SQLType(t table.Type) string { return cmp.Or(sqlTypes[t], "text") }

type target struct {
	d        *DB
	conn     *pgx.Conn
	q        string
	name     table.Name
	copyCols []string
	upsert   string
	del      string
}

// writeAttempts bounds Write's attempts at a batch the server aborted to
// break a deadlock.
const writeAttempts = 3

// Write copies recs into the staging table and upserts them, and deletes
// del, in one transaction under the lock timeout. Runners writing one
// table at once (shards, or two first runs) can lock the same rows in
// different orders; the server then aborts one transaction (40P01), which
// is written again: the batch is in memory and its transaction left no
// trace.
func (t *target) Write(ctx context.Context, recs []table.Record, del []string) (table.Counts, error) {
	for attempt := 1; ; attempt++ {
		n, err := t.write(ctx, recs, del)
		var pe *pgconn.PgError
		if err == nil || attempt == writeAttempts || !errors.As(err, &pe) || pe.Code != "40P01" {
			return n, err
		}
	}
}

func (t *target) write(ctx context.Context, recs []table.Record, del []string) (table.Counts, error) {
	var n table.Counts
	tx, err := t.conn.Begin(ctx)
	if err != nil {
		return n, t.d.wrap(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := t.d.lockTimeout(ctx, tx); err != nil {
		return n, err
	}
	what := "table " + t.name.String()
	if len(recs) > 0 {
		i := 0
		src := pgx.CopyFromFunc(func() ([]any, error) {
			if i >= len(recs) {
				return nil, nil
			}
			r := recs[i]
			i++
			row := make([]any, 0, len(r.Values)+1)
			row = append(row, r.Key)
			return append(row, r.Values...), nil
		})
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"addrclean_stage"}, t.copyCols, src); err != nil {
			return n, t.d.wrap(err)
		}
		if err := tx.QueryRow(ctx, t.upsert).Scan(&n.Inserted, &n.Updated); err != nil {
			return n, t.d.lockError(err, what, "INSERT ... ON CONFLICT DO UPDATE")
		}
		n.Unchanged = int64(len(recs)) - n.Inserted - n.Updated
		tag, err := tx.Exec(ctx, "INSERT INTO pg_temp.addrclean_seen SELECT k FROM pg_temp.addrclean_stage ON CONFLICT DO NOTHING")
		if err != nil {
			return n, t.d.wrap(err)
		}
		n.Repeated = int64(len(recs)) - tag.RowsAffected()
	}
	if len(del) > 0 {
		tag, err := tx.Exec(ctx, t.del, del)
		if err != nil {
			return n, t.d.lockError(err, what, "DELETE")
		}
		n.Deleted = tag.RowsAffected()
	}
	if err := tx.Commit(ctx); err != nil {
		return table.Counts{}, t.d.wrap(err)
	}
	return n, nil
}

func (t *target) Close() error { return closeConn(t.conn) }

// Exec runs sql on the catalog connection.
func (d *DB) Exec(ctx context.Context, sql string) error {
	_, err := d.meta.Exec(ctx, sql)
	return d.wrap(err)
}

// Close closes the catalog connection.
func (d *DB) Close() error { return closeConn(d.meta) }

// closeConn closes c, waiting a bounded time for the server: a Close runs
// after the run's context may have been cancelled.
func closeConn(c *pgx.Conn) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Close(ctx)
}
