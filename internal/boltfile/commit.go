package boltfile

import (
	"runtime"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// commitQueue is the group commit of Puts. A Put that finds no commit under
// way commits every Put waiting at that moment in one bbolt Update on its
// own goroutine; Puts that arrive meanwhile wait, and the first of them to
// wake commits the next group. No Put waits for a timer (bbolt's Batch
// makes a lone Put wait MaxBatchDelay), and a panic of bbolt on a damaged
// page happens on a caller's goroutine, where guard turns it into
// Options.Corrupt (in Batch it happens on a timer's goroutine and kills the
// process).
type commitQueue struct {
	mu      sync.Mutex
	cond    sync.Cond // L is &mu; signalled when a group is done
	pend    []pending // waiting for the next group
	spare   []pending // the last group's slice, for reuse
	writing bool      // a group is being committed
	taken   uint64    // groups taken for commit
	done    uint64    // groups committed or failed
	err     error     // the first failed group's error: later groups fail too
	errAt   uint64    // that group's number
}

type pending struct{ bucket, k, v []byte }

// Put stores v under k in bucket and returns once it is committed:
// concurrent Puts share one transaction.
func (d *DB) Put(bucket, k, v []byte) error {
	q := &d.q
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return q.err
	}
	q.pend = append(q.pend, pending{bucket, k, v})
	mine := q.taken + 1 // every waiting Put goes in the next group taken
	for {
		switch {
		case q.done >= mine:
			if q.err != nil && q.errAt <= mine {
				return q.err
			}
			return nil
		case q.err != nil:
			return q.err
		case !q.writing:
			return d.commitGroup()
		}
		q.cond.Wait()
	}
}

// commitGroup commits the waiting group; d.q.mu is held, and released
// meanwhile.
func (d *DB) commitGroup() error {
	q := &d.q
	q.writing = true
	// Yield once, so that Puts of goroutines about to run join this group:
	// a bbolt commit costs about 20 µs of CPU whatever its size, and an
	// embedded run with a journal spent 20 % less CPU per row so.
	q.mu.Unlock()
	runtime.Gosched()
	q.mu.Lock()
	group := q.pend
	q.pend = q.spare[:0]
	q.taken++
	n := q.taken
	q.mu.Unlock()
	err := d.Update(func(tx *bolt.Tx) error {
		for _, p := range group {
			b := tx.Bucket(p.bucket)
			if b == nil {
				return d.Corrupt("bucket " + string(p.bucket) + " is gone")
			}
			if d.o.InOrder {
				b.FillPercent = 1 // no page is split for a key before others
			}
			if err := b.Put(p.k, p.v); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		d.dirty.Store(true)
	}
	q.mu.Lock()
	clear(group)
	q.spare = group[:0]
	q.writing = false
	q.done = n
	if err != nil && q.err == nil {
		q.err, q.errAt = err, n
	}
	q.cond.Broadcast()
	return err
}

// fail makes every later Put fail with err (a failed sync).
func (q *commitQueue) fail(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err == nil {
		q.err, q.errAt = err, q.taken
	}
}

func (q *commitQueue) failed() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}
