package table

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/addrclean/addrclean/internal/redact"
)

// Errors a caller branches on. Missing tables and columns and bad queries
// are the user's to fix (a usage error); others are fatal.
var (
	// ErrNoTable marks a table that does not exist.
	ErrNoTable = errors.New("no such table")
	// ErrNoColumn marks a column that does not exist.
	ErrNoColumn = errors.New("no such column")
	// ErrBadQuery marks a query the database refused as written (syntax,
	// unknown names).
	ErrBadQuery = errors.New("the database refused the query")
	// ErrBadURL marks a database URL that cannot be used.
	ErrBadURL = errors.New("bad database URL")
)

// Type is the SQL type of a column, as far as a run cares.
type Type int

// The column types.
const (
	Text Type = iota
	Integer
	Bool
	Float
	Timestamp
)

func (t Type) String() string {
	return [...]string{"text", "integer", "boolean", "float", "timestamp"}[t]
}

// Column is a column of a table or a result.
type Column struct {
	Name string
	Type Type
	// Kept marks a column that a Target creates but never writes: a
	// person's (the review's decision and edit_ columns). An upsert keeps
	// its value while the row still shows the person what they decided on
	// (keepCondition), and clears it otherwise.
	Kept bool
	// Stamp marks a written column that says when or how the row's values
	// were obtained (verified_at, av_cached, applied_at): an upsert whose
	// other values are those of the row leaves the row alone, stamp and
	// all, so that a re-run with the same verdicts writes nothing.
	Stamp bool
}

// The review columns keepCondition compares.
const (
	matchedLabel = "matched_label"
	decision     = "decision"
)

// keepCondition is the SQL condition under which an upsert keeps the Kept
// columns of the existing row (named through alias) rather than clearing
// them, the new row being excluded: the input address is the one the
// person decided on, and, for an accept, so is the service's address. A
// stale decision must never reach addrclean apply: it would give a new
// address the answer meant for the old one.
func keepCondition(alias, excluded string) string {
	old := func(c string) string { return "COALESCE(" + alias + "." + QuoteIdent(c) + ", '')" }
	nu := func(c string) string { return "COALESCE(" + excluded + "." + QuoteIdent(c) + ", '')" }
	return fmt.Sprintf("%s = %s AND (LOWER(TRIM(%s)) <> 'accept' OR %s = %s)",
		old(InputLabel), nu(InputLabel), old(decision), old(matchedLabel), nu(matchedLabel))
}

// UpsertSets are the SET items of an upsert of cols: written columns take
// the new row's value; Kept ones keep theirs under keepCondition and are
// cleared otherwise.
func UpsertSets(cols []Column, alias, excluded string) []string {
	var sets []string
	var keep string
	for _, c := range cols {
		q := QuoteIdent(c.Name)
		if !c.Kept {
			sets = append(sets, q+" = "+excluded+"."+q)
			continue
		}
		if keep == "" {
			keep = keepCondition(alias, excluded)
		}
		sets = append(sets, fmt.Sprintf("%s = CASE WHEN %s THEN %s.%s END", q, keep, alias, q))
	}
	return sets
}

// Changed is the SQL condition, for an upsert's DO UPDATE ... WHERE, that
// the new row (excluded) differs from the existing one (alias) in a
// written column other than a Stamp: NULLs compare equal to each other.
func Changed(cols []Column, alias, excluded string) string {
	var parts []string
	for _, c := range cols {
		if c.Kept || c.Stamp {
			continue
		}
		q := QuoteIdent(c.Name)
		parts = append(parts, alias+"."+q+" IS DISTINCT FROM "+excluded+"."+q)
	}
	if len(parts) == 0 {
		return "false"
	}
	return strings.Join(parts, " OR ")
}

// Written returns the columns of cols a Target writes: all but the Kept.
func Written(cols []Column) []Column {
	var w []Column
	for _, c := range cols {
		if !c.Kept {
			w = append(w, c)
		}
	}
	return w
}

// Name is a table name, optionally qualified by a schema (PostgreSQL) or an
// attached database (SQLite).
type Name struct {
	Schema, Table string
}

// String returns the name as the user would write it.
func (n Name) String() string {
	q := func(s string) string {
		if s == "" || strings.ContainsAny(s, `."`) || strings.TrimSpace(s) != s {
			return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
		}
		return s
	}
	if n.Schema != "" {
		return q(n.Schema) + "." + q(n.Table)
	}
	return q(n.Table)
}

// SQL returns the name quoted as an identifier of SQL.
func (n Name) SQL() string {
	if n.Schema != "" {
		return QuoteIdent(n.Schema) + "." + QuoteIdent(n.Table)
	}
	return QuoteIdent(n.Table)
}

// QuoteIdent quotes a column or table name as an identifier, as PostgreSQL
// and SQLite both read it: always quoted, so that case and any character
// are kept.
func QuoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// ParseName reads a table name: NAME or SCHEMA.NAME, where each part may be
// double-quoted ("a.b", with "" for a quote) to hold dots. Case is kept as
// written: names are always quoted in the SQL the package builds.
func ParseName(s string) (Name, error) {
	var parts []string
	var b strings.Builder
	quoted, inQuotes := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQuotes && c == '"' && i+1 < len(s) && s[i+1] == '"':
			b.WriteByte('"')
			i++
		case inQuotes && c == '"':
			inQuotes = false
		case inQuotes:
			b.WriteByte(c)
		case c == '"' && b.Len() == 0 && !quoted:
			inQuotes, quoted = true, true
		case c == '.':
			parts = append(parts, b.String())
			b.Reset()
			quoted = false
		case quoted:
			return Name{}, fmt.Errorf("table name %q: text after a closing quote", s)
		default:
			b.WriteByte(c)
		}
	}
	if inQuotes {
		return Name{}, fmt.Errorf("table name %q: a quote is not closed", s)
	}
	parts = append(parts, b.String())
	for _, p := range parts {
		if p == "" || strings.ContainsRune(p, 0) {
			return Name{}, fmt.Errorf("table name %q: want NAME or SCHEMA.NAME", s)
		}
	}
	switch len(parts) {
	case 1:
		return Name{Table: parts[0]}, nil
	case 2:
		return Name{Schema: parts[0], Table: parts[1]}, nil
	}
	return Name{}, fmt.Errorf("table name %q: want NAME or SCHEMA.NAME", s)
}

// Rows streams the rows of a query.
type Rows interface {
	// Columns are the result's columns.
	Columns() []Column
	// Next returns the next row's cells as text (NULL as ""), or io.EOF.
	Next(ctx context.Context) ([]string, error)
	// Close ends the query.
	Close() error
}

// Record is one row for a sink table: its key and its values in the order
// of the sink's columns. A value is nil (NULL), string, bool, float64 or
// time.Time.
type Record struct {
	Key    string
	Values []any
}

// Counts are what writes did to a table.
type Counts struct {
	// Inserted, Updated and Deleted rows; Unchanged are records equal to
	// their row, which was left alone.
	Inserted, Updated, Unchanged, Deleted int64
	// Repeated are records whose key an earlier Write of the same Target
	// had written.
	Repeated int64
}

// Add adds c to n.
func (n *Counts) Add(c Counts) {
	n.Inserted += c.Inserted
	n.Updated += c.Updated
	n.Unchanged += c.Unchanged
	n.Deleted += c.Deleted
	n.Repeated += c.Repeated
}

// Target is a table prepared to receive records.
type Target interface {
	// Write upserts recs by key, leaving alone the rows whose values are
	// those of their record (see Changed), and deletes the rows whose key
	// is in del, in one transaction under the lock timeout. No key
	// appears twice in recs and del together.
	Write(ctx context.Context, recs []Record, del []string) (Counts, error)
	// Close releases the target's connection.
	Close() error
}

// Database is one database: what a source and a sink need of it.
type Database interface {
	// Columns returns the columns of table n; an error wrapping ErrNoTable
	// when there is no such table.
	Columns(ctx context.Context, n Name) ([]Column, error)
	// Select runs query in a read-only transaction and streams its rows; an
	// error the user must fix (syntax, unknown names) wraps ErrBadQuery.
	Select(ctx context.Context, query string) (Rows, error)
	// Exec runs one statement that returns no rows through the writing
	// side: creating and altering results tables, and tests' and tools'
	// setup. Runs never pass it SQL of the user's.
	Exec(ctx context.Context, sql string) error
	// SQLType is the database's SQL type for t.
	SQLType(t Type) string
	// UniqueKey reports whether column key alone is the primary key of
	// table n or has a unique index on it, as ON CONFLICT needs.
	UniqueKey(ctx context.Context, n Name, key string) (bool, error)
	// Target returns table n, which has the key column key and the columns
	// cols (OpenTarget saw to it), ready for writes. Records hold the
	// values of the columns that are not Kept; Kept columns follow
	// UpsertSets.
	Target(ctx context.Context, n Name, key string, cols []Column) (Target, error)
	// Close releases the database.
	Close() error
	// Catalog answers the checks made before anything is written.
	Catalog
}

// Options tell Open how to open a database.
type Options struct {
	// ReadOnly opens it for reading only (a source): nothing is created,
	// and a missing SQLite file is an error.
	ReadOnly bool
	// LockTimeout bounds every wait for a lock of a DDL or write
	// statement (DefaultLockTimeout when zero).
	LockTimeout time.Duration
}

// Opener opens the database at u.
type Opener func(ctx context.Context, u *URL, opts Options) (Database, error)

// drivers needs no lock: Register is called from init functions only, all
// of which have run before Open is.
var drivers = map[string]Opener{}

// Register makes the database kind of the URL schemes available to Open. It
// is called by the driver packages' init.
func Register(open Opener, schemes ...string) {
	for _, s := range schemes {
		drivers[s] = open
	}
}

// URL is a parsed database URL.
type URL struct {
	// Raw is the URL as given, password included: never print it.
	Raw string
	// Scheme is "postgres" (for postgres:// and postgresql://) or "sqlite".
	Scheme string
	// Path is an SQLite database's file.
	Path string
	// Display is the URL without any password, for logs, errors and the
	// journal.
	Display string
	// HasPassword is set when the URL holds a password, which any user of
	// the machine can read in the process list.
	HasPassword bool
}

// String returns Display, so that a URL printed by mistake shows no
// password.
func (u *URL) String() string { return u.Display }

// IsURL reports whether s looks like a database URL rather than a file
// path.
func IsURL(s string) bool {
	l := asciiLower(s)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://") || strings.HasPrefix(l, "sqlite:")
}

// ParseURL reads a database URL: postgres://user@host:port/db?sslmode=...
// (or postgresql://) or sqlite:PATH (sqlite:///abs/path also works). Its
// errors never show a password.
func ParseURL(raw string) (*URL, error) {
	lower := asciiLower(raw) // same byte offsets as raw
	switch {
	case strings.HasPrefix(lower, "sqlite:"):
		p := strings.TrimPrefix(raw[len("sqlite:"):], "//")
		if i := strings.IndexByte(p, '?'); i >= 0 {
			return nil, fmt.Errorf("%w: sqlite:%s: parameters are not supported; give sqlite:PATH", ErrBadURL, p[:i])
		}
		if p == "" {
			return nil, fmt.Errorf("%w: sqlite: needs a file, as in sqlite:customers.db", ErrBadURL)
		}
		return &URL{Raw: raw, Scheme: "sqlite", Path: p, Display: "sqlite:" + p}, nil
	case strings.HasPrefix(lower, "postgres://"), strings.HasPrefix(lower, "postgresql://"):
		if userinfoHasAt(raw) {
			// Drivers split such a URL at the first @ and show the rest
			// of the password as a host name: show none of it.
			return nil, fmt.Errorf("%w: the user name or password of the postgres:// URL holds an '@' (or a '/', '?' or '#'): "+
				"write it as %%40 (%%2F, %%3F, %%23); better, put the password in PGPASSWORD or ~/.pgpass", ErrBadURL)
		}
		u, err := url.Parse(raw)
		if err != nil {
			// url's errors quote the whole URL, password and all.
			return nil, fmt.Errorf("%w: %s is not a valid URL", ErrBadURL, redact.Text(raw))
		}
		_, pw := u.User.Password()
		for k := range u.Query() {
			pw = pw || redact.SecretKey(k)
		}
		return &URL{Raw: raw, Scheme: "postgres", Display: redactURL(u), HasPassword: pw}, nil
	}
	return nil, fmt.Errorf("%w: %q: want postgres://user@host:port/db or sqlite:PATH", ErrBadURL, redact.Text(raw))
}

// userinfoHasAt reports a URL whose user name or password holds a
// character that ends it early: a second '@', or an '@' after a '/', '?'
// or '#' (the userinfo was cut there, and the rest of the password would
// be read as a host, path or parameter and shown as such).
func userinfoHasAt(raw string) bool {
	i := strings.Index(raw, "://")
	if i < 0 {
		return false
	}
	rest := raw[i+3:]
	at := strings.IndexByte(rest, '@')
	return strings.Count(rest, "@") > 1 || (at >= 0 && strings.ContainsAny(rest[:at], "/?#"))
}

// redactURL spells u without its password, secret parameters dropped and
// the others sorted, so that one database has one spelling.
func redactURL(u *url.URL) string {
	c := *u
	c.Scheme = "postgres"
	c.Host = strings.ToLower(c.Host)
	if c.User != nil {
		c.User = url.User(c.User.Username())
	}
	q := c.Query()
	for k := range q {
		if redact.SecretKey(k) {
			q.Del(k)
		}
	}
	c.RawQuery = q.Encode() // sorted by key
	c.ForceQuery = false
	c.Fragment, c.RawFragment = "", ""
	return c.String()
}

// asciiLower lower-cases ASCII letters only, so that byte offsets stay those
// of s whatever bytes it holds.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Open opens the database of a URL with the driver registered for its
// scheme.
func Open(ctx context.Context, u *URL, opts Options) (Database, error) {
	open := drivers[u.Scheme]
	if open == nil {
		return nil, fmt.Errorf("%w: %s: no driver for %s", ErrBadURL, u.Display, u.Scheme)
	}
	return open(ctx, u, opts)
}

// OpenTarget returns table n of db ready for writes: checked and readied
// by Prepare (created if it is missing, key its primary key of type
// keyType, else given the columns of cols it lacks), then opened.
func OpenTarget(ctx context.Context, db Database, n Name, key string, keyType Type, cols []Column) (Target, error) {
	if err := Prepare(ctx, db, []Output{{Name: n, Key: key, KeyType: keyType, Cols: cols}}); err != nil {
		return nil, err
	}
	return db.Target(ctx, n, key, cols)
}
