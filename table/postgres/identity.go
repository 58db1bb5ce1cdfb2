package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/addrclean/addrclean/table"
)

// setupLockKey is the advisory lock that serialises the set-ups of
// results tables in one database: two first runs creating the same table
// at once would otherwise race on the catalog (pg_type's unique index).
const setupLockKey = 0x61646472636c6e // "addrcln"

// Identity is the cluster's system identifier (or, where the role may not
// read it, the server's start time) and the database's name.
func (d *DB) Identity(ctx context.Context) (string, error) {
	var id string
	err := d.meta.QueryRow(ctx, "SELECT system_identifier::text FROM pg_control_system()").Scan(&id)
	if err != nil {
		// pg_control_system is for privileged roles on some servers; the
		// start time of the server tells servers apart as well.
		if err := d.meta.QueryRow(ctx, "SELECT 'started ' || pg_postmaster_start_time()::text").Scan(&id); err != nil {
			return "", d.wrap(err)
		}
	}
	var db string
	if err := d.meta.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil {
		return "", d.wrap(err)
	}
	return "postgres " + id + " " + db, nil
}

// Resolve asks the server what n means, as a query naming it would:
// search_path, quoting and case as PostgreSQL reads them.
func (d *DB) Resolve(ctx context.Context, n table.Name) (table.Relation, bool, error) {
	var oid *uint32
	var name string
	err := d.meta.QueryRow(ctx, `SELECT c.oid, quote_ident(s.nspname) || '.' || quote_ident(c.relname)
		FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace WHERE c.oid = to_regclass($1)`, n.SQL()).Scan(&oid, &name)
	if errors.Is(err, pgx.ErrNoRows) || denied(err) {
		// A table in a schema this role may not use is none the input
		// reads either: the input's query would be refused.
		return table.Relation{}, false, nil
	}
	if err != nil {
		return table.Relation{}, false, d.wrap(err)
	}
	return table.Relation{ID: strconv.FormatUint(uint64(*oid), 10), Name: name}, true, nil
}

// Reads plans query with EXPLAIN (one statement, extended protocol, in a
// read-only transaction that is rolled back) and collects every relation
// of the plan, with the parents of partitions and inheritance children.
func (d *DB) Reads(ctx context.Context, query string) ([]table.Relation, error) {
	tx, err := d.meta.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, d.wrap(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var plan []byte
	q := "EXPLAIN (VERBOSE, FORMAT JSON) " + strings.TrimRight(strings.TrimSpace(query), "; \t\n")
	if err := tx.QueryRow(ctx, q, pgx.QueryExecModeExec).Scan(&plan); err != nil {
		return nil, d.lockOr(err, "planning the input", "EXPLAIN")
	}
	var tree any
	if err := json.Unmarshal(plan, &tree); err != nil {
		return nil, fmt.Errorf("reading the plan of the query: %w", err)
	}
	var names []string
	walkPlan(tree, func(schema, rel string) {
		id := pgx.Identifier{schema, rel}
		if schema == "" {
			id = id[1:]
		}
		names = append(names, id.Sanitize())
	})
	rows, err := tx.Query(ctx, `WITH RECURSIVE r(oid) AS (
			SELECT to_regclass(n)::oid FROM unnest($1::text[]) AS n
			UNION SELECT i.inhparent FROM pg_inherits i JOIN r ON i.inhrelid = r.oid)
		SELECT DISTINCT c.oid, quote_ident(s.nspname) || '.' || quote_ident(c.relname)
		FROM r JOIN pg_class c ON c.oid = r.oid JOIN pg_namespace s ON s.oid = c.relnamespace`, names)
	if err != nil {
		return nil, d.wrap(err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (table.Relation, error) {
		var oid uint32
		var name string
		err := row.Scan(&oid, &name)
		return table.Relation{ID: strconv.FormatUint(uint64(oid), 10), Name: name}, err
	})
	return out, d.wrap(err)
}

// denied reports SQLSTATE 42501, insufficient privilege.
func denied(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42501"
}

// walkPlan calls f for every node of an EXPLAIN (FORMAT JSON) plan that
// names a relation.
func walkPlan(v any, f func(schema, rel string)) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			walkPlan(e, f)
		}
	case map[string]any:
		if rel, ok := x["Relation Name"].(string); ok {
			schema, _ := x["Schema"].(string)
			f(schema, rel)
		}
		for _, e := range x {
			walkPlan(e, f)
		}
	}
}

// Describe reads an output table's kind, columns and this role's
// privileges on it; for a missing table, whether it can be created.
func (d *DB) Describe(ctx context.Context, n table.Name) (table.TableInfo, error) {
	var info table.TableInfo
	// The server cuts longer names without an error, so that two spellings
	// (an out-table and its review table, or its runs table) could be one
	// table, each run writing over the other's rows.
	if len(n.Schema) > maxName || len(n.Table) > maxName {
		info.NoPlace = fmt.Sprintf("PostgreSQL cuts names to %d bytes, and another name may be cut to the same: use a shorter one", maxName)
		return info, nil
	}
	var kind string
	err := d.meta.QueryRow(ctx, `SELECT quote_ident(s.nspname) || '.' || quote_ident(c.relname), c.oid::text, c.relkind::text,
		has_table_privilege(c.oid, 'INSERT'), has_table_privilege(c.oid, 'UPDATE'), has_table_privilege(c.oid, 'DELETE'),
		pg_has_role(c.relowner, 'USAGE')
		FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace WHERE c.oid = to_regclass($1)`, n.SQL()).Scan(
		&info.Relation.Name, &info.Relation.ID, &kind, &info.Priv.Insert, &info.Priv.Update, &info.Priv.Delete, &info.Priv.Alter)
	if errors.Is(err, pgx.ErrNoRows) {
		return d.describeMissing(ctx, n)
	}
	if denied(err) {
		info.NoPlace = fmt.Sprintf("this user may not use schema %s (no USAGE privilege)", table.Name{Table: n.Schema})
		return info, nil
	}
	if err != nil {
		return info, d.wrap(err)
	}
	info.Exists = true
	info.Writable = kind == "r" || kind == "p"
	rows, err := d.meta.Query(ctx, `SELECT attname, atttypid, atttypmod, format_type(atttypid, atttypmod), attnotnull, atthasdef
		FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped ORDER BY attnum`, n.SQL())
	if err != nil {
		return info, d.wrap(err)
	}
	info.Columns, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (table.ColumnInfo, error) {
		var c table.ColumnInfo
		var oid uint32
		var mod int32
		err := row.Scan(&c.Name, &oid, &mod, &c.Decl, &c.NotNull, &c.Default)
		c.Class, c.Exact = classOf(oid, mod)
		return c, err
	})
	return info, d.wrap(err)
}

// classOf is the kind of value a column of type oid (with modifier mod)
// holds, and whether it holds every such value as written.
func classOf(oid uint32, mod int32) (table.Type, bool) {
	switch oid {
	case 25, 16, 701, 1114, 1184, 20, 21, 23: // text, boolean, double precision, timestamps, integers
		return typeOf(oid), true
	case 1043: // varchar: a length limit cuts nothing silently, but fails a write
		return table.Text, mod < 0
	case 1700: // numeric, exact unless given a scale
		return table.Float, mod < 0
	}
	return typeOf(oid), false // real (700) rounds
}

// describeMissing says whether table n can be created: in its schema, or
// the first of search_path, with the CREATE privilege, and no table whose
// name differs only in case. (The table itself may have been created by
// another run since it was looked for: the CREATE ... IF NOT EXISTS of
// the plan then leaves that run's table.)
func (d *DB) describeMissing(ctx context.Context, n table.Name) (table.TableInfo, error) {
	var info table.TableInfo
	var schema *string
	var create *bool
	err := d.meta.QueryRow(ctx, `SELECT s.nspname, has_schema_privilege(s.oid, 'CREATE')
		FROM (SELECT coalesce(NULLIF($1, ''), current_schema()) AS name) w LEFT JOIN pg_namespace s ON s.nspname = w.name`,
		n.Schema).Scan(&schema, &create)
	if err != nil {
		return info, d.wrap(err)
	}
	switch {
	case schema == nil && n.Schema != "":
		info.NoPlace = fmt.Sprintf("there is no schema %s to create it in", table.Name{Table: n.Schema})
		return info, nil
	case schema == nil:
		info.NoPlace = "no schema of search_path exists to create it in: qualify it as SCHEMA.NAME"
		return info, nil
	}
	info.Priv.Create = *create
	// Not an OID: another spelling of the same table to create has it too.
	info.Relation = table.Relation{ID: "new " + pgx.Identifier{*schema, n.Table}.Sanitize(),
		Name: table.Name{Schema: *schema, Table: n.Table}.String()}
	err = d.meta.QueryRow(ctx, `SELECT quote_ident(s.nspname) || '.' || quote_ident(c.relname)
		FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
		WHERE s.nspname = $1 AND lower(c.relname) = lower($2) AND c.relname <> $2 LIMIT 1`, *schema, n.Table).Scan(&info.Similar)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return info, d.wrap(err)
	}
	return info, nil
}

// Setup runs stmts in one transaction under the advisory lock of set-ups,
// each statement waiting at most the lock timeout for its locks.
func (d *DB) Setup(ctx context.Context, stmts []table.Statement) error {
	tx, err := d.meta.Begin(ctx)
	if err != nil {
		return d.wrap(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := d.lockTimeout(ctx, tx); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(setupLockKey)); err != nil {
		return d.lockError(err, "the set-up of the results tables", "waiting for another run's set-up")
	}
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s.SQL); err != nil {
			return d.lockError(err, "table "+s.Table.String(), s.SQL)
		}
	}
	return d.wrap(tx.Commit(ctx))
}

// lockTimeout sets the lock timeout of the transaction tx.
func (d *DB) lockTimeout(ctx context.Context, tx pgx.Tx) error {
	ms := d.lockWait.Milliseconds()
	if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = "+strconv.FormatInt(max(ms, 1), 10)); err != nil {
		return d.wrap(err)
	}
	return nil
}

// lockError is err, said plainly when it is a lock not granted in time
// (SQLSTATE 55P03): what waited, on what.
func (d *DB) lockError(err error, what, stmt string) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "55P03" {
		return fmt.Errorf("%w: %s: %q waited more than %s for a lock (another session holds it: "+
			"see pg_stat_activity and pg_locks): %w", table.ErrLock, what, stmt, d.lockWait, d.wrap(err))
	}
	return fmt.Errorf("%s: %w", what, d.wrap(err))
}

// maxName is the longest name PostgreSQL keeps whole, in bytes
// (NAMEDATALEN - 1).
const maxName = 63

// lockOr is lockError for a lock not granted in time, else wrap.
func (d *DB) lockOr(err error, what, stmt string) error {
	if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == "55P03" {
		return d.lockError(err, what, stmt)
	}
	return d.wrap(err)
}
