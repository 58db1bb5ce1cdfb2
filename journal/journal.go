// Package journal keeps the finished rows of a run in a sidecar file, so that
// an interrupted run (Ctrl-C, kill -9, a reboot, a service outage) can be
// continued by 'addrclean run --resume' without paying again for the rows
// already verified.
//
// The file is a bbolt file, opened, checked and written through
// internal/boltfile as the result cache is (the layout is in FORMAT.md
// beside this file): a header (Meta: what was read and how), the number of
// runs that wrote to it, a done mark once a run has written every row, and
// a bucket of row records keyed by row number. Every record is committed
// before Record returns, rows that finish together sharing one transaction
// (group commit), so a process killed at any instant keeps every row it
// reported and a resumed run finds a file that opens cleanly. A record
// whose checksum fails is skipped and counted, its row verified again; a
// file bbolt cannot read is refused (ErrCorrupt), never a crash.
//
// Journals of the text format of earlier versions are refused with
// ErrOldFormat.
package journal

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/internal/boltfile"
)

// Version is the format version written in the header: 1 was the text
// format, 2 is bbolt.
const Version = 2

// ErrLocked is wrapped by Open's and Create's error when another process has
// the journal open.
var ErrLocked = errors.New("in use by another addrclean run")

// ErrCorrupt is wrapped by Open's error when the file is not an addrclean
// journal or cannot be read.
var ErrCorrupt = errors.New("not a readable addrclean journal")

// ErrOldFormat is wrapped, with ErrCorrupt, by Open's error about a journal
// an older addrclean wrote in its text format.
var ErrOldFormat = errors.New("written by an older addrclean")

// errNotJournal is wrapped, with ErrCorrupt, by errors about a file that
// is not a journal at all.
var errNotJournal = errors.New("not a journal")

// Names inside the file.
var (
	metaBucket = []byte("addrclean-journal") // and "format" → "addrclean-journal/2"
	headerKey  = []byte("header")            // → header as JSON
	runsKey    = []byte("runs")              // → runs, 8 bytes big-endian
	doneKey    = []byte("done")              // → rows written, present once a run finished
	rowsBucket = []byte("rows")              // row number, 8 bytes big-endian → record
)

// fileOptions describe journals to boltfile.
var fileOptions = boltfile.Options{
	Kind: "journal", Marker: metaBucket, Format: []byte("addrclean-journal/" + strconv.Itoa(Version)),
	Corrupt: ErrCorrupt, NotOurs: errNotJournal, Locked: ErrLocked,
	// A commit is in the file when Record returns, safe from kill -9;
	// waiting for the disk on each would cost about 2.5 ms per group of
	// rows, most of an embedded run's throughput.
	SyncEvery: time.Second,
	InOrder:   true, // rows finish at most a few workers out of order
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
	// Err and Kind are the reason and kind of a row the service refused.
	Err, Kind string
	// FromCache is true when the answer came from the persistent cache.
	FromCache bool
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
// Lookup may be called concurrently with each other.
type Journal struct {
	path string
	db   *boltfile.DB
	info Info

	rows    atomic.Int64 // row records written by this process
	failed  atomic.Bool  // a write failed
	changed int64        // Lookup only
}

// Open opens and locks the journal at path and reads what it holds. A
// missing file is an error wrapping fs.ErrNotExist; a file that cannot be
// read wraps ErrCorrupt (and ErrOldFormat for a journal of an older
// addrclean); a file another run has open wraps ErrLocked. Nothing is
// changed until Start or Continue.
func Open(path string) (*Journal, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	var damaged int64
	o := fileOptions
	o.Entry = func(k, v []byte) {
		if !sound(k, v) {
			damaged++
		}
	}
	switch old, torn := oldFormat(path); {
	case torn:
		// The text format's first line cut short: a run of an older
		// addrclean killed while it created the journal. It holds no rows.
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("journal: %w", err)
		}
	case old:
		// Callers add what to do to start afresh (delete it).
		return nil, fmt.Errorf("journal %s: %w (%w: the text format of earlier versions; "+
			"resume the run with the older addrclean to keep its rows)", path, ErrOldFormat, ErrCorrupt)
	}
	db, err := boltfile.Open(path, o)
	if err != nil {
		return nil, err
	}
	j := &Journal{path: path, db: db}
	j.info = Info{Path: path, Updated: fi.ModTime(), Damaged: damaged, Headless: db.Fresh()}
	if db.Fresh() {
		return j, nil // bbolt wrote the empty file; the header never came
	}
	err = db.View(func(tx *bolt.Tx) error {
		var h header
		meta := tx.Bucket(metaBucket)
		runs, rows := meta.Get(runsKey), tx.Bucket(rowsBucket)
		if err := json.Unmarshal(meta.Get(headerKey), &h); err != nil || len(runs) != 8 || rows == nil {
			return db.Corrupt("the header is damaged")
		}
		j.info.Meta, j.info.Created = h.Meta, h.Created
		j.info.Runs = int(binary.BigEndian.Uint64(runs))
		j.info.Complete = meta.Get(doneKey) != nil
		j.info.Rows = int64(rows.Stats().KeyN) - damaged
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return j, nil
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
// journal there), locked against other runs.
func Create(path string, meta Meta) (*Journal, error) {
	db, err := boltfile.Open(path, fileOptions)
	if err != nil {
		return nil, err
	}
	j := &Journal{path: path, db: db}
	if err := j.Start(meta); err != nil {
		_ = db.Close()
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

// Start discards what the journal holds and begins it afresh for a run with
// meta. (bbolt reuses the pages of the rows discarded; the file does not
// shrink.)
func (j *Journal) Start(meta Meta) error {
	now := time.Now().UTC()
	hb, err := json.Marshal(header{Created: now, Meta: meta})
	if err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	err = j.db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{metaBucket, rowsBucket} {
			if err := tx.DeleteBucket(b); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
				return err
			}
		}
		m, err := j.db.Mark(tx)
		if err != nil {
			return err
		}
		_, err = tx.CreateBucket(rowsBucket)
		return errors.Join(err, m.Put(headerKey, hb), m.Put(runsKey, be64(1)))
	})
	if err != nil {
		return err
	}
	j.info = Info{Path: j.path, Meta: meta, Created: now, Runs: 1, Updated: now}
	j.rows.Store(0)
	return nil
}

// Continue keeps the records for Lookup and counts one more run.
func (j *Journal) Continue() error {
	if j.info.Headless {
		return fmt.Errorf("journal %s: no intact header to continue from: %w", j.path, ErrCorrupt)
	}
	err := j.db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(metaBucket)
		return errors.Join(meta.Put(runsKey, be64(uint64(j.info.Runs)+1)), meta.Delete(doneKey))
	})
	if err != nil {
		return err
	}
	j.info.Runs++
	j.info.Complete = false
	return nil
}

// Record keeps a finished row. It returns once the row is committed, in a
// transaction it may share with rows finishing at the same time: a process
// killed after Record returned keeps the row.
func (j *Journal) Record(e Entry) error {
	if e.Row < 1 {
		return fmt.Errorf("journal %s: row %d: want a positive row number", j.path, e.Row)
	}
	k := be64(uint64(e.Row))
	if err := j.db.Put(rowsBucket, k, encodeRecord(k, e)); err != nil {
		j.failed.Store(true)
		return err
	}
	j.rows.Add(1)
	return nil
}

// Complete records that the run wrote every one of its rows rows.
func (j *Journal) Complete(rows int64) error {
	err := j.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(metaBucket).Put(doneKey, be64(uint64(rows))) })
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
		e     Entry
		found bool
	)
	err := j.db.View(func(tx *bolt.Tx) error {
		k := be64(uint64(row))
		if v := tx.Bucket(rowsBucket).Get(k); v != nil {
			e, found = decodeRecord(k, v) // a damaged one Open counted
		}
		return nil
	})
	switch {
	case err != nil:
		return Entry{}, false, err
	case !found:
		return Entry{}, false, nil
	case e.Key != key:
		j.changed++
		return Entry{}, false, nil
	}
	return e, true, nil
}

// Failed reports that a write to the journal failed: what it holds may be
// worth keeping even if no row was counted.
func (j *Journal) Failed() bool { return j.failed.Load() }

// Changed is the number of records not used because the row's address
// differs from the journalled one.
func (j *Journal) Changed() int64 { return j.changed }

// Close syncs and closes the journal, keeping the file.
func (j *Journal) Close() error { return j.db.Close() }

// Remove closes the journal and deletes the file.
func (j *Journal) Remove() error {
	// Removed while still locked, so no other run can open it halfway.
	if err := os.Remove(j.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		_ = j.Close()
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	return j.Close()
}

func be64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// A row record is
//
//	version (1 byte) | CRC-32C (4 bytes) | address key (8 bytes) | flags (1 byte) | body
//
// sealed by boltfile.Seal (the checksum covers the row number, the record's
// key in bbolt, too), with the body the answer as the service's JSON, or for
// a refused row (flagRefused) its kind, a NUL byte and its reason.
const (
	recVersion  = 1
	recHeader   = boltfile.SealSize + 9
	flagCached  = 1
	flagRefused = 2
)

// sound reports whether the record v under k passes its checksum.
func sound(k, v []byte) bool {
	return len(k) == 8 && len(v) > recHeader && v[0] == recVersion && boltfile.Sealed(k, v)
}

// encodeRecord returns the stored record of e under the key k.
func encodeRecord(k []byte, e Entry) []byte {
	v := make([]byte, recHeader, recHeader+2048)
	v[0] = recVersion
	binary.BigEndian.PutUint64(v[boltfile.SealSize:], e.Key)
	if e.FromCache {
		v[recHeader-1] |= flagCached
	}
	if e.Response != nil {
		v = api.AppendVerifyResponse(v, e.Response)
	} else {
		v[recHeader-1] |= flagRefused
		v = append(append(append(v, e.Kind...), 0), e.Err...)
	}
	return boltfile.Seal(k, v)
}

// decodeRecord checks the record v stored under k and decodes it; ok is
// false for a damaged record, and for one with neither an answer nor a
// refusal (the row is verified again).
func decodeRecord(k, v []byte) (e Entry, ok bool) {
	if !sound(k, v) {
		return Entry{}, false
	}
	flags := v[recHeader-1]
	e = Entry{Row: int(binary.BigEndian.Uint64(k)), Key: binary.BigEndian.Uint64(v[boltfile.SealSize:]), FromCache: flags&flagCached != 0}
	body := v[recHeader:]
	if flags&flagRefused != 0 {
		kind, reason, _ := bytes.Cut(body, []byte{0})
		e.Kind, e.Err = string(kind), string(reason)
		return e, e.Kind != "" && e.Err != "" && e.Row > 0
	}
	// The decoder copies what it keeps: the answer outlives the
	// transaction's memory map.
	resp, err := api.DecodeVerifyResponse(body)
	if err != nil {
		return Entry{}, false
	}
	e.Response = resp
	return e, e.Row > 0
}
