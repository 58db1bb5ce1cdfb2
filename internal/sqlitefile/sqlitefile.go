package sqlitefile

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
)

// MetaTable is the marker table every addrclean state file holds: name,
// value pairs, among them format = Options.Format.
const MetaTable = "addrclean_meta"

// Kind of damage Open tells apart; Options maps them to the caller's errors.
var (
	// ErrOldBbolt is wrapped by Open's error about a bbolt file (the
	// format of addrclean's cache and journal before SQLite).
	ErrOldBbolt = errors.New("a bbolt file of an older addrclean")
)

// Options describe a kind of file and tune Open.
type Options struct {
	// Kind begins every error about the file ("cache", "journal").
	Kind string
	// Format is the value of format in MetaTable; files of the same family
	// (FormatFamily) with another value are Corrupt (an unknown version),
	// other values are NotOurs.
	Format, FormatFamily string
	// Schema creates the tables of a new file (MetaTable is created and
	// marked by Open, in the same transaction).
	Schema []string
	// Corrupt is wrapped by every error about a damaged file; NotOurs too
	// when the file is not of this kind at all; Locked when another
	// connection holds it.
	Corrupt, NotOurs, Locked error
	// Hint ends the message about a damaged file at path, or one not of
	// this kind (notOurs): what to do about it.
	Hint func(path string, notOurs bool) string
	// Timeout is how long to wait for another connection's lock (0: not
	// at all).
	Timeout time.Duration
	// Scratch opens a file whose content need not survive a crash: no
	// rollback journal and no sync (a temporary index).
	Scratch bool
	// ReadOnly opens the file for a look that writes nothing (a dry run,
	// a run's look before its checks): it is checked, but no journal mode
	// is set and no table created; Write does that for a look then kept to
	// write. A missing file is an error wrapping Absent (fs.ErrNotExist
	// when nil). With Absent set, so is a file that holds no tables (no
	// bytes at all, or an SQLite file without any), left as it was;
	// without, it is opened Fresh, and Write creates its tables.
	ReadOnly bool
	Absent   error
}

// File is an open, checked, locked state file. Its methods are safe for
// concurrent use: they take turns on the one connection.
type File struct {
	mu   sync.Mutex // serialises the connection
	db   *sql.DB
	conn *sql.Conn
	path string
	o    Options
	held os.FileInfo // the file at path when it was opened
	// Fresh is true for a file that held no tables when opened: a new or
	// empty one, whose tables Open created (or Write, after ReadOnly).
	Fresh bool
}

// Sniff is what the first bytes of a file say it is.
type Sniff int

const (
	Empty   Sniff = iota // no bytes at all: SQLite makes it a database
	SQLite               // SQLite's header string
	Zeroed               // the header is zeros: a database whose first page was lost
	Bbolt                // bbolt's meta page: the format before SQLite
	Foreign              // anything else
)

// bboltMagic is bbolt's meta page magic, stored at offset 16 of the file in
// the machine's byte order (little-endian on every platform addrclean ships).
const bboltMagic = 0xED0CDAED

// sqliteMagic begins every SQLite database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// SniffFile reads the first bytes of the file at path. A missing file is
// Empty.
func SniffFile(path string) (Sniff, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Empty, nil
	}
	if err != nil {
		return Foreign, err
	}
	defer f.Close()
	b := make([]byte, 100)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return Foreign, err
	}
	b = b[:n]
	switch {
	case n == 0:
		return Empty, nil
	case bytes.HasPrefix(b, sqliteMagic):
		return SQLite, nil
	case n < len(sqliteMagic) && bytes.HasPrefix(sqliteMagic, b):
		// Cut short inside the magic (a cut while a run had it open): a
		// damaged file of ours, which a run moves aside, not another
		// program's file, which it must leave alone.
		return SQLite, nil
	case n >= 20 && binary.LittleEndian.Uint32(b[16:]) == bboltMagic:
		return Bbolt, nil
	case len(bytes.Trim(b, "\x00")) == 0:
		return Zeroed, nil
	}
	return Foreign, nil
}

// Open opens (creating, mode 0600) and checks the state file at path. A
// missing file is created with opts.Schema, unless opts.ReadOnly. The
// errors: Locked when another connection holds the file past
// opts.Timeout; NotOurs (with Corrupt) for a file that is not of this
// kind, ErrOldBbolt (with NotOurs and Corrupt) for a bbolt file; Corrupt
// for a damaged one.
func Open(ctx context.Context, path string, o Options) (*File, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s %s is a directory", o.Kind, path)
	} else if errors.Is(err, fs.ErrNotExist) && o.ReadOnly {
		return nil, fmt.Errorf("%s %s %w", o.Kind, path, cmp.Or(o.Absent, fs.ErrNotExist))
	} else if errors.Is(err, fs.ErrNotExist) {
		// A WAL or index left beside a file that is gone belongs to
		// another database: SQLite would replay its pages into the new one.
		RemoveSidecars(path)
	}
	f := &File{path: path, o: o}
	switch s, err := SniffFile(path); {
	case err != nil:
		return nil, fmt.Errorf("%s %s: %w", o.Kind, path, err)
	case s == Bbolt:
		return nil, f.notOurs(ErrOldBbolt.Error(), ErrOldBbolt)
	case s == Foreign:
		return nil, f.notOurs("not an SQLite file", nil)
	}
	// Create the file ourselves, so that its mode is 0600 (SQLite would
	// use 0644): it holds addresses.
	if !o.ReadOnly {
		h, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.Kind, path, err)
		}
		_ = h.Close()
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath())
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", o.Kind, path, err)
	}
	db.SetMaxOpenConns(1)
	f.db = db
	if err := f.open(ctx); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// open takes the connection, sets it up, checks the file and creates its
// tables when it has none.
func (f *File) open(ctx context.Context) error {
	conn, err := f.db.Conn(ctx)
	if err != nil {
		return f.classify(err)
	}
	f.conn = conn
	// The order matters: exclusive locking before the first access in WAL
	// mode keeps the WAL index in memory (no -shm file to map); the file is
	// checked before anything is written to it, so a file refused is left
	// as it was.
	if err := f.pragmas(ctx, fmt.Sprintf("busy_timeout = %d", f.o.Timeout.Milliseconds()),
		"locking_mode = EXCLUSIVE", "mmap_size = 0", "trusted_schema = OFF",
		"cell_size_check = ON"); err != nil { // damaged pages found sooner, at a small cost
		return err
	}
	if !f.o.Scratch {
		if err := f.quickCheck(ctx); err != nil {
			return err
		}
	}
	if err := f.inspect(ctx); err != nil {
		return err
	}
	if f.Fresh && f.o.ReadOnly && f.o.Absent != nil {
		return fmt.Errorf("%s %s holds no tables: %w", f.o.Kind, f.path, f.o.Absent)
	}
	if f.o.ReadOnly {
		if err := f.hold(ctx); err != nil {
			return err
		}
	}
	if !f.o.ReadOnly {
		if err := f.ready(ctx); err != nil {
			return err
		}
	}
	held, err := os.Stat(f.path)
	if err != nil {
		return fmt.Errorf("%s %s: %w", f.o.Kind, f.path, err)
	}
	f.held = held
	return nil
}

// ready sets the file's journal mode, and creates the tables of a Fresh
// one: what Open writes to a file that is not ReadOnly.
func (f *File) ready(ctx context.Context) error {
	var err error
	if f.o.Scratch {
		err = f.pragmas(ctx, "journal_mode = OFF", "synchronous = OFF")
	} else {
		err = f.pragmas(ctx, "journal_mode = WAL", "synchronous = NORMAL")
	}
	if err != nil || !f.Fresh {
		return err
	}
	return f.create(ctx)
}

// Write readies a file opened ReadOnly for writing, as Open readies any
// other (WAL mode, and the tables of a Fresh one): for a look that its
// caller then keeps to write. It does nothing to a file already ready.
func (f *File) Write(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case !f.o.ReadOnly:
		return nil
	case f.conn == nil:
		return fmt.Errorf("%s %s: closed", f.o.Kind, f.path)
	}
	if err := f.ready(ctx); err != nil {
		return err
	}
	f.o.ReadOnly = false
	return nil
}

// hold takes, for a look, the lock a write would, writing nothing (exclusive
// locking mode keeps it): only a file in WAL mode is held from its first
// read, and a second process would look at another one (switched out of
// WAL by hand, or without tables) too, to be refused late, at its first
// write. An empty file's transaction is rolled back: a COMMIT would write
// its first page, and the lock is kept either way.
func (f *File) hold(ctx context.Context) error {
	end := "COMMIT"
	if fi, err := os.Stat(f.path); err != nil {
		return fmt.Errorf("%s %s: %w", f.o.Kind, f.path, err)
	} else if fi.Size() == 0 {
		end = "ROLLBACK"
	}
	if _, err := f.conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		return f.classify(err)
	}
	if _, err := f.conn.ExecContext(ctx, end); err != nil {
		return f.classify(err)
	}
	return nil
}

// quickCheck runs PRAGMA quick_check: every page of the file is read and
// the b-trees' structure checked (not the indexes' content).
func (f *File) quickCheck(ctx context.Context) error {
	rows, err := f.conn.QueryContext(ctx, "PRAGMA quick_check(5)")
	if err != nil {
		return f.classify(err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return f.classify(err)
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	if err := rows.Err(); err != nil {
		return f.classify(err)
	}
	if len(problems) > 0 {
		return f.Corrupt("quick_check: " + strings.Join(problems, "; "))
	}
	return nil
}

func (f *File) pragmas(ctx context.Context, ps ...string) error {
	for _, p := range ps {
		if _, err := f.conn.ExecContext(ctx, "PRAGMA "+p); err != nil {
			return f.classify(err)
		}
	}
	return nil
}

// MetaDDL creates MetaTable.
const MetaDDL = "CREATE TABLE " + MetaTable + " (name text PRIMARY KEY, value text NOT NULL)"

// inspect checks that a file with tables is of this kind and format, with
// exactly the tables this version creates, or notes a file without any
// (Fresh).
func (f *File) inspect(ctx context.Context) error {
	tables := map[string]string{}
	rows, err := f.conn.QueryContext(ctx, "SELECT name, coalesce(sql, '') FROM sqlite_schema WHERE type = 'table'")
	if err != nil {
		return f.classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, ddl string
		if err := rows.Scan(&name, &ddl); err != nil {
			return f.classify(err)
		}
		tables[name] = ddl
	}
	if err := rows.Err(); err != nil {
		return f.classify(err)
	}
	if len(tables) == 0 {
		f.Fresh = true
		return nil
	}
	if tables[MetaTable] != MetaDDL {
		return f.notOurs("an SQLite database of another program", nil)
	}
	var format string
	err = f.conn.QueryRowContext(ctx, "SELECT value FROM "+MetaTable+" WHERE name = 'format'").Scan(&format)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return f.Corrupt("no format in " + MetaTable)
	case err != nil:
		return f.classify(err)
	case format != f.o.Format && strings.HasPrefix(format, f.o.FormatFamily):
		return f.Corrupt(fmt.Sprintf("unknown format %q (written by a newer addrclean?)", format))
	case format != f.o.Format:
		return f.notOurs(fmt.Sprintf("an addrclean file of another kind (%q)", format), nil)
	}
	// A table changed (a damaged schema page) would turn the statements on
	// it into SQL errors, or worse, into other columns.
	if len(tables) != len(f.o.Schema)+1 {
		return f.Corrupt(fmt.Sprintf("%d tables, want %d", len(tables), len(f.o.Schema)+1))
	}
	for _, ddl := range f.o.Schema {
		if !slices.Contains(slices.Collect(maps.Values(tables)), ddl) {
			return f.Corrupt("a table of its schema is missing or changed")
		}
	}
	return nil
}

// create makes the tables of a new file, and marks it, in one transaction
// (under mu, or before Open returns).
func (f *File) create(ctx context.Context) error {
	return f.tx(ctx, func(tx *sql.Tx) error {
		for _, s := range append([]string{MetaDDL}, f.o.Schema...) {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO "+MetaTable+" (name, value) VALUES ('format', ?)", f.o.Format)
		return err
	})
}

// Path returns the file's path.
func (f *File) Path() string { return f.path }

// Replaced reports whether the file at the path is no longer the one opened
// (deleted, or replaced by another): what is written goes to a file no
// one will find.
func (f *File) Replaced() bool {
	if f.held == nil {
		return false
	}
	now, err := os.Stat(f.path)
	return err != nil || !os.SameFile(f.held, now)
}

// Tx runs fn in a transaction on the connection, committing when it
// returns nil. Errors are classified and name the file.
func (f *File) Tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tx(ctx, fn)
}

// tx is Tx under mu.
func (f *File) tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if f.conn == nil {
		return fmt.Errorf("%s %s: closed", f.o.Kind, f.path)
	}
	tx, err := f.conn.BeginTx(ctx, nil)
	if err != nil {
		return f.classify(err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return f.classify(err)
	}
	if err := tx.Commit(); err != nil {
		return f.classify(err)
	}
	return nil
}

// Do runs fn with the connection, alone.
func (f *File) Do(ctx context.Context, fn func(c *sql.Conn) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conn == nil {
		return fmt.Errorf("%s %s: closed", f.o.Kind, f.path)
	}
	if err := fn(f.conn); err != nil {
		return f.classify(err)
	}
	return nil
}

// raw runs fn with the driver's connection, alone. Statements prepared on it
// (Batch's) are used only inside raw, and closed before the File is.
func (f *File) raw(fn func(c driver.ConnPrepareContext) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conn == nil {
		return fmt.Errorf("%s %s: closed", f.o.Kind, f.path)
	}
	err := f.conn.Raw(func(dc any) error {
		c, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return fmt.Errorf("the driver's connection (%T) does not prepare with a context", dc)
		}
		return fn(c)
	})
	return f.classify(err)
}

// Close checkpoints the WAL into the file and releases it and its lock.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	if f.conn != nil {
		errs = append(errs, f.conn.Close())
		f.conn = nil
	}
	if f.db != nil {
		errs = append(errs, f.db.Close())
		f.db = nil
	}
	if err := errors.Join(errs...); err != nil {
		return f.classify(err)
	}
	return nil
}

// RemoveSidecars removes the WAL and index files of the database at path.
func RemoveSidecars(path string) {
	for _, s := range []string{"-wal", "-shm", "-journal"} {
		_ = os.Remove(path + s)
	}
}

// Remove deletes the file at path with its WAL and index files.
func Remove(path string) error {
	err := os.Remove(path)
	RemoveSidecars(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// SetAside renames the file at path, with its WAL, to path.damaged-<time>
// (a free name) and returns the new name: nothing is deleted, and the
// path is free for a new file.
func SetAside(path, why string) (string, error) {
	stamp := time.Now().UTC().Format("20060102T150405Z")
	to := path + "." + why + "-" + stamp
	for i := 2; ; i++ {
		if _, err := os.Lstat(to); errors.Is(err, fs.ErrNotExist) {
			break
		}
		to = fmt.Sprintf("%s.%s-%s-%d", path, why, stamp, i)
	}
	if err := os.Rename(path, to); err != nil {
		return "", err
	}
	for _, s := range []string{"-wal", "-shm", "-journal"} {
		if err := os.Rename(path+s, to+s); err != nil && !errors.Is(err, fs.ErrNotExist) {
			_ = os.Remove(path + s)
		}
	}
	return to, nil
}

// Error is an error about a file that is damaged or not of its kind; it
// wraps Options.Corrupt (and NotOurs), and says what to do.
type Error struct {
	o            *Options
	path, detail string
	notOurs      bool
	cause        error // ErrOldBbolt, or nil
}

func (e *Error) Error() string {
	hint := ""
	if e.o.Hint != nil {
		hint = e.o.Hint(e.path, e.notOurs)
	}
	return fmt.Sprintf("%s %s: %v: %s%s", e.o.Kind, e.path, e.o.Corrupt, e.detail, hint)
}

// Is reports the errors e wraps.
func (e *Error) Is(target error) bool {
	return target == e.o.Corrupt || (e.notOurs && target == e.o.NotOurs) || (e.cause != nil && target == e.cause)
}

// Corrupt is the error about damage to the file that detail describes.
func (f *File) Corrupt(detail string) error {
	return &Error{o: &f.o, path: f.path, detail: detail}
}

func (f *File) notOurs(detail string, cause error) error {
	return &Error{o: &f.o, path: f.path, detail: detail, notOurs: true, cause: cause}
}

// SQLite's primary result codes that classify sorts.
const (
	codeBusy    = 5
	codeLocked  = 6
	codeIOErr   = 10
	codeCorrupt = 11
	codeNotADB  = 26
)

// classify names the file in err, and turns SQLite's errors about damage
// (and the short reads and I/O errors a file cut under the process gives)
// into Corrupt, and its busy errors into Locked.
func (f *File) classify(err error) error {
	var (
		se *sqlite.Error
		fe *Error
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fe), errors.Is(err, f.o.Locked), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, &se):
		switch se.Code() & 0xff {
		case codeCorrupt, codeNotADB, codeIOErr:
			return &Error{o: &f.o, path: f.path, detail: se.Error()}
		case codeBusy, codeLocked:
			if f.o.Timeout > 0 {
				return fmt.Errorf("%s %s is %w (waited %s)", f.o.Kind, f.path, f.o.Locked, f.o.Timeout)
			}
			return fmt.Errorf("%s %s: %w", f.o.Kind, f.path, f.o.Locked)
		}
	}
	return fmt.Errorf("%s %s: %w", f.o.Kind, f.path, err)
}

// IsCode reports whether err is an SQLite error with the primary result
// code c (for callers that tell a full disk from damage).
func IsCode(err error, c int) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == c
}
