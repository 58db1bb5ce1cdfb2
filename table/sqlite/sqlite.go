package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sqlite "modernc.org/sqlite"

	"github.com/addrclean/addrclean/table"
)

func init() {
	table.Register(Open, "sqlite")
}

// TimeFormat is how timestamps are stored: SQLite has no timestamp type, and
// this text sorts in time order.
const TimeFormat = "2006-01-02T15:04:05.000000Z"

// DB is an SQLite database file. Reads go through a read-only handle of
// their own, so that a reader never holds the one writer connection and
// nothing is ever written through a source.
type DB struct {
	ro       *sql.DB
	readOnly bool
	// rw is the writer, opened by the first write (writer): nil until
	// then, and always when readOnly.
	mu       sync.Mutex
	rw       *sql.DB
	url      *table.URL
	display  string
	path     string
	lockWait time.Duration // the writer's busy timeout
}

// Open opens the database file of u: read-only and existing for a source;
// for a sink created if missing and put in WAL mode. An existing file is
// put in WAL mode only by the first write (a set-up or a batch), not by
// its checks, so that a run refused before it changes nothing in the
// file, not even its journal mode.
func Open(ctx context.Context, u *table.URL, opts table.Options) (table.Database, error) {
	d := &DB{url: u, readOnly: opts.ReadOnly, display: u.Display, path: u.Path, lockWait: cmp.Or(opts.LockTimeout, table.DefaultLockTimeout)}
	if _, err := os.Stat(u.Path); err != nil {
		if !opts.ReadOnly && errors.Is(err, fs.ErrNotExist) {
			// The writer opens first so that the file exists.
			if _, err := d.writer(ctx); err != nil {
				return nil, err
			}
		} else if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such database file", u.Display)
		} else {
			return nil, fmt.Errorf("%s: %w", u.Display, err)
		}
	}
	ro, err := openHandle(ctx, u, "mode=ro&_pragma=query_only(1)")
	if err != nil {
		_ = d.closeWriter()
		return nil, err
	}
	d.ro = ro
	return d, nil
}

func openHandle(ctx context.Context, u *table.URL, params string) (*sql.DB, error) {
	dsn := "file:" + (&url.URL{Path: u.Path}).EscapedPath() + "?" + params
	if !strings.Contains(params, "busy_timeout") { // the writer's is its lock timeout
		dsn += "&_pragma=busy_timeout(10000)"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u.Display, err)
	}
	// A file that is not a database fails only on first use.
	if _, err := db.ExecContext(ctx, "SELECT count(*) FROM sqlite_schema"); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", u.Display, err)
	}
	return db, nil
}

// writer returns the read-write handle, opening it the first time. WAL is
// persistent, and what lets a reader and the writer share the file. The
// busy timeout is the lock timeout of every DDL and write. Transactions
// take the write lock when they begin (_txlock): one that read first and
// then wrote would fail at once, without waiting, when another process (a
// shard beside it) had committed since its read, since SQLite cannot
// upgrade a stale snapshot.
func (d *DB) writer(ctx context.Context) (*sql.DB, error) {
	if d.readOnly {
		return nil, fmt.Errorf("%s was opened read-only", d.display)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.rw != nil {
		return d.rw, nil
	}
	rw, err := openHandle(ctx, d.url, "_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"+
		fmt.Sprintf("&_pragma=busy_timeout(%d)", max(d.lockWait.Milliseconds(), 1)))
	if err != nil {
		return nil, err
	}
	rw.SetMaxOpenConns(1) // one writer
	d.rw = rw
	return rw, nil
}

// closeWriter closes the writer, if it was opened.
func (d *DB) closeWriter() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.rw == nil {
		return nil
	}
	err := d.rw.Close()
	d.rw = nil
	return err
}

func schemaOf(n table.Name) string { return cmp.Or(n.Schema, "main") }

// Columns reads the columns of a table or view.
func (d *DB) Columns(ctx context.Context, n table.Name) ([]table.Column, error) {
	rows, err := d.ro.QueryContext(ctx, "SELECT name, type FROM pragma_table_info(?1, ?2) ORDER BY cid", n.Table, schemaOf(n))
	if err != nil {
		return nil, d.wrap(err)
	}
	defer rows.Close()
	var cols []table.Column
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return nil, d.wrap(err)
		}
		cols = append(cols, table.Column{Name: name, Type: typeOf(typ)})
	}
	if err := rows.Err(); err != nil {
		return nil, d.wrap(err)
	}
	if len(cols) == 0 {
		// No "did you mean": SQLite's lookup already ignores case as far
		// as SQLite folds it (ASCII), so no other spelling can match.
		return nil, fmt.Errorf("%w: %s in %s", table.ErrNoTable, n, d.display)
	}
	return cols, nil
}

// typeOf is the type a declared type reads as: classOf's where that is
// exact, else text, but that DATE reads as a time.
func typeOf(decl string) table.Type {
	if t, exact := classOf(decl); exact {
		return t
	}
	if strings.EqualFold(decl, "DATE") {
		return table.Timestamp
	}
	return table.Text
}

// wrap marks the errors the user must fix: an unknown table or column, a
// query SQLite cannot compile.
func (d *DB) wrap(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "no such table"):
		return fmt.Errorf("%w: %w", table.ErrNoTable, err)
	case strings.Contains(msg, "no such column"):
		return fmt.Errorf("%w: %w", table.ErrNoColumn, err)
	}
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == 1 { // SQLITE_ERROR: SQL the engine refused
		return fmt.Errorf("%w: %w", table.ErrBadQuery, err)
	}
	return err
}

// Select runs query on a read-only connection of its own, on which only
// one statement that reads can run (see read.go).
func (d *DB) Select(ctx context.Context, query string) (table.Rows, error) {
	if err := oneRead(query); err != nil {
		return nil, err
	}
	conn, err := d.readConn(ctx)
	if err != nil {
		return nil, err
	}
	rs, err := conn.QueryContext(ctx, query)
	if err != nil {
		release(conn)
		return nil, d.readErr(ctx, err)
	}
	cols, err := columnsOf(rs)
	if err != nil {
		rs.Close()
		release(conn)
		return nil, d.readErr(ctx, err)
	}
	r := &rows{conn: conn, rs: rs, cols: cols, d: d}
	r.vals, r.ptrs = scanTargets(len(cols))
	return r, nil
}

// scanTargets returns n values and pointers to them, for Scan.
func scanTargets(n int) (vals, ptrs []any) {
	vals, ptrs = make([]any, n), make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	return vals, ptrs
}

// columnsOf returns the columns of a result, typed by their declared types.
func columnsOf(rs *sql.Rows) ([]table.Column, error) {
	names, err := rs.Columns()
	if err != nil {
		return nil, err
	}
	types, _ := rs.ColumnTypes()
	cols := make([]table.Column, len(names))
	for i, n := range names {
		cols[i] = table.Column{Name: n}
		if i < len(types) {
			cols[i].Type = typeOf(types[i].DatabaseTypeName())
		}
	}
	return cols, nil
}

type rows struct {
	d    *DB
	conn *sql.Conn
	rs   *sql.Rows
	cols []table.Column
	vals []any
	ptrs []any
}

func (r *rows) Columns() []table.Column { return r.cols }

func (r *rows) Next(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !r.rs.Next() {
		if err := r.rs.Err(); err != nil {
			return nil, r.d.readErr(ctx, err)
		}
		return nil, io.EOF
	}
	if err := r.rs.Scan(r.ptrs...); err != nil {
		return nil, r.d.readErr(ctx, err)
	}
	return cells(r.vals, r.cols), nil
}

// cells are the texts of the values of a row of columns cols.
func cells(vals []any, cols []table.Column) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = cell(v)
		// A BOOLEAN column holds 1 and 0: read them as PostgreSQL's do.
		if b, ok := v.(int64); ok && cols[i].Type == table.Bool && (b == 0 || b == 1) {
			out[i] = strconv.FormatBool(b == 1)
		}
	}
	return out
}

// cell is a value's text: integers in decimal, reals in the shortest form
// that reads back the same, times in ISO 8601, NULL as "".
func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		if math.Abs(x) < 1e21 {
			return strconv.FormatFloat(x, 'f', -1, 64)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return x.Format("2006-01-02 15:04:05.999999999Z07:00")
	}
	return fmt.Sprint(v)
}

func (r *rows) Close() error {
	if r.rs == nil {
		return nil
	}
	err := r.rs.Close()
	if cerr := release(r.conn); err == nil {
		err = cerr
	}
	r.rs = nil
	return err
}

// seenTables numbers the temporary tables of the targets of a process.
var seenTables atomic.Int64

// Target upserts each record with a prepared statement.
func (d *DB) Target(ctx context.Context, n table.Name, key string, cols []table.Column) (table.Target, error) {
	w, err := d.writer(ctx)
	if err != nil {
		return nil, err
	}
	q := n.SQL()
	names := make([]string, 0, len(cols)+1)
	names = append(names, table.QuoteIdent(key))
	marks := []string{"?"}
	for _, c := range table.Written(cols) {
		names = append(names, table.QuoteIdent(c.Name))
		marks = append(marks, "?")
	}
	sets := table.UpsertSets(cols, "cur", "excluded")
	k := table.QuoteIdent(key)
	// The keys written so far, on disk in the writer's temporary database:
	// an id repeated across batches is counted without memory growing.
	seen := table.QuoteIdent(fmt.Sprintf("addrclean_seen_%d", seenTables.Add(1)))
	return &target{
		d: d, w: w, q: q, name: n,
		upsert: fmt.Sprintf("INSERT INTO %s AS cur (%s) VALUES (%s) ON CONFLICT (%s) DO UPDATE SET %s WHERE %s",
			q, strings.Join(names, ", "), strings.Join(marks, ", "), k, strings.Join(sets, ", "), table.Changed(cols, "cur", "excluded")),
		exists:  fmt.Sprintf("SELECT 1 FROM %s WHERE %s = ?", q, k),
		del:     fmt.Sprintf("DELETE FROM %s WHERE %s = ?", q, k),
		newSeen: "CREATE TEMP TABLE IF NOT EXISTS " + seen + " (k TEXT PRIMARY KEY)",
		seen:    "INSERT OR IGNORE INTO temp." + seen + " (k) VALUES (?)",
	}, nil
}

// UniqueKey reads the primary key and the unique, non-partial indexes.
func (d *DB) UniqueKey(ctx context.Context, n table.Name, key string) (bool, error) {
	// An INTEGER PRIMARY KEY is the rowid and has no index of its own.
	var unique bool
	err := d.ro.QueryRowContext(ctx, `SELECT (SELECT count(*) = 1 AND max(name) = ?3 FROM pragma_table_info(?1, ?2) WHERE pk > 0)
		OR EXISTS (SELECT 1 FROM pragma_index_list(?1, ?2) il WHERE il."unique" = 1 AND il.partial = 0
		AND (SELECT count(*) FROM pragma_index_info(il.name, ?2)) = 1
		AND (SELECT name FROM pragma_index_info(il.name, ?2)) = ?3)`, n.Table, schemaOf(n), key).Scan(&unique)
	return unique, d.wrap(err)
}

// sqlTypes are the declared types of results columns other than text.
// BIGINT, not INTEGER: an INTEGER PRIMARY KEY would be the rowid and refuse
// an id that is not a number. A timestamp is stored as TimeFormat text; the
// declared type tells readers it is a time.
var sqlTypes = map[table.Type]string{
	table.Integer: "BIGINT", table.Bool: "BOOLEAN", table.Float: "REAL", table.Timestamp: "TIMESTAMP",
}

// SQLType is the declared type of a results column of type t.
func (d *DB) SQLType(t table.Type) string { return cmp.Or(sqlTypes[t], "TEXT") }

type target struct {
	d                                  *DB
	w                                  *sql.DB
	q                                  string
	name                               table.Name
	upsert, exists, del, newSeen, seen string
}

func value(v any) any {
	switch x := v.(type) {
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case time.Time:
		return x.UTC().Format(TimeFormat)
	}
	return v
}

// Write upserts recs and deletes del in one transaction; the busy timeout
// bounds the wait for the write lock.
func (t *target) Write(ctx context.Context, recs []table.Record, del []string) (table.Counts, error) {
	var n table.Counts
	what := "table " + t.name.String()
	tx, err := t.w.BeginTx(ctx, nil)
	if err != nil {
		return n, t.d.lockError(err, what, "BEGIN")
	}
	defer func() { _ = tx.Rollback() }()
	if len(recs) > 0 {
		if _, err := tx.ExecContext(ctx, t.newSeen); err != nil {
			return n, t.d.lockError(err, what, t.newSeen)
		}
		var sts [3]*sql.Stmt
		for i, q := range []string{t.upsert, t.exists, t.seen} {
			if sts[i], err = tx.PrepareContext(ctx, q); err != nil {
				return n, t.d.wrap(err)
			}
			defer sts[i].Close()
		}
		upsert, exists, seen := sts[0], sts[1], sts[2]
		args := make([]any, 0, len(recs[0].Values)+1)
		for _, r := range recs {
			args = append(args[:0], r.Key)
			for _, v := range r.Values {
				args = append(args, value(v))
			}
			var one int
			err := exists.QueryRowContext(ctx, r.Key).Scan(&one)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return n, t.d.wrap(err)
			}
			had := err == nil
			res, err := upsert.ExecContext(ctx, args...)
			if err != nil {
				return n, t.d.lockError(err, what, "INSERT ... ON CONFLICT DO UPDATE")
			}
			switch ra, _ := res.RowsAffected(); {
			case ra == 0:
				n.Unchanged++
			case had:
				n.Updated++
			default:
				n.Inserted++
			}
			res, err = seen.ExecContext(ctx, r.Key)
			if err != nil {
				return n, t.d.wrap(err)
			}
			if ra, _ := res.RowsAffected(); ra == 0 {
				n.Repeated++
			}
		}
	}
	if len(del) > 0 {
		st, err := tx.PrepareContext(ctx, t.del)
		if err != nil {
			return n, t.d.wrap(err)
		}
		defer st.Close()
		for _, k := range del {
			res, err := st.ExecContext(ctx, k)
			if err != nil {
				return n, t.d.lockError(err, what, "DELETE")
			}
			ra, _ := res.RowsAffected()
			n.Deleted += ra
		}
	}
	if err := tx.Commit(); err != nil {
		return table.Counts{}, t.d.lockError(err, what, "COMMIT")
	}
	return n, nil
}

func (t *target) Close() error { return nil }

// Exec runs sql through the writer connection.
func (d *DB) Exec(ctx context.Context, sql string) error {
	w, err := d.writer(ctx)
	if err != nil {
		return err
	}
	_, err = w.ExecContext(ctx, sql)
	return d.wrap(err)
}

// Close closes the database.
func (d *DB) Close() error {
	err := d.ro.Close()
	if werr := d.closeWriter(); err == nil {
		err = werr
	}
	return err
}
