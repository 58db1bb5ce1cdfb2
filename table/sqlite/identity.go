package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	sqlite "modernc.org/sqlite"

	"github.com/addrclean/addrclean/table"
)

// Identity is the database file's identity (fileID): another path or a
// link to the same file gives the same.
func (d *DB) Identity(context.Context) (string, error) {
	id, err := fileID(d.path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", d.display, err)
	}
	return id, nil
}

// absPath is path absolute, with links resolved: the identity of a file
// where the system gives no device and inode.
func absPath(path string) (string, error) {
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(p)
	return "sqlite path " + abs, err
}

// Resolve finds the table or view n means as SQLite does: names of any
// case; an unqualified name in temp first, then main, then attached
// databases in order.
func (d *DB) Resolve(ctx context.Context, n table.Name) (table.Relation, bool, error) {
	r, _, ok, err := d.resolve(ctx, n)
	return r, ok, err
}

// listed is a relation as pragma_table_list spells it; kind is "table",
// "view", ...
type listed struct{ schema, name, kind string }

// resolve is Resolve, with the relation as pragma_table_list spells it.
func (d *DB) resolve(ctx context.Context, n table.Name) (r table.Relation, l listed, ok bool, err error) {
	err = d.ro.QueryRowContext(ctx, `SELECT l.schema, l.name, l.type FROM pragma_table_list l
		JOIN pragma_database_list b ON b.name = l.schema
		WHERE l.name = ?1 COLLATE NOCASE AND (?2 = '' OR l.schema = ?2 COLLATE NOCASE)
		ORDER BY CASE l.schema WHEN 'temp' THEN -1 ELSE b.seq END LIMIT 1`, n.Table, n.Schema).Scan(&l.schema, &l.name, &l.kind)
	if errors.Is(err, sql.ErrNoRows) {
		return r, l, false, nil
	}
	if err != nil {
		return r, l, false, d.wrap(err)
	}
	return relation(l.schema, l.name), l, true, nil
}

func relation(schema, name string) table.Relation {
	return table.Relation{ID: strings.ToLower(schema) + "." + strings.ToLower(name), Name: table.Name{Schema: schema, Table: name}.String()}
}

// Reads compiles query with EXPLAIN (nothing runs, and the connection is
// read-only) and collects the tables whose b-trees its program opens:
// views are compiled into their tables, and an index leads to its table.
func (d *DB) Reads(ctx context.Context, query string) ([]table.Relation, error) {
	q, err := oneStatement(query)
	if err != nil {
		return nil, err
	}
	conn, err := d.ro.Conn(ctx)
	if err != nil {
		return nil, d.wrap(err)
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, "EXPLAIN "+q)
	if err != nil {
		return nil, d.wrap(err)
	}
	type tree struct{ db, root int64 }
	var opened []tree
	for rows.Next() {
		var addr, p1, p2, p3, p5 int64
		var op string
		var p4, comment any
		if err := rows.Scan(&addr, &op, &p1, &p2, &p3, &p4, &p5, &comment); err != nil {
			rows.Close()
			return nil, d.wrap(err)
		}
		if op == "OpenRead" || op == "OpenWrite" || op == "ReopenIdx" {
			opened = append(opened, tree{db: p3, root: p2})
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, d.wrap(err)
	}
	var out []table.Relation
	for _, t := range opened {
		var schema string
		if err := conn.QueryRowContext(ctx, "SELECT name FROM pragma_database_list WHERE seq = ?", t.db).Scan(&schema); err != nil {
			return nil, d.wrap(err)
		}
		var name string
		err := conn.QueryRowContext(ctx, fmt.Sprintf("SELECT tbl_name FROM %s.sqlite_schema WHERE rootpage = ?", table.QuoteIdent(schema)),
			t.root).Scan(&name)
		if errors.Is(err, sql.ErrNoRows) {
			continue // sqlite_schema itself (root page 1), or a temporary b-tree
		}
		if err != nil {
			return nil, d.wrap(err)
		}
		out = append(out, relation(schema, name))
	}
	return out, nil
}

// Describe reads an output table's kind and columns; SQLite has no
// privileges but the file's: a file this process cannot write refuses
// everything.
func (d *DB) Describe(ctx context.Context, n table.Name) (table.TableInfo, error) {
	var info table.TableInfo
	writable := !d.readOnly
	if f, err := os.OpenFile(d.path, os.O_WRONLY, 0); err == nil {
		f.Close()
	} else if d.path != "" { // "": SQLite's anonymous database, in memory
		writable = false
	}
	info.Priv = table.Privileges{Create: writable, Alter: writable, Insert: writable, Update: writable, Delete: writable}
	r, l, ok, err := d.resolve(ctx, n)
	if err != nil {
		return info, err
	}
	if !ok {
		info.Relation = relation(schemaOf(n), n.Table) // what it will be
		switch s := schemaOf(n); {
		case strings.EqualFold(s, "temp"):
			// A temp table lives as long as the connection that made it:
			// the run's rows would be gone when it ends.
			info.NoPlace = "a table in temp is dropped when the run ends: results tables go in main"
		case !strings.EqualFold(s, "main"):
			info.NoPlace = fmt.Sprintf("%s has no database %s: results tables go in main", d.display, table.Name{Table: n.Schema})
		}
		return info, nil
	}
	info.Exists, info.Relation, info.Writable = true, r, l.kind == "table"
	rows, err := d.ro.QueryContext(ctx, `SELECT name, type, "notnull", dflt_value IS NOT NULL, pk FROM pragma_table_info(?1, ?2) ORDER BY cid`,
		l.name, l.schema)
	if err != nil {
		return info, d.wrap(err)
	}
	defer rows.Close()
	for rows.Next() {
		var c table.ColumnInfo
		var pk int
		if err := rows.Scan(&c.Name, &c.Decl, &c.NotNull, &c.Default, &pk); err != nil {
			return info, d.wrap(err)
		}
		c.Class, c.Exact = classOf(c.Decl)
		c.Decl = cmp.Or(c.Decl, "a column without a type")
		info.Columns = append(info.Columns, c)
	}
	return info, d.wrap(rows.Err())
}

// classOf reads a declared type by SQLite's affinity rules: what a value
// written to it becomes. A TEXT or untyped column keeps text as written; a
// NUMERIC one would turn a postcode such as 01234 into the number 1234.
func classOf(decl string) (table.Type, bool) {
	u := strings.ToUpper(decl)
	switch {
	case strings.Contains(u, "INT"):
		return table.Integer, true
	case strings.Contains(u, "CHAR"), strings.Contains(u, "CLOB"), strings.Contains(u, "TEXT"),
		strings.Contains(u, "BLOB"), u == "":
		return table.Text, true
	case strings.Contains(u, "REAL"), strings.Contains(u, "FLOA"), strings.Contains(u, "DOUB"):
		return table.Float, true
	case u == "BOOLEAN" || u == "BOOL":
		return table.Bool, true
	case u == "DATETIME" || u == "TIMESTAMP":
		return table.Timestamp, true // the text of TimeFormat does not read as a number
	}
	return table.Float, false // NUMERIC affinity
}

// Setup runs stmts in one IMMEDIATE transaction (the write lock taken
// first, waiting the busy timeout for it).
func (d *DB) Setup(ctx context.Context, stmts []table.Statement) error {
	w, err := d.writer(ctx)
	if err != nil {
		return err
	}
	conn, err := w.Conn(ctx)
	if err != nil {
		return d.wrap(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return d.lockError(err, "the set-up of the results tables", "BEGIN IMMEDIATE")
	}
	for _, s := range stmts {
		if _, err := conn.ExecContext(ctx, s.SQL); err != nil {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
			return d.lockError(err, "table "+s.Table.String(), s.SQL)
		}
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return d.lockError(err, "the set-up of the results tables", "COMMIT")
	}
	return nil
}

// lockError is err, said plainly when the database stayed locked (busy)
// longer than the lock timeout: what waited, on what.
func (d *DB) lockError(err error, what, stmt string) error {
	var se *sqlite.Error
	if errors.As(err, &se) && (se.Code()&0xff == 5 || se.Code()&0xff == 6) { // SQLITE_BUSY, SQLITE_LOCKED
		return fmt.Errorf("%w: %s: %q waited more than %s for the database's write lock (another process is writing %s): %w",
			table.ErrLock, what, stmt, d.lockWait, d.display, err)
	}
	return fmt.Errorf("%s: %w", what, d.wrap(err))
}

// oneStatement returns the statement of q (see splitStatement), or an
// error wrapping table.ErrBadQuery when another follows it: the driver runs
// every statement of a text it is given, and a second one (VACUUM INTO,
// ATTACH) must never run.
func oneStatement(q string) (string, error) {
	head, more, ok := splitStatement(q)
	if !ok {
		return q, nil // an unterminated quote or comment: SQLite refuses it
	}
	if more {
		return "", fmt.Errorf("%w: the query holds more than one statement: give one SELECT", table.ErrBadQuery)
	}
	return head, nil
}
