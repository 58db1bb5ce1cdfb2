package table

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/rs/zerolog"
)

// Errors of reading a table in pages.
var (
	// ErrConnLost marks a connection to the database that was lost while
	// reading (terminated by the server or an administrator, a restart, the
	// network): reading again on a new connection may succeed.
	ErrConnLost = errors.New("the connection to the database was lost")
	// ErrPaging marks a --where condition that returned rows outside the
	// page asked for (a condition that closes its parenthesis and adds an
	// OR): the table cannot be read in id order through it.
	ErrPaging = errors.New("the --where condition undoes the paging by id")
	// ErrDuplicateKey marks an id that more than one input row has: results
	// are keyed, and the input resumed, by id.
	ErrDuplicateKey = errors.New("the id column is not unique")
)

// DefaultPageRows is how many rows one page of a table brings: large enough
// that the statement and its round trip cost little per row, small enough
// that a page takes milliseconds and its memory is a few hundred kB (see
// BENCHMARKS.md, issue 20).
const DefaultPageRows = 1000

// UnindexedPageRows is the page of a table whose id has no unique index,
// where each page costs a sort of the whole table (see OpenTable).
const UnindexedPageRows = 10 * DefaultPageRows

// PageQuery is a table read in keyset pages: the rows of Table matching
// Where (SQL text of the user's, may be empty) whose Key is not NULL, in Key
// order, Limit at a time.
type PageQuery struct {
	Table Name
	Key   string
	Where string
	Limit int
}

// SQL is the statement of one page of q. param is the placeholder of the
// key the page follows ($1, ?1), bound by the driver so that it compares as
// the key column's own values do; "" for the first page. The statement's
// first column, addrclean_order, is how each row's key compares with the
// parameter (Page.Order): computed in the select list, where a --where
// that broke out of its parentheses cannot change it.
func (q PageQuery) SQL(param string) string {
	k := QuoteIdent(q.Key)
	order, cond, limit := "1", k+" IS NOT NULL", q.Limit
	if param != "" {
		order = fmt.Sprintf("CASE WHEN %s > %s THEN 1 WHEN %s = %s THEN 0 ELSE -1 END", k, param, k, param)
		cond, limit = k+" >= "+param, q.Limit+1
	}
	if q.Where != "" {
		cond += " AND (" + q.Where + "\n)" // the newline ends a -- comment
	}
	return fmt.Sprintf("SELECT %s AS addrclean_order, * FROM %s WHERE %s ORDER BY %s LIMIT %d", order, q.Table.SQL(), cond, k, limit)
}

// Page is one page of a PageQuery.
type Page struct {
	// Columns are the table's columns.
	Columns []Column
	// Rows are the rows' cells as text (NULL as "").
	Rows [][]string
	// Order tells, for each row, how its key compares with the key the
	// page was asked to follow: 1 greater, 0 equal (the row that ended
	// the previous page, or another with its id), -1 less (the condition
	// undid the paging).
	Order []int
	// Last is the key of the last row as the database compares it, to ask
	// for the page after; nil when Rows is empty.
	Last any
}

// Pager is a Database that reads tables in keyset pages.
type Pager interface {
	// Pages returns a reader of q's pages with a connection of its own.
	Pages(ctx context.Context, q PageQuery) (PageReader, error)
}

// PageReader reads the pages of one PageQuery.
type PageReader interface {
	// Page returns, in key order, the first Limit rows (after nil) or the
	// first Limit+1 rows whose key is at least after (the row that ended
	// the previous page, and Limit more), each page one read-only statement in a
	// transaction of its own that is over when Page returns. An error
	// wrapping ErrConnLost means the connection was lost: the next Page
	// connects again.
	Page(ctx context.Context, after any) (Page, error)
	// Close releases the connection.
	Close() error
}

// Retry is how often, and after what waits, reading retries after a lost
// connection before it gives up.
type Retry struct {
	// Attempts is how many times reading is tried again after a lost
	// connection, in a row: a page that succeeds starts the count afresh.
	Attempts int
	// Wait is the wait before the first new attempt; it doubles for each
	// further one.
	Wait time.Duration
}

// DefaultRetry tries three more times, after 1, 2 and 4 seconds: long
// enough for a failover or a restart of the server, short enough that a
// database that is gone ends the run within seconds.
var DefaultRetry = Retry{Attempts: 3, Wait: time.Second}

// do runs f until it succeeds, fails with anything but ErrConnLost, or has
// been tried r.Attempts more times; it waits between attempts on ctx, and
// logs each retry (where says where reading goes on).
func (r Retry) do(ctx context.Context, log zerolog.Logger, where string, f func() error) error {
	wait := r.Wait
	for attempt := 0; ; attempt++ {
		err := f()
		if err == nil || !errors.Is(err, ErrConnLost) || ctx.Err() != nil {
			return err
		}
		if attempt >= r.Attempts {
			return fmt.Errorf("%w (tried again %d times)", err, r.Attempts)
		}
		log.Warn().Err(err).Int("attempt", attempt+1).Int("of", r.Attempts).Dur("wait", wait).
			Msg("lost the connection to the input's database; connecting again to read " + where)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait *= 2
	}
}

// keysetRows is Rows over a PageReader: it asks for the next page while the
// rows of the current one are used, and checks that pages follow each other
// in key order and that no key repeats.
type keysetRows struct {
	pr    PageReader
	retry Retry
	log   zerolog.Logger
	limit int
	key   int // the key's index in the cells
	cols  []Column
	buf   [][]string
	next  int
	done  bool
	prev  string // the key of the last row handed out, as text
	have  bool   // prev is set
	ahead chan fetchedPage
}

type fetchedPage struct {
	p     Page
	after any // the key the page follows
	err   error
}

// fetch reads the page that follows key after, connecting again as r.retry
// allows.
func (r *keysetRows) fetch(ctx context.Context, after any) fetchedPage {
	var p Page
	where := "from the first row"
	if r.have {
		where = "the rows after id " + r.prev
	}
	err := r.retry.do(ctx, r.log, where, func() error {
		var err error
		p, err = r.pr.Page(ctx, after)
		return err
	})
	return fetchedPage{p: p, after: after, err: err}
}

// take checks page f, makes its rows the ones to hand out, and starts
// reading the next page unless this one was the last.
func (r *keysetRows) take(ctx context.Context, f fetchedPage) error {
	if f.err != nil {
		return f.err
	}
	p := f.p
	rows := make([][]string, 0, len(p.Rows))
	for i, cells := range p.Rows {
		switch p.Order[i] {
		case -1:
			return fmt.Errorf("%w: a row with id %s came after id %s; write the condition so that it only narrows the rows "+
				"(no parenthesis closed that it did not open)", ErrPaging, cells[r.key], r.prev)
		case 0:
			// The row that ended the previous page is read again to see
			// whether another row shares its id; a second one does.
			if i > 0 {
				return fmt.Errorf("%w: id %s is on more than one row", ErrDuplicateKey, cells[r.key])
			}
			continue
		}
		if r.have && cells[r.key] == r.prev {
			return fmt.Errorf("%w: id %s is on more than one row", ErrDuplicateKey, cells[r.key])
		}
		r.prev, r.have = cells[r.key], true
		rows = append(rows, cells)
	}
	r.buf, r.next = rows, 0
	// A page that follows a key asks for one row more: the one it follows.
	asked := r.limit
	if f.after != nil {
		asked++
	}
	r.done = len(p.Rows) < asked
	if !r.done {
		ch := make(chan fetchedPage, 1)
		r.ahead = ch
		go func() { ch <- r.fetch(ctx, p.Last) }()
	}
	return nil
}

func (r *keysetRows) Columns() []Column { return r.cols }

func (r *keysetRows) Next(ctx context.Context) ([]string, error) {
	for r.next >= len(r.buf) {
		if r.done || r.ahead == nil {
			return nil, io.EOF
		}
		f := <-r.ahead
		r.ahead = nil
		if err := r.take(ctx, f); err != nil {
			r.done = true
			return nil, err
		}
	}
	c := r.buf[r.next]
	r.buf[r.next] = nil
	r.next++
	return c, nil
}

// Close waits for a page under way and releases the connection.
func (r *keysetRows) Close() error {
	if r.ahead != nil {
		<-r.ahead
		r.ahead = nil
	}
	return r.pr.Close()
}

// OpenTable reads table n of db in pages of opts.PageRows rows in the order
// of its id column opts.Key, only the rows matching where (SQL text of the
// user's, may be empty) whose id is not NULL. Each page is one read-only
// statement of its own, so no transaction stays open while the rows are
// used; a lost connection is opened again and reading goes on after the
// last id read, as opts.Retry allows. An id on two rows is an error
// wrapping ErrDuplicateKey when it is read.
func OpenTable(ctx context.Context, db Database, n Name, where string, name string, opts SourceOptions) (*Source, error) {
	pager, ok := db.(Pager)
	if !ok {
		return nil, fmt.Errorf("%s: this database cannot read a table in pages", name)
	}
	q := PageQuery{Table: n, Key: opts.Key, Where: where, Limit: opts.PageRows}
	if q.Limit <= 0 {
		q.Limit = DefaultPageRows
	}
	// Without an index on the id every page sorts the whole table: a
	// million rows read in pages of a thousand cost a thousand sorts.
	// Pages ten times larger make that a hundred, for a few MB more.
	if indexed, err := db.UniqueKey(ctx, n, opts.Key); err == nil && !indexed {
		if opts.PageRows <= 0 {
			q.Limit = UnindexedPageRows
		}
		opts.Logger.Warn().Str("table", n.String()).Str("id", opts.Key).
			Msgf("the input table has no unique index on its id: each page of %d rows scans and sorts the whole table; "+
				"an index makes reading fast (CREATE UNIQUE INDEX ON %s (%s))", q.Limit, n.SQL(), QuoteIdent(opts.Key))
	}
	pr, err := pager.Pages(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r := &keysetRows{pr: pr, retry: cmp.Or(opts.Retry, DefaultRetry), log: opts.Logger, limit: q.Limit}
	first := r.fetch(ctx, nil)
	if first.err != nil {
		_ = pr.Close()
		return nil, fmt.Errorf("%s: %w", name, first.err)
	}
	r.cols = first.p.Columns
	if r.key = slices.Index(Names(r.cols), opts.Key); r.key < 0 {
		_ = pr.Close()
		return nil, fmt.Errorf("%w: %s has no id column %q", ErrNoColumn, name, opts.Key)
	}
	if err := r.take(ctx, first); err != nil {
		_ = r.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return newSource(r, name, opts), nil
}
