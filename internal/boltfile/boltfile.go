// Package boltfile opens addrclean's bbolt files (the result cache, the
// resume journal) so that a damaged one is an error naming the file, never
// a crash, and writes to them by group commit on the callers' goroutines.
//
// Open checks the file without bbolt before bbolt maps it (see check.go),
// and every bbolt call runs under guard: a fault on the memory map or a
// panic of bbolt met later (a file changed under the process) becomes an
// error wrapping Options.Corrupt, after which the DB refuses every call.
package boltfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Options describe a kind of file and tune Open.
type Options struct {
	// Kind begins every error about the file ("cache", "journal").
	Kind string
	// Marker is the top-level bucket every file of this kind holds, with
	// Format under the key "format": a bbolt file with other buckets and
	// not this one is another program's.
	Marker, Format []byte
	// Corrupt is wrapped by every error about a damaged file; NotOurs too
	// when the file is not of this kind at all; Locked when another
	// process holds the file.
	Corrupt, NotOurs, Locked error
	// Hint ends the message about a damaged file at path, or one not of
	// this kind (notOurs): what to do about it.
	Hint func(path string, notOurs bool) string
	// Timeout is how long to wait for another process's lock (0: not at
	// all).
	Timeout time.Duration
	// NoSync skips fsync on commit (tests that open hundreds of files).
	NoSync bool
	// SyncEvery, when set, also skips fsync on commit, and syncs the file
	// that often (and on Close) instead: a commit is in the file, safe from
	// a killed process, when Put returns, and safe from a power cut after
	// at most SyncEvery.
	SyncEvery time.Duration
	// InOrder says that Put's keys come mostly in increasing order: pages
	// are filled (a quarter of the CPU of a commit saved with 1.6 KB values).
	InOrder bool
	// SkipCheck opens without reading every page (benchmarks of Open).
	SkipCheck bool
	// Entry is shown, by the check, every key and value of the top-level
	// buckets other than Marker: the callers' entries, to count those that
	// fail their own checksum.
	Entry func(k, v []byte)
	// Logger is told of a damaged meta page (the other one is used).
	Logger zerolog.Logger
}

// DB is an open, checked, locked bbolt file. It is safe for concurrent use.
type DB struct {
	// Bolt is the bbolt handle, for tests that reach past View and Update.
	Bolt *bolt.DB
	file *os.File // bbolt's handle, kept to release the lock if bbolt cannot
	path string
	o    Options

	// broken is the first Corrupt error met after Open (a panic or a
	// fault of bbolt): the pages in memory can no longer be trusted, so
	// every later call returns it.
	broken atomic.Pointer[error]
	stuck  atomic.Bool // a write transaction panicked: see Close
	closed atomic.Bool
	fresh  bool // no buckets at all

	q        commitQueue
	dirty    atomic.Bool   // committed since the last sync (SyncEvery)
	stopSync chan struct{} // closed by Close; syncDone when the syncing stopped
	syncDone chan struct{}
}

var formatKey = []byte("format")

// errBusy: another process holds the lock.
var errBusy = errors.New("locked")

// errReplaced: the file locked is no longer the one at the path.
var errReplaced = errors.New("replaced while it was being opened")

// Open opens (creating, mode 0600) and checks the bbolt file at path.
func Open(path string, o Options) (*DB, error) {
	return retry(path, func() (*DB, error) { return open(path, o, nil) })
}

// Replace replaces the file at path, damaged or not, with a new, empty
// one, holding the lock from before it empties the file until the new one
// is open. It refuses (NotOurs) a file that is not a bbolt file or is
// another program's: the path may be the wrong one.
func Replace(path string, o Options) (*DB, error) {
	return retry(path, func() (*DB, error) {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.Kind, path, err)
		}
		fail := func(err error) (*DB, error) {
			unlock(f)
			_ = f.Close()
			return nil, err
		}
		if err := lock(f, o.Timeout); err != nil {
			if errors.Is(err, errBusy) {
				return fail(o.locked(path))
			}
			return fail(fmt.Errorf("%s %s: locking: %w", o.Kind, path, err))
		}
		fi, err := f.Stat()
		if err != nil {
			return fail(fmt.Errorf("%s %s: %w", o.Kind, path, err))
		}
		if why := foreign(f, fi.Size(), o.Marker); why != "" {
			return fail(&corruptError{o: &o, path: path, detail: why + "; left as it is", notOurs: true})
		}
		if err := f.Truncate(0); err != nil {
			return fail(fmt.Errorf("%s %s: emptying: %w", o.Kind, path, err))
		}
		if err := f.Sync(); err != nil {
			return fail(fmt.Errorf("%s %s: emptying: %w", o.Kind, path, err))
		}
		// bbolt locks the same open file again (no wait) and writes a new one.
		return open(path, o, f)
	})
}

// retry opens again when a process that held the lock removed or replaced
// the file meanwhile (a finished run removes its journal while holding
// the lock): writing to a file no longer at the path would lose it all.
func retry(path string, open func() (*DB, error)) (*DB, error) {
	for attempt := 0; ; attempt++ {
		d, err := open()
		if !errors.Is(err, errReplaced) {
			return d, err
		}
		if attempt == 3 {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
}

func (o *Options) locked(path string) error {
	if o.Timeout > 0 {
		return fmt.Errorf("%s %s is %w (waited %s)", o.Kind, path, o.Locked, o.Timeout)
	}
	return fmt.Errorf("%s %s: %w", o.Kind, path, o.Locked)
}

// open opens path with bbolt, through f when it is not nil, and checks it.
func open(path string, o Options, f *os.File) (*DB, error) {
	d := &DB{path: path, o: o}
	d.q.cond.L = &d.q.mu
	bopts := &bolt.Options{Timeout: max(o.Timeout, time.Nanosecond), NoSync: o.NoSync || o.SyncEvery > 0,
		OpenFile: func(name string, flag int, perm fs.FileMode) (*os.File, error) {
			if f == nil {
				var err error
				if f, err = os.OpenFile(name, flag, perm); err != nil {
					return nil, err
				}
			}
			d.file = f
			return f, nil
		}}
	if err := precheck(path); err != nil {
		return nil, d.corruptFile(err)
	}
	// bbolt reads the meta and freelist pages while opening: a fault or a
	// panic there is the file's damage, not a bug to crash on.
	err := guard(func() error {
		var err error
		d.Bolt, err = bolt.Open(path, 0o600, bopts)
		return err
	})
	if err != nil {
		var p *panicError
		switch {
		case errors.Is(err, berrors.ErrTimeout):
			return nil, o.locked(path)
		case errors.Is(err, fs.ErrPermission), errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("%s %s: %w", o.Kind, path, err)
		case errors.As(err, &p) && d.file != nil:
			// bbolt left its file open, locked and mapped: the map keeps
			// the lock after the file is closed, so unlock it first.
			unlock(d.file)
			_ = d.file.Close()
		}
		return nil, d.corruptFile(err)
	}
	held, err1 := d.file.Stat()
	now, err2 := os.Stat(path)
	switch {
	case err1 == nil && err2 == nil && !os.SameFile(held, now), errors.Is(err2, fs.ErrNotExist):
		err = errReplaced
	case !o.SkipCheck:
		err = d.check()
	}
	if err == nil {
		err = d.View(func(tx *bolt.Tx) error {
			m := tx.Bucket(o.Marker)
			switch {
			case m == nil:
				if k, _ := tx.Cursor().First(); k != nil {
					return &corruptError{o: &d.o, path: path, detail: "a bbolt file of another program", notOurs: true}
				}
				d.fresh = true
			case !bytes.Equal(m.Get(formatKey), o.Format):
				return d.Corrupt(fmt.Sprintf("unknown format %q", m.Get(formatKey)))
			}
			return nil
		})
	}
	if err != nil {
		_ = d.Close()
		return nil, err
	}
	if o.SyncEvery > 0 {
		d.stopSync, d.syncDone = make(chan struct{}), make(chan struct{})
		go d.syncLoop()
	}
	return d, nil
}

// Fresh reports whether Open found no buckets in the file: a new file, or
// one whose creator was killed before its first commit.
func (d *DB) Fresh() bool { return d.fresh }

// Mark creates the marker bucket, with the format, in a fresh file.
func (d *DB) Mark(tx *bolt.Tx) (*bolt.Bucket, error) {
	m, err := tx.CreateBucket(d.o.Marker)
	if err != nil {
		return nil, err
	}
	return m, m.Put(formatKey, d.o.Format)
}

// syncLoop syncs the file every SyncEvery when something was committed.
// A failed sync fails every later Put and Close.
func (d *DB) syncLoop() {
	defer close(d.syncDone)
	t := time.NewTicker(d.o.SyncEvery)
	defer t.Stop()
	for {
		select {
		case <-d.stopSync:
			return
		case <-t.C:
			if d.dirty.Swap(false) {
				if err := d.Sync(); err != nil {
					d.q.fail(err)
				}
			}
		}
	}
}

// corruptFile is the error about the file that bbolt could not open:
// damaged, or not a bbolt file at all.
func (d *DB) corruptFile(detail any) error {
	notOurs := true
	if f, err := os.Open(d.path); err == nil {
		notOurs = !hasMagicAt(f)
		_ = f.Close()
	}
	return &corruptError{o: &d.o, path: d.path, detail: fmt.Sprint(detail), notOurs: notOurs}
}

// Corrupt is the error about damage to the file that detail describes.
func (d *DB) Corrupt(detail any) error {
	return &corruptError{o: &d.o, path: d.path, detail: fmt.Sprint(detail)}
}

// corruptError is an error about a file that is damaged or not of its
// kind; it wraps Options.Corrupt (and NotOurs), and says what to do.
type corruptError struct {
	o            *Options
	path, detail string
	notOurs      bool
}

func (e *corruptError) Error() string {
	hint := ""
	if e.o.Hint != nil {
		hint = e.o.Hint(e.path, e.notOurs)
	}
	return fmt.Sprintf("%s %s: %v: %s%s", e.o.Kind, e.path, e.o.Corrupt, e.detail, hint)
}

func (e *corruptError) Is(target error) bool {
	return target == e.o.Corrupt || (e.notOurs && target == e.o.NotOurs)
}

// Sync flushes the file to disk: commits with Options.NoSync are in the
// file, safe from a killed process, but not yet from a power cut.
func (d *DB) Sync() error {
	if err := d.Bolt.Sync(); err != nil {
		return fmt.Errorf("%s %s: sync: %w", d.o.Kind, d.path, err)
	}
	return nil
}

// Close releases the file and its lock.
func (d *DB) Close() error {
	if d.closed.Swap(true) {
		return nil
	}
	var err error
	if d.stopSync != nil {
		close(d.stopSync)
		<-d.syncDone
		if err = d.q.failed(); err == nil && !d.stuck.Load() {
			err = d.Sync()
		}
	}
	return errors.Join(err, d.close())
}

func (d *DB) close() error {
	if d.stuck.Load() {
		// A panic in a write transaction can leave bbolt's writer lock
		// held (its rollback panics too), and bbolt's Close would wait for
		// it forever: release the file and its lock here; the memory map
		// goes with the process. The panic was reported as Corrupt.
		unlock(d.file)
		if err := d.file.Close(); err != nil {
			return fmt.Errorf("%s %s: close: %w", d.o.Kind, d.path, err)
		}
		return nil
	}
	if err := guard(d.Bolt.Close); err != nil {
		if d.file != nil {
			unlock(d.file)
			_ = d.file.Close()
		}
		return fmt.Errorf("%s %s: close: %w", d.o.Kind, d.path, err)
	}
	return nil
}

// View and Update run fn in a transaction, turning a fault or a panic of
// bbolt on a damaged page into Corrupt and naming the file in every error.
// After such a panic the DB is broken: bbolt's state in memory may be half
// changed, so every later call fails with the same error.
func (d *DB) View(fn func(*bolt.Tx) error) error {
	return d.wrap(false, func() error { return d.Bolt.View(fn) })
}

// Update runs fn in a write transaction; see View.
func (d *DB) Update(fn func(*bolt.Tx) error) error {
	return d.wrap(true, func() error { return d.Bolt.Update(fn) })
}

func (d *DB) wrap(write bool, fn func() error) error {
	if p := d.broken.Load(); p != nil {
		return *p
	}
	if err := guard(fn); err != nil {
		return d.classify(write, err)
	}
	return nil
}

// classify names the file in err, and turns bbolt's panics and the errors
// only damage gives into Corrupt.
func (d *DB) classify(write bool, err error) error {
	var (
		p  *panicError
		ce *corruptError
	)
	switch {
	case errors.As(err, &p):
		if write {
			d.stuck.Store(true)
		}
		err = d.Corrupt(p)
		d.broken.CompareAndSwap(nil, &err)
		return *d.broken.Load()
	case errors.As(err, &ce):
		return err // names the file already
	case errors.Is(err, berrors.ErrIncompatibleValue), errors.Is(err, berrors.ErrInvalid),
		errors.Is(err, berrors.ErrInvalidMapping), errors.Is(err, berrors.ErrChecksum):
		// A bucket where an entry belongs, or the reverse: addrclean
		// writes neither.
		return d.Corrupt(err)
	}
	return fmt.Errorf("%s %s: %w", d.o.Kind, d.path, err)
}

// panicError is a panic of bbolt, or a fault reading its memory map,
// caught by guard.
type panicError struct{ v any }

func (p *panicError) Error() string { return fmt.Sprint("bbolt: ", p.v) }

// guard runs fn on this goroutine, turning a panic, and a fault on the
// memory map (SIGBUS past the end of a truncated file, SIGSEGV past the
// map), into a *panicError. Without SetPanicOnFault a fault is a fatal
// error of the runtime, which no recover reaches.
func guard(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if v := recover(); v != nil {
			err = &panicError{v}
		}
	}()
	return fn()
}
