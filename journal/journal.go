package journal

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/internal/sqlitefile"
)

// Version is the format version: 1 was the text format, 2 bbolt, 3 is
// SQLite.
const Version = 3

// ErrLocked is wrapped by Open's and Create's error when another process has
// the journal open.
var ErrLocked = errors.New("in use by another addrclean run")

// ErrCorrupt is wrapped by Open's error when the file is not an addrclean
// journal or cannot be read.
var ErrCorrupt = errors.New("not a readable addrclean journal")

// ErrOldFormat is wrapped, with ErrCorrupt, by Open's error about a journal
// an older addrclean wrote (the text format, or bbolt).
var ErrOldFormat = errors.New("written by an older addrclean")

// errNotJournal is wrapped, with ErrCorrupt, by errors about a file that
// is not a journal at all.
var errNotJournal = errors.New("not a journal")

// Format is the value of format in the file's addrclean_meta table.
var Format = "addrclean-journal/" + strconv.Itoa(Version)

// schema is the journal's table of rows; addrclean_meta holds the header
// (FORMAT.md).
var schema = []string{`CREATE TABLE journal_rows (
	row      integer PRIMARY KEY, -- the input's data row number, 1-based
	addr_key integer NOT NULL,    -- FNV-1a of the normalised address, as a signed 64-bit integer
	flags    integer NOT NULL,    -- 1: the answer came from the cache; 2: the service refused the row
	answer   text,                -- the service's JSON; NULL for a refused row
	kind     text,                -- a refused row's kind and reason; NULL otherwise
	reason   text,
	crc      integer NOT NULL     -- CRC-32C of the record (FORMAT.md)
)`}

// cacheKiB is the journal's page cache (PRAGMA cache_size), in KiB.
const cacheKiB = 256

// Names in addrclean_meta.
const (
	headerKey = "header" // → header as JSON
	runsKey   = "runs"   // → runs, decimal
	doneKey   = "done"   // → rows written, present once a run finished
)

// fileOptions describe journals to sqlitefile. Open opens them ReadOnly:
// a look (a dry run, a run refused before its first row) writes nothing,
// not even the journal mode of one switched out of WAL by hand, nor the
// tables of a file without any.
var fileOptions = sqlitefile.Options{
	Kind: "journal", Format: Format, FormatFamily: "addrclean-journal/", Schema: schema,
	Corrupt: ErrCorrupt, NotOurs: errNotJournal, Locked: ErrLocked, ReadOnly: true,
}

// Meta is what a journal was written for: resuming with a different input or
// different options that change answers would mix two runs' results.
type Meta struct {
	// Input identifies the input file.
	Input Input `json:"input"`
	// Options are the settings that change results (mapping, country,
	// language, service), by name.
	Options map[string]string `json:"options"`
}

// Input identifies an input file by content.
type Input struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Diff lists, for people, how m (the journal's) differs from now (the run
// about to resume). It is empty when they agree.
func (m Meta) Diff(now Meta) []string {
	var d []string
	if m.Input.Size != now.Input.Size || m.Input.SHA256 != now.Input.SHA256 {
		d = append(d, fmt.Sprintf("the input file changed since the interrupted run (%s: %d bytes then, %d bytes now; content differs)",
			now.Input.Path, m.Input.Size, now.Input.Size))
	}
	keys := slices.AppendSeq(slices.Collect(maps.Keys(m.Options)), maps.Keys(now.Options))
	slices.Sort(keys)
	for _, k := range slices.Compact(keys) {
		if a, b := m.Options[k], now.Options[k]; a != b {
			d = append(d, fmt.Sprintf("%s was %s, now %s", k, show(a), show(b)))
		}
	}
	return d
}

func show(s string) string {
	if s == "" {
		return "not set"
	}
	return strconv.Quote(s)
}

// Entry is one finished row.
type Entry struct {
	// Row is the input row number.
	Row int
	// Key is a hash of the row's normalised address: a record is used only
	// for a row with the same address.
	Key uint64
	// Response is the answer; nil for a refused row.
	Response *api.VerifyResponse
	// Answer, when not nil, is JSON that api.DecodeVerifyResponse decodes
	// to Response (the service's own bytes, or Response as
	// api.AppendVerifyResponse encodes it), which Record then stores
	// instead of encoding Response again; Record keeps it until it is
	// committed, so it must not be changed. Lookup leaves it nil.
	Answer []byte
	// Err and Kind are the reason and kind of a row the service refused.
	Err, Kind string
	// FromCache is true when the answer came from the persistent cache.
	FromCache bool
	// Free is true when the row cost no call although the service answered
	// it (the embedded service): Record queues it, as one from the cache.
	// It is not stored.
	Free bool
}

// Info describes a journal found by Open.
type Info struct {
	Path    string
	Meta    Meta
	Created time.Time
	// Rows is the number of intact row records.
	Rows int64
	// Runs is the number of runs that wrote to the file.
	Runs int
	// Complete is true when the last run wrote every row.
	Complete bool
	// Damaged is the number of row records that fail their checksum: they
	// are skipped, and their rows verified again.
	Damaged int64
	// Updated is the file's modification time.
	Updated time.Time
	// Headless is true for a file that holds no header: a run killed
	// while it created the journal. It holds no rows; Start replaces it.
	Headless bool
}

// header is the JSON of the header record.
type header struct {
	Created time.Time `json:"created"`
	Meta    Meta      `json:"meta"`
}

// Journal is an open journal file, locked against other runs. Record and
// Lookup may be called concurrently with each other (on a headless one
// from Open, after Start).
type Journal struct {
	path   string
	f      *sqlitefile.File
	batch  *sqlitefile.Batch[record]
	lookup *sql.Stmt
	info   Info

	// writeMu serialises the first write; ready is set once the file is
	// ready for writing (sqlitefile.File.Write) and its statements are
	// prepared (a file Open found without tables has none until then).
	writeMu sync.Mutex
	ready   atomic.Bool

	rows atomic.Int64 // row records written by this process
	// maxRow is at least the highest row number in the file: Lookup of a
	// row above it needs no query (a new journal's every row, in a run).
	maxRow  atomic.Int64
	failed  atomic.Bool // a write failed
	broken  atomic.Pointer[error]
	changed int64 // Lookup only
}

// note remembers err when it says the file is damaged, and returns it.
func (j *Journal) note(err error) error {
	if errors.Is(err, ErrCorrupt) {
		j.broken.CompareAndSwap(nil, &err)
	}
	return err
}

// Broken returns the first error met while the journal was open that says
// its file is damaged (cut short or overwritten under the run): its rows
// can no longer be trusted. Nil when there was none.
func (j *Journal) Broken() error {
	if p := j.broken.Load(); p != nil {
		return *p
	}
	return nil
}

// Open opens and locks the journal at path and reads what it holds. A
// missing file is an error wrapping fs.ErrNotExist; a file that cannot be
// read wraps ErrCorrupt (and ErrOldFormat for a journal of an older
// addrclean); a file another run has open wraps ErrLocked. Nothing is
// written to the file, not even its journal mode, until Start, Continue,
// Record or Complete (an older addrclean's torn first line, which holds no
// row, is removed; the -wal of a killed run is folded in at Close, as by
// any open). ctx bounds the opening and the reading (a cancelled one stops
// them with its error).
func Open(ctx context.Context, path string) (*Journal, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	o := fileOptions
	switch old, torn := oldFormat(path); {
	case torn:
		// The text format's first line cut short: a run of an older
		// addrclean killed while it created the journal. It holds no rows,
		// and is replaced by an empty journal.
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("journal: %w", err)
		}
		o.ReadOnly = false
	case old:
		// Callers add what to do to start afresh (delete it).
		return nil, fmt.Errorf("journal %s: %w (%w: the text format of earlier versions; "+
			"resume the run with the older addrclean to keep its rows)", path, ErrOldFormat, ErrCorrupt)
	}
	j, err := openFile(ctx, path, "; resume the run with the older addrclean to keep its rows", o)
	if err != nil {
		return nil, err
	}
	j.info = Info{Path: path, Updated: fi.ModTime()}
	if err := j.read(ctx); err != nil {
		_ = j.Close()
		return nil, err
	}
	return j, nil
}

// Headless reports a file at path that Open would find headless and change
// before reading it: an older addrclean's torn first line (removed). It
// holds no rows; a look that must change nothing (a dry run) skips it.
func Headless(path string) bool {
	_, torn := oldFormat(path)
	return torn
}

// openFile opens the SQLite journal at path with o and prepares its
// statements; a bbolt journal of an older addrclean is refused, hint
// saying what to do.
func openFile(ctx context.Context, path, hint string, o sqlitefile.Options) (*Journal, error) {
	if s, _ := sqlitefile.SniffFile(path); s == sqlitefile.Bbolt {
		return nil, fmt.Errorf("journal %s: %w (%w: the bbolt format of versions before SQLite%s)", path, ErrOldFormat, ErrCorrupt, hint)
	}
	f, err := sqlitefile.Open(ctx, path, o)
	if err != nil {
		return nil, err
	}
	j := &Journal{path: path, f: f}
	j.ready.Store(!o.ReadOnly)
	if f.Fresh && o.ReadOnly {
		return j, nil // no tables to prepare on: write does, once it made them
	}
	if err := j.prepare(ctx); err != nil {
		_ = f.Close()
		return nil, err
	}
	return j, nil
}

// write readies the file for writing once: the first write of a journal
// from Open sets its journal mode (WAL), and makes its tables and prepares
// its statements if it had none. Then it is one atomic load.
func (j *Journal) write() error {
	if j.ready.Load() {
		return nil
	}
	j.writeMu.Lock()
	defer j.writeMu.Unlock()
	if j.ready.Load() {
		return nil
	}
	if err := j.f.Write(context.Background()); err != nil {
		return j.note(err)
	}
	if j.batch == nil {
		if err := j.prepare(context.Background()); err != nil {
			return err
		}
	}
	j.ready.Store(true)
	return nil
}

// prepare prepares the statements of the journal's file, which holds its
// tables.
func (j *Journal) prepare(ctx context.Context) error {
	f := j.f
	err := f.Do(ctx, func(c *sql.Conn) error {
		// A run appends rows at the right edge of the table and a resumed
		// one reads them back in order: neither comes back to a page it
		// left. SQLite's default page cache, 2 MiB, was a tenth of a live
		// run's memory.
		if _, err := c.ExecContext(ctx, fmt.Sprintf("PRAGMA cache_size = -%d", cacheKiB)); err != nil {
			return err
		}
		var err error
		j.lookup, err = c.PrepareContext(ctx, "SELECT addr_key, flags, answer, kind, reason, crc FROM journal_rows WHERE row = ?")
		return err
	})
	if err != nil {
		return err
	}
	j.batch, err = sqlitefile.NewBatch(f, 0, 0, `INSERT INTO journal_rows (row, addr_key, flags, answer, kind, reason, crc) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (row) DO UPDATE SET addr_key = excluded.addr_key, flags = excluded.flags, answer = excluded.answer,
	kind = excluded.kind, reason = excluded.reason, crc = excluded.crc`,
		func(r record) []any { return []any{r.row, r.key, r.flags, r.answer, r.kind, r.reason, r.crc} })
	if err != nil {
		_ = j.lookup.Close()
		j.lookup = nil
		return err
	}
	return nil
}

// read fills in the header and counts the records, checking each.
func (j *Journal) read(ctx context.Context) error {
	if j.f.Fresh {
		j.info.Headless = true // an empty file, or an SQLite file without tables
		return nil
	}
	return j.f.Do(ctx, func(c *sql.Conn) error {
		meta, err := readMeta(ctx, c)
		if err != nil {
			return err
		}
		hb, ok := meta[headerKey]
		if !ok {
			j.info.Headless = true // a run killed while it created the journal
			return nil
		}
		var h header
		runs, rerr := strconv.Atoi(meta[runsKey])
		if err := json.Unmarshal([]byte(hb), &h); err != nil || rerr != nil || runs < 1 {
			return j.f.Corrupt("the header is damaged")
		}
		j.info.Meta, j.info.Created, j.info.Runs = h.Meta, h.Created, runs
		_, j.info.Complete = meta[doneKey]
		rows, err := c.QueryContext(ctx, "SELECT row, addr_key, flags, answer, kind, reason, crc FROM journal_rows")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r record
			if err := rows.Scan(&r.row, &r.key, &r.flags, &r.answer, &r.kind, &r.reason, &r.crc); err != nil {
				return err
			}
			j.raiseMax(r.row)
			if _, ok := decodeRecord(r); ok {
				j.info.Rows++
			} else {
				j.info.Damaged++
			}
		}
		return rows.Err()
	})
}

func readMeta(ctx context.Context, c *sql.Conn) (map[string]string, error) {
	rows, err := c.QueryContext(ctx, "SELECT name, value FROM "+sqlitefile.MetaTable)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		m[k] = v
	}
	return m, rows.Err()
}

// oldFormat tells a journal of the text format (version 1): its first line
// is "<8 hex digits> <JSON>". torn is true when the file ends inside that
// line.
func oldFormat(path string) (old, torn bool) {
	f, err := os.Open(path)
	if err != nil {
		return false, false // Open says why
	}
	defer f.Close()
	b := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, b)
	whole := n < len(b)
	if b = b[:n]; len(b) < 10 || b[8] != ' ' || b[9] != '{' {
		return false, false
	}
	for _, c := range b[:8] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false, false
		}
	}
	return true, whole && !bytes.Contains(b, []byte{'\n'})
}

// Create creates the journal at path for a run with meta (emptying a
// journal there), locked against other runs. ctx bounds the opening; the
// writes, here and later, do not take one (see Record).
func Create(ctx context.Context, path string, meta Meta) (*Journal, error) {
	_, before := os.Stat(path)
	o := fileOptions
	o.ReadOnly = false
	j, err := openFile(ctx, path, "", o)
	if err == nil {
		if err = j.Start(meta); err != nil {
			_ = j.Close()
		}
	}
	// A file this call made and could not finish holds no row: leave none
	// (a run stopped as it began left an empty journal, and the directory
	// made for it could not go). Not when another run holds the file: it
	// made it.
	if err != nil && errors.Is(before, fs.ErrNotExist) && !errors.Is(err, ErrLocked) {
		_ = os.Remove(path)
		sqlitefile.RemoveSidecars(path)
	}
	if err != nil {
		return nil, err
	}
	return j, nil
}

// Info describes what Open found, with the rows recorded since.
func (j *Journal) Info() Info {
	i := j.info
	i.Rows += j.rows.Load()
	return i
}

// Path is the journal's file name.
func (j *Journal) Path() string { return j.path }

// setMeta writes name = value in the header table.
func setMeta(tx *sql.Tx, name, value string) error {
	_, err := tx.Exec("INSERT INTO "+sqlitefile.MetaTable+" (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value", name, value)
	return err
}

// Start discards what the journal holds and begins it afresh for a run with
// meta.
func (j *Journal) Start(meta Meta) error {
	now := time.Now().UTC()
	hb, err := json.Marshal(header{Created: now, Meta: meta})
	if err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	if err := j.write(); err != nil {
		return err
	}
	if err := j.batch.Flush(); err != nil {
		return err
	}
	err = j.f.Tx(context.Background(), func(tx *sql.Tx) error {
		if _, err := tx.Exec("DELETE FROM journal_rows"); err != nil {
			return err
		}
		if _, err := tx.Exec("DELETE FROM "+sqlitefile.MetaTable+" WHERE name = ?", doneKey); err != nil {
			return err
		}
		return errors.Join(setMeta(tx, headerKey, string(hb)), setMeta(tx, runsKey, "1"))
	})
	if err != nil {
		return err
	}
	j.info = Info{Path: j.path, Meta: meta, Created: now, Runs: 1, Updated: now}
	j.rows.Store(0)
	j.maxRow.Store(0)
	return nil
}

// Continue keeps the records for Lookup and counts one more run.
func (j *Journal) Continue() error {
	if j.info.Headless {
		return fmt.Errorf("journal %s: no intact header to continue from: %w", j.path, ErrCorrupt)
	}
	if err := j.write(); err != nil {
		return err
	}
	err := j.f.Tx(context.Background(), func(tx *sql.Tx) error {
		if _, err := tx.Exec("DELETE FROM "+sqlitefile.MetaTable+" WHERE name = ?", doneKey); err != nil {
			return err
		}
		return setMeta(tx, runsKey, strconv.Itoa(j.info.Runs+1))
	})
	if err != nil {
		return err
	}
	j.info.Runs++
	j.info.Complete = false
	return nil
}

// Record keeps a finished row. It returns once the row is committed, in a
// transaction it shares with the rows recorded meanwhile (group commit): a
// record stands for a paid call, and a process killed after Record
// returned keeps it. The error of a failed commit is returned by this and
// every later Record.
//
// A row the cache answered (FromCache), or that cost no call (Free), is
// queued and committed with the next commit (a paid row's, or a batch's:
// sqlitefile.DefaultBatchRows rows or DefaultBatchEvery), and Record
// returns at once. A kill may lose it; the resumed run finds its answer in
// the cache again, or asks the free service. Waiting for a commit of its own made a run over a warm
// cache, whose cache stage records its rows one after another, commit once
// a row: twice the wall time of the same run without a journal.
//
// Record, like Start, Continue and Complete, takes no ctx and writes under
// context.Background on purpose: the rows a cancelled run (Ctrl-C) already
// paid for must still land in the file, so that its resume does not pay
// for them again.
func (j *Journal) Record(e Entry) error {
	if e.Row < 1 {
		return fmt.Errorf("journal %s: row %d: want a positive row number", j.path, e.Row)
	}
	if err := j.write(); err != nil {
		j.failed.Store(true)
		return err
	}
	j.raiseMax(int64(e.Row)) // before the record can be seen
	r, add := encodeRecord(e), j.batch.AddWait
	if e.FromCache || e.Free {
		r.queued, add = true, j.batch.Add
	}
	if err := add(r); err != nil {
		j.failed.Store(true)
		return j.note(err)
	}
	j.rows.Add(1)
	return nil
}

// Complete records that the run wrote every one of its rows rows.
func (j *Journal) Complete(rows int64) error {
	if err := j.write(); err != nil {
		return err
	}
	if err := j.batch.Flush(); err != nil {
		return err
	}
	err := j.f.Tx(context.Background(), func(tx *sql.Tx) error { return setMeta(tx, doneKey, strconv.FormatInt(rows, 10)) })
	if err != nil {
		return err
	}
	j.info.Complete = true
	return nil
}

// Lookup returns the journalled result of row when the journal holds one for
// the same address key. A record whose key differs is not used (the row is
// verified again) and counted in Changed.
func (j *Journal) Lookup(row int, key uint64) (Entry, bool, error) {
	var (
		r      record
		queued bool
	)
	if j.batch == nil || int64(row) > j.maxRow.Load() {
		// A file without tables, or a row above any recorded (Record
		// raises maxRow before it queues the row): no row, and no scan of
		// the queued rows for each row of a new journal.
		return Entry{}, false, nil
	}
	j.batch.Pending(func(rs []record) {
		for i := len(rs) - 1; i >= 0; i-- {
			if rs[i].row == int64(row) {
				r, queued = rs[i], true
				return
			}
		}
	})
	if !queued {
		r.row = int64(row)
		err := j.f.Do(context.Background(), func(*sql.Conn) error {
			return j.lookup.QueryRow(row).Scan(&r.key, &r.flags, &r.answer, &r.kind, &r.reason, &r.crc)
		})
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return Entry{}, false, nil
		case err != nil:
			return Entry{}, false, j.note(err)
		}
	}
	e, ok := decodeRecord(r) // a damaged one Open counted
	switch {
	case !ok:
		return Entry{}, false, nil
	case e.Key != key:
		j.changed++
		return Entry{}, false, nil
	}
	return e, true, nil
}

// Commits returns the number of commits the journal made (for tests and
// benchmarks).
func (j *Journal) Commits() int64 {
	if j.batch == nil {
		return 0
	}
	return j.batch.Commits()
}

// raiseMax makes maxRow at least row.
func (j *Journal) raiseMax(row int64) {
	for {
		m := j.maxRow.Load()
		if row <= m || j.maxRow.CompareAndSwap(m, row) {
			return
		}
	}
}

// Failed reports that a write to the journal failed: what it holds may be
// worth keeping even if no row was counted.
func (j *Journal) Failed() bool { return j.failed.Load() }

// Changed is the number of records not used because the row's address
// differs from the journalled one.
func (j *Journal) Changed() int64 { return j.changed }

// Replaced reports that the file at the journal's path is no longer the one
// opened (deleted or replaced during the run): the rows written since are
// in a file no one will find.
func (j *Journal) Replaced() bool { return j.f.Replaced() }

// Close commits the rows waiting and closes the journal, keeping the file.
func (j *Journal) Close() error {
	var err error
	if j.batch != nil {
		err = j.batch.Close()
	}
	if err != nil {
		j.failed.Store(true)
		// Record counted the queued rows the failed commit lost (once: a
		// second Close finds them uncounted).
		j.batch.Pending(func(rs []record) {
			for i := range rs {
				if rs[i].queued {
					rs[i].queued = false
					j.rows.Add(-1)
				}
			}
		})
	}
	if j.lookup != nil {
		_ = j.lookup.Close()
	}
	return j.note(errors.Join(err, j.f.Close()))
}

// Remove closes the journal and deletes the file (with its WAL). A file
// that another took the place of while the journal was open is not
// touched.
func (j *Journal) Remove() error {
	// Removed while still locked, so no other run can open it halfway.
	if !j.Replaced() {
		if err := os.Remove(j.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			_ = j.Close()
			return fmt.Errorf("journal %s: %w", j.path, err)
		}
	}
	err := j.Close()
	if _, serr := os.Stat(j.path); errors.Is(serr, fs.ErrNotExist) {
		sqlitefile.RemoveSidecars(j.path)
	}
	return err
}

// Delete removes the journal file at path with its WAL, if any: for a
// journal Open refused.
func Delete(path string) error { return sqlitefile.Remove(path) }

// A row record is stored in the columns of journal_rows; its CRC-32C
// (Castagnoli) covers
//
//	row (8 bytes, big-endian) | address key (8 bytes, big-endian) | flags (1 byte) | body
//
// with the body the answer as the service's JSON, or for a refused row
// (flagRefused) its kind, a NUL byte and its reason: a changed byte in any
// column, or a damaged page that hands one row's record to another, fails
// it.
type record struct {
	row, key, flags      int64
	answer, kind, reason sql.NullString
	crc                  int64
	queued               bool // not stored: Record returned before its commit
}

const (
	flagCached  = 1
	flagRefused = 2
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// head is the CRC of the record's row, key and flags.
func (r record) head() uint32 {
	var h [17]byte
	binary.BigEndian.PutUint64(h[:], uint64(r.row))
	binary.BigEndian.PutUint64(h[8:], uint64(r.key))
	h[16] = byte(r.flags)
	return crc32.Update(0, crcTable, h[:])
}

func (r record) sum() int64 {
	c := r.head()
	if r.flags&flagRefused != 0 {
		c = crc32.Update(c, crcTable, []byte(r.kind.String))
		c = crc32.Update(c, crcTable, []byte{0})
		return int64(crc32.Update(c, crcTable, []byte(r.reason.String)))
	}
	return int64(crc32.Update(c, crcTable, []byte(r.answer.String)))
}

// encodeRecord returns the stored record of e.
func encodeRecord(e Entry) record {
	r := record{row: int64(e.Row), key: int64(e.Key)}
	if e.FromCache {
		r.flags |= flagCached
	}
	if e.Response != nil {
		answer := e.Answer
		if answer == nil {
			answer = api.AppendVerifyResponse(make([]byte, 0, 2048), e.Response)
		}
		// The bytes are not changed once given (Entry.Answer): the record
		// shares them instead of copying 2 KB a row.
		r.answer = sql.NullString{String: unsafe.String(unsafe.SliceData(answer), len(answer)), Valid: true}
		// From the bytes: sum would copy the string back to bytes.
		r.crc = int64(crc32.Update(r.head(), crcTable, answer))
		return r
	}
	r.flags |= flagRefused
	r.kind = sql.NullString{String: e.Kind, Valid: true}
	r.reason = sql.NullString{String: e.Err, Valid: true}
	r.crc = r.sum()
	return r
}

// decodeRecord checks the record r and decodes it; ok is false for a
// damaged record, and for one with neither an answer nor a refusal (the row
// is verified again).
func decodeRecord(r record) (e Entry, ok bool) {
	if r.crc != r.sum() || r.row < 1 || r.flags&^(flagCached|flagRefused) != 0 {
		return Entry{}, false
	}
	e = Entry{Row: int(r.row), Key: uint64(r.key), FromCache: r.flags&flagCached != 0}
	if r.flags&flagRefused != 0 {
		if r.answer.Valid || !r.kind.Valid || !r.reason.Valid {
			return Entry{}, false
		}
		e.Kind, e.Err = r.kind.String, r.reason.String
		return e, e.Kind != "" && e.Err != ""
	}
	if !r.answer.Valid || r.kind.Valid || r.reason.Valid {
		return Entry{}, false
	}
	resp, err := api.DecodeVerifyResponse([]byte(r.answer.String))
	if err != nil {
		return Entry{}, false
	}
	e.Response = resp
	return e, true
}
