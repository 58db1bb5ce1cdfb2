package sqlitefile

import (
	"context"
	"database/sql"
	"runtime"
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
type Batch[T any] struct {
	f      *File
	insert *sql.Stmt // prepared once on the connection, as are begin and commit:
	begin  *sql.Stmt // a commit of a few rows is otherwise mostly SQL parsing
	commit *sql.Stmt
	args   func(T) []any
	max    int

	mu      sync.Mutex // guards pend and err
	pend    []T
	err     error
	flushMu sync.Mutex // one commit at a time, in order

	stop chan struct{}
	done chan struct{}
	once sync.Once

	commits atomic.Int64
}

// Commits returns the number of commits made (for benchmarks: rows per
// commit).
func (b *Batch[T]) Commits() int64 { return b.commits.Load() }

// NewBatch prepares insert (one row's statement, its arguments given by
// args) and starts a batch of at most rows rows and every interval between
// commits (the defaults when zero).
func NewBatch[T any](f *File, rows int, every time.Duration, insert string, args func(T) []any) (*Batch[T], error) {
	if rows <= 0 {
		rows = DefaultBatchRows
	}
	if every <= 0 {
		every = DefaultBatchEvery
	}
	b := &Batch[T]{f: f, args: args, max: rows, stop: make(chan struct{}), done: make(chan struct{})}
	err := f.Do(context.Background(), func(c *sql.Conn) error {
		var err error
		for st, q := range map[**sql.Stmt]string{&b.insert: insert, &b.begin: "BEGIN IMMEDIATE", &b.commit: "COMMIT"} {
			if *st, err = c.PrepareContext(context.Background(), q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
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

// Add queues row; it commits the batch on the caller's goroutine when the
// batch is full. It returns the error of a failed commit, this one's or an
// earlier one's.
func (b *Batch[T]) Add(row T) error {
	full, err := b.queue(row)
	if err == nil && full {
		err = b.Flush()
	}
	return err
}

// queue appends row unless a commit failed, and says whether the batch is
// full.
func (b *Batch[T]) queue(row T) (full bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return false, b.err
	}
	b.pend = append(b.pend, row)
	return len(b.pend) >= b.max, nil
}

// AddWait adds row and returns once it is committed: rows added by
// goroutines meanwhile share its commit (a group commit), so that a commit
// is per row only when rows come one at a time.
func (b *Batch[T]) AddWait(row T) error {
	if _, err := b.queue(row); err != nil {
		return err
	}
	// The commit under way, if any, took the rows before this one; the
	// next Flush takes this one with every row added while it waited.
	// Yielding once first lets the goroutines about to add join it: the
	// rows per commit go from 1 to several on a busy run.
	runtime.Gosched()
	return b.Flush()
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

// Flush commits the rows queued so far.
func (b *Batch[T]) Flush() error {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	b.mu.Lock()
	rows, err := b.pend, b.err
	b.mu.Unlock()
	if err != nil || len(rows) == 0 {
		return err
	}
	// The rows stay visible to Pending until they are committed.
	err = b.f.Do(context.Background(), func(c *sql.Conn) error {
		if _, err := b.begin.Exec(); err != nil {
			return err
		}
		for _, r := range rows {
			if _, err := b.insert.Exec(b.args(r)...); err != nil {
				_, _ = c.ExecContext(context.Background(), "ROLLBACK")
				return err
			}
		}
		if _, err := b.commit.Exec(); err != nil {
			_, _ = c.ExecContext(context.Background(), "ROLLBACK")
			return err
		}
		return nil
	})
	b.commits.Add(1)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		if b.err == nil {
			b.err = err
		}
		return b.err
	}
	// Rows added meanwhile came after these.
	n := copy(b.pend, b.pend[len(rows):])
	clear(b.pend[n:])
	b.pend = b.pend[:n]
	return nil
}

// Close stops the timer and commits what is queued. The File stays open.
func (b *Batch[T]) Close() error {
	b.once.Do(func() {
		close(b.stop)
		<-b.done
	})
	err := b.Flush()
	for _, st := range []*sql.Stmt{b.insert, b.begin, b.commit} {
		_ = st.Close()
	}
	return err
}
