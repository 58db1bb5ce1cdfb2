package sqlitefile

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Batch defaults: a commit per few hundred rows or every second, never one
// per row (a commit per row is bound by the WAL's write and lock calls).
const (
	DefaultBatchRows  = 256
	DefaultBatchEvery = time.Second
)

// Batch collects rows and writes them to a File together, in one
// transaction per Rows rows or per Every, whichever comes first. A row
// added is in the file, safe from a killed process, once its batch is
// committed: at most Every after Add. The first failed commit fails every
// later Add, Flush and Close with the same error.
//
// A commit of up to chunkRows rows is one multi-row INSERT in autocommit
// mode, and a larger one such INSERTs between BEGIN and COMMIT: the rows of
// a group commit (AddWait) cost one statement, not one each plus two. The
// statements are prepared once on the driver's connection and run there,
// outside database/sql (its value conversion and locks, per statement):
// a journal's commit of three rows was five statements, and costs a
// seventh less CPU as one (BENCHMARKS.md, "the live run's journal").
type Batch[T any] struct {
	f      *File
	insert multiInsert
	args   func(T) []any
	max    int

	mu   sync.Mutex
	cond sync.Cond // on mu: a commit finished
	// Under mu: the rows not yet committed, the first inflight of them in
	// the commit under way (busy), if any; commits started and finished
	// (the rows queued now go into commit started+1); the first failed
	// commit's error; closed by Close, after which no row is queued.
	pend              []T
	inflight          int
	busy              bool
	started, finished int64
	err               error
	closed            bool
	// Used by the goroutine that commits (busy): the INSERTs by rows (0
	// unused; 1 prepared by NewBatch, the others when first needed); BEGIN,
	// COMMIT and ROLLBACK; the arguments of an INSERT.
	stmts                   [chunkRows + 1]driver.Stmt
	begin, commit, rollback driver.Stmt
	vals                    []driver.NamedValue

	stop chan struct{}
	done chan struct{}
	once sync.Once

	commits atomic.Int64
}

// chunkRows is the most rows one INSERT statement writes.
const chunkRows = 16

// multiInsert is a one-row INSERT ... VALUES (?, ...) [rest] split so that
// it can be written for several rows.
type multiInsert struct {
	head, tuple, rest string
	params            int
}

// splitInsert splits insert at its VALUES tuple.
func splitInsert(insert string) (multiInsert, error) {
	const kw = "VALUES ("
	i := strings.Index(insert, kw)
	if i < 0 {
		return multiInsert{}, fmt.Errorf("sqlitefile: batch statement without %q: %s", kw, insert)
	}
	j := strings.IndexByte(insert[i:], ')')
	if j < 0 {
		return multiInsert{}, fmt.Errorf("sqlitefile: batch statement's VALUES not closed: %s", insert)
	}
	tuple := insert[i+len(kw)-1 : i+j+1]
	m := multiInsert{head: insert[:i+len(kw)-1], tuple: tuple, rest: insert[i+j+1:], params: strings.Count(tuple, "?")}
	if strings.Trim(tuple, "(?, )") != "" || m.params == 0 {
		return multiInsert{}, fmt.Errorf("sqlitefile: batch statement's VALUES must hold ? only: %s", insert)
	}
	// The rows' arguments follow each other, a tuple's worth a row: a ?
	// elsewhere (even in a literal) would take another row's argument.
	if strings.Contains(m.head, "?") || strings.Contains(m.rest, "?") {
		return multiInsert{}, fmt.Errorf("sqlitefile: batch statement with ? outside its VALUES tuple: %s", insert)
	}
	return m, nil
}

// sql is the statement for n rows.
func (m multiInsert) sql(n int) string {
	var b strings.Builder
	b.WriteString(m.head)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(m.tuple)
	}
	b.WriteString(m.rest)
	return b.String()
}

// Commits returns the number of commits made (for benchmarks: rows per
// commit).
func (b *Batch[T]) Commits() int64 { return b.commits.Load() }

// NewBatch starts a batch of at most rows rows and every interval between
// commits (the defaults when zero). insert is one row's statement,
// INSERT ... VALUES (?, ...) with an optional ON CONFLICT clause after the
// tuple and no ? outside it; SQLite must accept it (it is prepared here).
// args gives a row's arguments, of the types database/sql takes (integers,
// strings, byte slices, nil, driver.Valuer).
func NewBatch[T any](f *File, rows int, every time.Duration, insert string, args func(T) []any) (*Batch[T], error) {
	if rows <= 0 {
		rows = DefaultBatchRows
	}
	if every <= 0 {
		every = DefaultBatchEvery
	}
	m, err := splitInsert(insert)
	if err != nil {
		return nil, err
	}
	b := &Batch[T]{f: f, insert: m, args: args, max: rows, stop: make(chan struct{}), done: make(chan struct{})}
	b.cond.L = &b.mu
	// The one-row INSERT is prepared now so that a statement SQLite refuses
	// fails here, before any row is accepted.
	err = f.raw(func(c driver.ConnPrepareContext) error {
		for p, q := range map[*driver.Stmt]string{&b.begin: "BEGIN IMMEDIATE", &b.commit: "COMMIT", &b.rollback: "ROLLBACK", &b.stmts[1]: m.sql(1)} {
			// Set only on success: a failed prepare may return a nil
			// pointer in a non-nil driver.Stmt, which closeStmts would close.
			st, err := c.PrepareContext(context.Background(), q)
			if err != nil {
				return fmt.Errorf("sqlitefile: batch statement: %w", err)
			}
			*p = st
		}
		return nil
	})
	if err != nil {
		b.closeStmts()
		return nil, err
	}
	go b.loop(every)
	return b, nil
}

func (b *Batch[T]) loop(every time.Duration) {
	defer close(b.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			_ = b.Flush()
		}
	}
}

// errClosed fails the calls that would commit after Close.
var errClosed = errors.New("sqlitefile: batch closed")

// Add queues row; it commits the batch on the caller's goroutine when the
// batch is full. It returns the error of a failed commit, this one's or an
// earlier one's.
func (b *Batch[T]) Add(row T) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.queue(row); err != nil {
		return err
	}
	if len(b.pend)-b.inflight < b.max {
		return nil
	}
	return b.wait(b.started + 1)
}

// queue appends row unless a commit failed or the batch is closed (under
// mu).
func (b *Batch[T]) queue(row T) error {
	switch {
	case b.err != nil:
		return b.err
	case b.closed:
		return errClosed
	}
	b.pend = append(b.pend, row)
	return nil
}

// AddWait adds row and returns once it is committed: rows added by other
// goroutines while a commit is under way share the next one (a group
// commit), so that a commit is per row only when rows come one at a time.
//
// The first of them to find no commit under way makes it for all (the
// leader); the others sleep until it is done. A Record that waited its
// turn on a lock instead took whatever one row had come meanwhile: eight
// goroutines recording at once committed 1.0 rows a commit.
func (b *Batch[T]) AddWait(row T) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.queue(row); err != nil {
		return err
	}
	return b.wait(b.started + 1)
}

// Flush commits the rows queued so far, and waits for the commit under way.
func (b *Batch[T]) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.flush()
}

// flush is Flush under mu.
func (b *Batch[T]) flush() error {
	switch {
	case len(b.pend) > b.inflight:
		return b.wait(b.started + 1)
	case b.busy:
		return b.wait(b.started)
	}
	return b.err
}

// wait returns once commit n has finished, making it when no commit is
// under way: it then takes every row queued (under mu, which it releases
// while it writes).
func (b *Batch[T]) wait(n int64) error {
	yielded := false
	for b.finished < n && b.err == nil {
		if b.busy {
			b.cond.Wait()
			continue
		}
		if !yielded {
			// The goroutines about to add a row join this commit.
			yielded = true
			b.mu.Unlock()
			runtime.Gosched()
			b.mu.Lock()
			continue
		}
		b.busy, b.started, b.inflight = true, b.started+1, len(b.pend)
		// The rows stay in pend, visible to Pending, until they are
		// committed; rows queued meanwhile are appended after them.
		rows := b.pend[:b.inflight:b.inflight]
		b.mu.Unlock()
		err := b.f.raw(func(c driver.ConnPrepareContext) (err error) {
			// A panic in args or in a driver.Valuer fails the commit: let
			// through, it would unlock mu, unlocked here (a fatal error),
			// leave busy set, and make database/sql drop the connection.
			defer func() {
				if r := recover(); r != nil {
					_ = execStmt(b.rollback, nil) // a transaction write began
					err = fmt.Errorf("sqlitefile: batch commit: panic: %v", r)
				}
			}()
			return b.write(c, rows)
		})
		b.commits.Add(1)
		b.mu.Lock()
		b.busy, b.finished = false, b.started
		if err != nil && b.err == nil {
			b.err = err
		}
		if err == nil {
			k := copy(b.pend, b.pend[b.inflight:])
			clear(b.pend[k:])
			b.pend = b.pend[:k]
		}
		b.inflight = 0
		b.cond.Broadcast()
	}
	return b.err
}

// Pending calls fn with the rows not yet committed (under the batch's
// lock: fn must not call the batch).
func (b *Batch[T]) Pending(fn func(rows []T)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fn(b.pend)
}

// Err returns the error of the first failed commit.
func (b *Batch[T]) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// write commits rows: one INSERT in autocommit mode when they are few, else
// INSERTs of chunkRows rows in one transaction.
func (b *Batch[T]) write(c driver.ConnPrepareContext, rows []T) error {
	if len(rows) <= chunkRows {
		return b.exec(c, rows)
	}
	if err := execStmt(b.begin, nil); err != nil {
		return err
	}
	for len(rows) > 0 {
		n := min(len(rows), chunkRows)
		if err := b.exec(c, rows[:n]); err != nil {
			_ = execStmt(b.rollback, nil)
			return err
		}
		rows = rows[n:]
	}
	if err := execStmt(b.commit, nil); err != nil {
		_ = execStmt(b.rollback, nil)
		return err
	}
	return nil
}

// exec runs the INSERT of rows (at most chunkRows), preparing it the first
// time.
func (b *Batch[T]) exec(c driver.ConnPrepareContext, rows []T) error {
	st := b.stmts[len(rows)]
	if st == nil {
		var err error
		if st, err = c.PrepareContext(context.Background(), b.insert.sql(len(rows))); err != nil {
			return err
		}
		b.stmts[len(rows)] = st
	}
	vals := b.vals[:0]
	defer func() { b.vals = vals; clear(vals) }() // the rows' strings are not kept
	for _, r := range rows {
		args := b.args(r)
		if len(args) != b.insert.params {
			return fmt.Errorf("sqlitefile: %d arguments for a row of %d parameters", len(args), b.insert.params)
		}
		for _, a := range args {
			v, err := driverValue(a)
			if err != nil {
				return err
			}
			vals = append(vals, driver.NamedValue{Ordinal: len(vals) + 1, Value: v})
		}
	}
	return execStmt(st, vals)
}

// execStmt runs st, a statement that returns no rows.
func execStmt(st driver.Stmt, args []driver.NamedValue) error {
	s, ok := st.(driver.StmtExecContext)
	if !ok {
		return fmt.Errorf("the driver's statement (%T) does not execute with a context", st)
	}
	_, err := s.ExecContext(context.Background(), args)
	return err
}

// driverValue converts a of the types NewBatch takes to a driver.Value:
// the common types here, the others (other integers, named types, pointers,
// driver.Valuer, a nil pointer to one) as database/sql converts them.
func driverValue(a any) (driver.Value, error) {
	switch v := a.(type) {
	case nil, int64, float64, bool, string, []byte, time.Time:
		return v, nil
	case int:
		return int64(v), nil
	}
	v, err := driver.DefaultParameterConverter.ConvertValue(a)
	if err != nil {
		return nil, fmt.Errorf("sqlitefile: a batch argument of type %T: %w", a, err)
	}
	return v, nil
}

// Close stops the timer and commits what is queued; later calls that
// would queue a row fail. The File stays open.
func (b *Batch[T]) Close() error {
	b.once.Do(func() {
		close(b.stop)
		<-b.done
	})
	b.mu.Lock()
	defer b.mu.Unlock()
	// Closed before the last commits, so that no Add can return nil for a
	// row queued after them; the commits under way (another call's, or a
	// first Close's) are waited for.
	b.closed = true
	for b.err == nil && (b.busy || len(b.pend) > 0) {
		_ = b.flush()
	}
	b.closeStmts()
	return b.err
}

// closeStmts closes the prepared statements (when no commit can be under
// way).
func (b *Batch[T]) closeStmts() {
	_ = b.f.raw(func(driver.ConnPrepareContext) error {
		for _, st := range append(b.stmts[:], b.begin, b.commit, b.rollback) {
			if st != nil {
				_ = st.Close()
			}
		}
		return nil
	})
	b.stmts, b.begin, b.commit, b.rollback = [chunkRows + 1]driver.Stmt{}, nil, nil, nil
}
