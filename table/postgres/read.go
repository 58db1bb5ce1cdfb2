package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/addrclean/addrclean/internal/redact"
	"github.com/addrclean/addrclean/table"
)

// ReaderName is the application_name of the connections that read the
// input, as pg_stat_activity shows them.
const ReaderName = "addrclean-reader"

// connectReader opens a connection for reading SQL that holds text of the
// user's (--where, --query): every transaction on it is read-only unless a
// statement says otherwise, and the package's own statements on it begin
// each transaction READ ONLY anyway; the user's text goes through the
// extended protocol only, which takes exactly one statement.
func (d *DB) connectReader(ctx context.Context) (*pgx.Conn, error) {
	cfg := d.cfg.Copy()
	cfg.RuntimeParams["default_transaction_read_only"] = "on"
	if cfg.RuntimeParams["application_name"] == "addrclean" {
		// So that a DBA can tell the reading session from the writing ones.
		cfg.RuntimeParams["application_name"] = ReaderName
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: connecting to %s: %w", table.ErrConnLost, d.display, redact.Scrub(err, d.secrets...))
	}
	return c, nil
}

// readErr is the error of a read on conn: the context's when it ended (an
// interrupted run is not a database failure), ErrConnLost when the
// connection is gone, else what wrap makes of it.
func (d *DB) readErr(ctx context.Context, conn *pgx.Conn, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case conn.IsClosed():
		return fmt.Errorf("%w: %w", table.ErrConnLost, redact.Scrub(err, d.secrets...))
	}
	if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && (pe.Code == "25006" || pe.Code == "0A000") {
		// A read-only transaction or a cursor refused it (FOR UPDATE, a
		// DELETE in WITH): the query is the user's to fix.
		return fmt.Errorf("%w: %w", table.ErrBadQuery, d.wrap(err))
	}
	return d.lockOr(err, "reading the input", "SELECT")
}

// Pages reads a table in keyset pages on a connection of its own.
func (d *DB) Pages(ctx context.Context, q table.PageQuery) (table.PageReader, error) {
	conn, err := d.connectReader(ctx)
	if err != nil {
		return nil, err
	}
	return &pages{d: d, conn: conn, q: q}, nil
}

type pages struct {
	d    *DB
	conn *pgx.Conn // nil after a lost connection, until the next Page
	q    table.PageQuery
}

// Page runs one page in a READ ONLY transaction of its own, sent with its
// BEGIN and COMMIT in one batch: the server never waits for the client
// inside the transaction, so idle_in_transaction_session_timeout cannot end
// it and a lock is held for the statement's time only.
func (p *pages) Page(ctx context.Context, after any) (table.Page, error) {
	if p.conn == nil {
		c, err := p.d.connectReader(ctx)
		if err != nil {
			return table.Page{}, err
		}
		p.conn = c
	}
	page, err := p.page(ctx, after)
	if err != nil {
		err = p.d.readErr(ctx, p.conn, err)
		if p.conn.IsClosed() {
			_ = closeConn(p.conn)
			p.conn = nil
		} else {
			// A failed statement leaves the transaction open, aborted.
			_, _ = p.conn.PgConn().Exec(context.WithoutCancel(ctx), "ROLLBACK").ReadAll()
		}
		return table.Page{}, err
	}
	return page, nil
}

func (p *pages) page(ctx context.Context, after any) (table.Page, error) {
	var params [][]byte
	if after != nil {
		params = [][]byte{[]byte(after.(string))}
	}
	mrr := readBatch(ctx, p.conn.PgConn(), "BEGIN READ ONLY", params, p.q.SQL(param(after)))
	defer mrr.Close()
	rr, err := skipTo(mrr, 1)
	if err != nil {
		return table.Page{}, err
	}
	cols, oids := columnsOf(rr.FieldDescriptions())
	page := table.Page{Columns: cols[1:]} // the first is the row's order
	key := slices.IndexFunc(page.Columns, func(c table.Column) bool { return c.Name == p.q.Key })
	for rr.NextRow() {
		vals := rr.Values()
		order, _ := strconv.Atoi(string(vals[0]))
		page.Order = append(page.Order, order)
		page.Rows = append(page.Rows, cells(vals[1:], oids[1:]))
		if key >= 0 {
			page.Last = string(vals[key+1]) // the server's own text of the key, read back as its type
		}
	}
	if _, err := rr.Close(); err != nil {
		return table.Page{}, err
	}
	if err := finish(mrr); err != nil {
		return table.Page{}, err
	}
	return page, nil
}

// readBatch sends begin, the statements and COMMIT in one batch of the
// extended protocol: each statement is parsed alone, so a text that holds
// two is refused, and the server runs them back to back. params are the
// last statement's, as text, their types left to the server.
func readBatch(ctx context.Context, pc *pgconn.PgConn, begin string, params [][]byte, stmts ...string) *pgconn.MultiResultReader {
	b := &pgconn.Batch{}
	b.ExecParams(begin, nil, nil, nil, nil)
	for i, s := range stmts {
		var p [][]byte
		if i == len(stmts)-1 {
			p = params
		}
		b.ExecParams(s, p, nil, nil, nil)
	}
	b.ExecParams("COMMIT", nil, nil, nil, nil)
	return pc.ExecBatch(ctx, b)
}

// skipTo reads the results of mrr before result i (checking each) and
// returns result i's reader.
func skipTo(mrr *pgconn.MultiResultReader, i int) (*pgconn.ResultReader, error) {
	for n := 0; ; n++ {
		if !mrr.NextResult() {
			if err := mrr.Close(); err != nil {
				return nil, err
			}
			return nil, errors.New("the server sent fewer results than statements")
		}
		if n == i {
			return mrr.ResultReader(), nil
		}
		if _, err := mrr.ResultReader().Close(); err != nil {
			_ = mrr.Close()
			return nil, err
		}
	}
}

// finish reads the results left in mrr (the COMMIT) and closes it.
func finish(mrr *pgconn.MultiResultReader) error {
	for mrr.NextResult() {
		if _, err := mrr.ResultReader().Close(); err != nil {
			_ = mrr.Close()
			return err
		}
	}
	return mrr.Close()
}

// Close closes the connection.
func (p *pages) Close() error {
	if p.conn == nil {
		return nil
	}
	err := closeConn(p.conn)
	p.conn = nil
	return err
}

// param is the placeholder of the key a page follows; "" for the first
// page. It is bound as the server's own text of the key with no type given,
// so the server reads it as the key column's type: ids compare as numbers,
// text in the column's collation, and so on.
func param(after any) string {
	if after == nil {
		return ""
	}
	return "$1"
}
