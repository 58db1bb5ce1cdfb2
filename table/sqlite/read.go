package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strings"

	sqlite "modernc.org/sqlite"

	"github.com/addrclean/addrclean/table"
)

// The user's SQL (--query, --where) is read through three locks, each of
// which alone keeps the file unchanged: the handle is opened mode=ro with
// query_only on; the text must be one statement that begins as a read
// (oneRead); and while it is prepared an authorizer lets only reads compile,
// refusing ATTACH (which would create a file), PRAGMA, transactions and any
// write. VACUUM INTO, which SQLite allows on a read-only handle and which
// presents nothing to an authorizer, is refused by oneRead.

// readOnly is the authorizer of the reading connection.
func readOnly(action sqlite.AuthorizerActionCode, _, _, _, _ string) sqlite.AuthorizerReturnCode {
	switch action {
	case sqlite.AuthSelect, sqlite.AuthRead, sqlite.AuthFunction, sqlite.AuthRecursive:
		return sqlite.AuthorizerOK
	}
	return sqlite.AuthorizerDeny
}

// readConn returns a connection of the read-only handle with the readOnly
// authorizer on; release gives it back.
func (d *DB) readConn(ctx context.Context) (*sql.Conn, error) {
	conn, err := d.ro.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if err := conn.Raw(func(dc any) error { return authorize(dc, readOnly) }); err != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn }) // never back to the pool
		conn.Close()
		return nil, fmt.Errorf("%s: %w", d.display, err)
	}
	return conn, nil
}

// release takes the authorizer off conn and returns it to the pool; a
// connection whose authorizer cannot be taken off is closed instead.
func release(conn *sql.Conn) error {
	err := conn.Raw(func(dc any) error {
		if authorize(dc, nil) != nil {
			return driver.ErrBadConn
		}
		return nil
	})
	if cerr := conn.Close(); !errors.Is(err, driver.ErrBadConn) && err == nil {
		err = cerr
	}
	if errors.Is(err, driver.ErrBadConn) {
		return nil
	}
	return err
}

func authorize(dc any, fn sqlite.AuthorizerFn) error {
	ar, ok := dc.(sqlite.AuthorizerRegisterer)
	if !ok {
		return errors.New("the SQLite driver cannot restrict what a query may do")
	}
	return ar.RegisterAuthorizer(fn)
}

// oneRead checks that query is one statement beginning with SELECT, WITH
// or VALUES: the driver would otherwise run every statement of a script,
// and hand out the rows of the last.
func oneRead(query string) error {
	head, more, ok := splitStatement(query)
	if !ok {
		return nil // an unterminated quote or comment: SQLite says what is wrong
	}
	if more {
		return fmt.Errorf("%w: more than one statement: a query is one SELECT, and a condition part of one", table.ErrBadQuery)
	}
	first := strings.TrimLeft(head, " \t\r\n\f(")
	word := first
	if i := strings.IndexFunc(first, func(r rune) bool { return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') }); i >= 0 {
		word = first[:i]
	}
	switch strings.ToUpper(word) {
	case "SELECT", "WITH", "VALUES":
		return nil
	}
	return fmt.Errorf("%w: %q is not a read: a query begins with SELECT, WITH or VALUES", table.ErrBadQuery, word)
}

// splitStatement reads s as SQLite's tokenizer does for statement ends:
// quoted text (in single, double or back quotes, or brackets) and comments
// (--, /* */) hide semicolons. head is s up to the first semicolon that
// ends a statement, its comments replaced by spaces; more reports text
// after that semicolon other than semicolons, white space and comments; ok
// is false when a quote or comment is left open before it.
func splitStatement(s string) (head string, more, ok bool) {
	var b strings.Builder
	end := -1 // in b
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ';' && end < 0:
			end = b.Len()
			b.WriteByte(c)
		case c == '\'' || c == '"' || c == '`' || c == '[':
			closer := c
			if c == '[' {
				closer = ']'
			}
			j := strings.IndexByte(s[i+1:], closer)
			if j < 0 {
				if end < 0 {
					return s, false, false
				}
				b.WriteString(s[i:])
				i = len(s)
				break
			}
			b.WriteString(s[i : i+j+2]) // a doubled quote is two quoted strings back to back
			i += j + 1
		case c == '-' && strings.HasPrefix(s[i:], "--"):
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				i = len(s)
				break
			}
			b.WriteByte(' ')
			i += j - 1
		case c == '/' && strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				if end < 0 {
					return s, false, false
				}
				i = len(s)
				break
			}
			b.WriteByte(' ')
			i += j + 3
		default:
			b.WriteByte(c)
		}
	}
	out := b.String()
	if end < 0 {
		return out, false, true
	}
	return out[:end], strings.Trim(out[end:], "; \t\r\n\f") != "", true
}

// Pages reads a table in keyset pages, each one statement that ends before
// Page returns (SQLite reads in autocommit: no transaction outlives it).
func (d *DB) Pages(ctx context.Context, q table.PageQuery) (table.PageReader, error) {
	return &pages{d: d, q: q}, nil
}

type pages struct {
	d *DB
	q table.PageQuery
}

func (p *pages) Page(ctx context.Context, after any) (table.Page, error) {
	query := p.q.SQL(param(after))
	if err := oneRead(query); err != nil {
		return table.Page{}, err
	}
	conn, err := p.d.readConn(ctx)
	if err != nil {
		return table.Page{}, err
	}
	defer release(conn)
	var args []any
	if after != nil {
		args = append(args, after)
	}
	rs, err := conn.QueryContext(ctx, query, args...)
	if err != nil {
		return table.Page{}, p.d.readErr(ctx, err)
	}
	defer rs.Close()
	cols, err := columnsOf(rs)
	if err != nil {
		return table.Page{}, p.d.readErr(ctx, err)
	}
	page := table.Page{Columns: cols[1:]} // the first is the row's order
	key := slices.IndexFunc(page.Columns, func(c table.Column) bool { return c.Name == p.q.Key })
	vals, ptrs := scanTargets(len(cols))
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return table.Page{}, p.d.readErr(ctx, err)
		}
		order, _ := vals[0].(int64)
		page.Order = append(page.Order, int(order))
		page.Rows = append(page.Rows, cells(vals[1:], page.Columns))
		if key >= 0 {
			page.Last = vals[key+1] // Scan into an any copies bytes
		}
	}
	if err := rs.Err(); err != nil {
		return table.Page{}, p.d.readErr(ctx, err)
	}
	return page, nil
}

func (p *pages) Close() error { return nil }

// readErr is the error of a read: the context's when it ended (an
// interrupted run is not a database failure), else what wrap makes of it.
func (d *DB) readErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return d.wrap(err)
}

// param is the placeholder of the key a page follows; "" for the first
// page. It is bound as the value read (an integer stays an integer), so that
// it compares as the column's values do.
func param(after any) string {
	if after == nil {
		return ""
	}
	return "?1"
}
