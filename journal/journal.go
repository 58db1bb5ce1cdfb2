// Package journal keeps the finished rows of a run in a sidecar file, so that
// an interrupted run (Ctrl-C, kill -9, a reboot, a service outage) can be
// continued by 'addrclean run --resume' without paying again for the rows
// already verified.
//
// The file is text, one record per line, each line
//
//	<CRC-32C of the JSON, 8 lower-case hex digits> <space> <JSON object> <LF>
//
// The first record is the header (Meta: what was read and how); then come a
// run record for every run that appended to the file, the row records of
// that run in the order the rows finished, and, once a run has written every
// row, a done record. See FORMAT.md beside this file.
//
// Records are only ever appended, in whole lines (rows that finish together
// share one write), so a process killed at any instant, a full disk or a
// power cut leaves at most a torn end: a line without its LF, or whose
// checksum does not match. Open finds the end of the intact records and
// Continue cuts what follows before appending; a torn record is dropped and
// its row verified again, never misread. Lines damaged in the middle of the
// file (a bad disk block, an editor) are skipped and counted, and the
// intact records after them are kept. The file is synced to disk every
// second, so a power cut loses at most that much work.
//
// Rows finish out of order (up to the pipeline's reorder window), so Lookup
// reads the journal as a stream beside the input, holding at most a window's
// worth of records: memory does not grow with the file.
package journal

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/addrclean/addrclean/api"
)

// Version is the format version written in the header.
const Version = 1

// maxRecord bounds one line: an answer is a few kilobytes, so a longer line
// is damage, not a record, and is skipped without being held in memory. (A
// variable so that tests can make enormous lines without writing, and
// syncing, megabytes.)
var maxRecord = 4 << 20

// minWindow is the smallest reorder window 'addrclean run' uses
// (pipeline.DefaultWindow; more with many workers).
const minWindow = 256

// maxSplits bounds the readers started after damaged lines (see scan): each
// holds a buffer, and Lookup asks every reader for every row.
const maxSplits = 64

// syncEvery is how often appended records are synced to disk.
const syncEvery = time.Second

// slack is added to a run's reorder window when deciding that a row is not
// in the journal: the feeder can hold a row or two beyond the window.
const slack = 16

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrLocked is wrapped by Open's and Create's error when another process has
// the journal open.
var ErrLocked = errors.New("in use by another addrclean run")

// ErrCorrupt is wrapped by Open's error when the file is not an addrclean
// journal or its header cannot be read.
var ErrCorrupt = errors.New("not a readable addrclean journal")

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
	keys := make([]string, 0, len(m.Options)+len(now.Options))
	for k := range m.Options {
		keys = append(keys, k)
	}
	for k := range now.Options {
		if _, ok := m.Options[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
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
	// Torn is the number of bytes after the last intact record (a record
	// cut short by a crash); Continue drops them.
	Torn int64
	// Damaged is the number of lines before the last intact record that
	// failed their check (checksum, JSON, length): damage in the middle of
	// the file rather than a crash. They are skipped and kept in the file,
	// the records around them are used, and the rows they held are
	// verified again. A byte turned into a line feed makes one record two
	// damaged lines; a lost line feed makes two records one.
	Damaged int64
	// Updated is the file's modification time.
	Updated time.Time
	// Headless is true for an empty file, or one whose first record was
	// torn: a run killed while it created the journal. It holds no rows;
	// Start replaces it.
	Headless bool
}

// record is the JSON of every line; T tells which kind it is ("" for a row).
type record struct {
	T string `json:"t,omitempty"`

	// header
	Journal string    `json:"journal,omitempty"`
	Version int       `json:"version,omitempty"`
	Created time.Time `json:"created,omitzero"`
	Meta    *Meta     `json:"meta,omitempty"`

	// run
	Started time.Time `json:"started,omitzero"`
	Window  int       `json:"window,omitempty"`

	// done
	Rows int64 `json:"rows,omitempty"`

	// row
	Row       int             `json:"row,omitempty"`
	Key       string          `json:"key,omitempty"`
	FromCache bool            `json:"fc,omitempty"`
	Err       string          `json:"err,omitempty"`
	Kind      string          `json:"kind,omitempty"`
	Resp      json.RawMessage `json:"resp,omitempty"`
}

const (
	tHeader = "header"
	tRun    = "run"
	tDone   = "done"
)

// Journal is an open journal file, locked against other runs. Record and
// Lookup may be called concurrently with each other; Lookup is called for
// rows in increasing order.
type Journal struct {
	path string
	f    *os.File
	info Info
	now  func() time.Time

	valid int64 // length of the intact records found by Open

	mu       sync.Mutex // guards what follows
	cond     *sync.Cond // on mu: a batch was written
	dirty    bool       // written since the last sync
	werr     error      // first write error: later appends fail too
	pend     []byte     // lines waiting for the write under way
	pendRows int64
	spare    []byte
	writing  bool   // a caller is writing batches
	taken    uint64 // batches taken for writing
	written  uint64 // batches written

	stopSync chan struct{}
	syncDone chan struct{}

	starts []start // where Open found the parts that Lookup reads apart
	window int     // the largest reorder window of the runs found by Open

	// Replay state of Continue; used by Lookup only.
	rdFile   *os.File
	segs     []*segment
	replayed int64
	changed  int64
}

// start is where a part of the file that a reader of its own replays
// begins: a run record, or the first intact record after damaged lines.
type start struct {
	off    int64
	damage bool
}

// segment replays the records of one run. Rows finish at most that run's
// reorder window out of order, but a later run records rows an earlier one
// left (those in flight, those that failed) after all of the earlier run's
// records: so each run's part of the file is read by a reader of its own.
type segment struct {
	rd      *bufio.Reader
	pending map[int]record
	maxSeen int
	bound   int
	eof     bool
}

// Open opens and locks the journal at path and reads what it holds. A
// missing file is an error wrapping fs.ErrNotExist; a file whose header
// cannot be read wraps ErrCorrupt; a file another run has open wraps
// ErrLocked. Nothing is changed until Start or Continue.
func Open(path string) (*Journal, error) {
	f, err := openLocked(path, os.O_RDWR)
	if err != nil {
		return nil, err
	}
	j := newJournal(path, f)
	if err := j.scan(); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

// Create creates (or replaces) the journal at path for a run with meta and
// reorder window, locked against other runs.
func Create(path string, meta Meta, window int) (*Journal, error) {
	// Not O_TRUNC: another run's journal must survive until the lock is ours.
	f, err := openLocked(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	j := newJournal(path, f)
	if err := j.Start(meta, window); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

func newJournal(path string, f *os.File) *Journal {
	j := &Journal{path: path, f: f, now: time.Now}
	j.cond = sync.NewCond(&j.mu)
	return j
}

// openLocked opens path and locks it. A run that finishes removes its
// journal while holding the lock, so the file locked may no longer be the
// one at path: then it tries again, rather than journal into a deleted file.
func openLocked(path string, flag int) (*os.File, error) {
	for attempt := 0; ; attempt++ {
		f, err := os.OpenFile(path, flag, 0o600)
		if err != nil {
			return nil, fmt.Errorf("journal: %w", err)
		}
		if err := lock(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("journal %s: %w", path, err)
		}
		held, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return f, nil
		}
		f.Close()
		if attempt == 3 {
			return nil, fmt.Errorf("journal %s: %w (it keeps being replaced)", path, ErrLocked)
		}
	}
}

// Info describes what Open found.
func (j *Journal) Info() Info { return j.info }

// Path is the journal's file name.
func (j *Journal) Path() string { return j.path }

// Start discards what the journal holds and begins it afresh for a run with
// meta and reorder window.
func (j *Journal) Start(meta Meta, window int) error {
	if err := j.f.Truncate(0); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	if _, err := j.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	now := j.now().UTC()
	j.info = Info{Path: j.path, Meta: meta, Created: now, Runs: 1}
	j.starts, j.window, j.valid = nil, 0, 0
	if err := j.append(record{T: tHeader, Journal: "addrclean", Version: Version, Created: now, Meta: &meta}); err != nil {
		return err
	}
	if err := j.append(record{T: tRun, Started: now, Window: window}); err != nil {
		return err
	}
	return j.begin()
}

// Continue keeps the intact records for Lookup, drops a torn tail and appends
// a run record for a run with reorder window.
func (j *Journal) Continue(window int) error {
	if j.info.Headless {
		return fmt.Errorf("journal %s: no intact header to continue from: %w", j.path, ErrCorrupt)
	}
	if err := j.f.Truncate(j.valid); err != nil {
		return fmt.Errorf("journal %s: dropping a torn record: %w", j.path, err)
	}
	if _, err := j.f.Seek(j.valid, io.SeekStart); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	rf, err := os.Open(j.path)
	if err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	j.rdFile = rf
	for i, st := range j.starts {
		end := j.valid
		if i+1 < len(j.starts) {
			end = j.starts[i+1].off
		}
		sg := &segment{
			rd:      bufio.NewReaderSize(io.NewSectionReader(rf, st.off, end-st.off), 32<<10),
			pending: make(map[int]record),
			bound:   slack,
		}
		if st.damage {
			// The run record these records follow may be the damaged
			// line, its window unknown: take the widest in the file, and
			// at least the smallest a run uses. A bound too wide only
			// reads further ahead; one too narrow costs calls.
			sg.bound = max(j.window, minWindow) + slack
		}
		j.segs = append(j.segs, sg)
	}
	j.info.Runs++
	j.info.Complete = false
	j.info.Torn = 0
	// Damaged lines before the cut stay in the file: rewriting it would
	// copy every record (and risk them) to save a few bytes, and every
	// reader skips them.
	if err := j.append(record{T: tRun, Started: j.now().UTC(), Window: window}); err != nil {
		return err
	}
	return j.begin()
}

// begin syncs the records so far and starts the periodic sync.
func (j *Journal) begin() error {
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	j.stopSync = make(chan struct{})
	j.syncDone = make(chan struct{})
	go j.syncLoop()
	return nil
}

func (j *Journal) syncLoop() {
	defer close(j.syncDone)
	t := time.NewTicker(syncEvery)
	defer t.Stop()
	for {
		select {
		case <-j.stopSync:
			return
		case <-t.C:
			_ = j.sync()
		}
	}
}

func (j *Journal) sync() error {
	j.mu.Lock()
	dirty := j.dirty
	j.dirty = false
	j.mu.Unlock()
	if !dirty {
		return nil
	}
	// A failed sync is reported by the next append or by Close.
	if err := j.f.Sync(); err != nil {
		j.mu.Lock()
		if j.werr == nil {
			j.werr = fmt.Errorf("journal %s: %w", j.path, err)
		}
		j.mu.Unlock()
		return err
	}
	return nil
}

// Record appends a finished row. It returns once the row's line is written
// to the file (not yet synced): a process killed after Record returned
// keeps the row.
func (j *Journal) Record(e Entry) error {
	if e.Row < 1 {
		return fmt.Errorf("journal %s: row %d: want a positive row number", j.path, e.Row)
	}
	bp := linePool.Get().(*[]byte)
	line, err := appendRowLine((*bp)[:0], e)
	if err == nil {
		err = j.commit(line, true)
	} else {
		err = fmt.Errorf("journal %s: row %d: %w", j.path, e.Row, err)
	}
	if line != nil && cap(line) <= 64<<10 {
		*bp = line[:0]
	}
	linePool.Put(bp)
	return err
}

// linePool holds the buffers rows are encoded in: one per row of a run.
var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// appendRowLine appends a row record as a whole line: checksum, JSON, LF.
func appendRowLine(b []byte, e Entry) ([]byte, error) {
	start := len(b)
	b = append(b, "00000000 "...)
	b, err := appendRow(b, e)
	if err != nil {
		return nil, err
	}
	putHex(b[start:start+8], crc32.Checksum(b[start+9:], crcTable))
	return append(b, '\n'), nil
}

func putHex(dst []byte, v uint32) {
	const digits = "0123456789abcdef"
	for i := 7; i >= 0; i-- {
		dst[i] = digits[v&0xf]
		v >>= 4
	}
}

// appendRow appends the JSON of a row record. It is written by hand because
// it runs once per row: encoding/json would scan the answer again to check
// it.
func appendRow(b []byte, e Entry) ([]byte, error) {
	b = append(b, `{"row":`...)
	b = strconv.AppendInt(b, int64(e.Row), 10)
	b = append(b, `,"key":"`...)
	b = appendKey(b, e.Key)
	b = append(b, '"')
	if e.FromCache {
		b = append(b, `,"fc":true`...)
	}
	for _, f := range [...]struct{ name, v string }{{"err", e.Err}, {"kind", e.Kind}} {
		if f.v == "" {
			continue
		}
		b = append(b, `,"`...)
		b = append(b, f.name...)
		b = append(b, `":`...)
		b = api.AppendJSONString(b, f.v, false)
	}
	if e.Response != nil {
		b = append(b, `,"resp":`...)
		b = appendResponse(b, e.Response)
	}
	return append(b, '}'), nil
}

// Complete records that the run wrote every one of its rows rows.
func (j *Journal) Complete(rows int64) error {
	if err := j.append(record{T: tDone, Rows: rows}); err != nil {
		return err
	}
	j.info.Complete = true
	return nil
}

// append writes one record other than a row.
func (j *Journal) append(rec record) error {
	body, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("journal %s: encoding a record: %w", j.path, err)
	}
	return j.commit(appendLine(nil, body), false)
}

// commit writes whole lines to the file and returns once they are written.
// Rows that finish while a write is under way are written together by the
// next one (group commit): one write per batch instead of one per row, and
// each caller still returns only after its own line is in the file. A
// write cut short (a full disk) leaves at most a torn last line, which Open
// drops; every later commit then fails.
func (j *Journal) commit(line []byte, row bool) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.werr != nil {
		return j.werr
	}
	j.pend = append(j.pend, line...)
	if row {
		j.pendRows++
	}
	mine := j.taken + 1 // the batch this line goes out in
	if j.writing {
		for j.written < mine && j.werr == nil {
			j.cond.Wait()
		}
		return j.werr
	}
	j.writing = true
	for len(j.pend) > 0 && j.werr == nil {
		buf, rows := j.pend, j.pendRows
		j.pend, j.pendRows = j.spare[:0], 0
		j.taken++
		batch := j.taken
		j.mu.Unlock()
		_, err := j.f.Write(buf)
		j.mu.Lock()
		if cap(buf) <= 1<<20 {
			j.spare = buf[:0]
		} else {
			j.spare = nil
		}
		if err != nil {
			j.werr = fmt.Errorf("journal %s: %w", j.path, err)
		} else {
			j.info.Rows += rows
			j.dirty = true
		}
		j.written = batch
		j.cond.Broadcast()
	}
	j.writing = false
	return j.werr
}

func appendLine(b, body []byte) []byte {
	b = fmt.Appendf(b, "%08x ", crc32.Checksum(body, crcTable))
	b = append(b, body...)
	return append(b, '\n')
}

// keyText is a key as 16 hex digits.
func keyText(k uint64) string { return string(appendKey(nil, k)) }

func appendKey(b []byte, k uint64) []byte {
	b = append(b, "0000000000000000"...)
	putHex(b[len(b)-16:len(b)-8], uint32(k>>32))
	putHex(b[len(b)-8:], uint32(k))
	return b
}

// Lookup returns the journalled result of row when the journal holds one for
// the same address key. Rows must be asked for in increasing order. A record
// whose key differs is not used (the row is verified again) and counted in
// Changed.
func (j *Journal) Lookup(row int, key uint64) (Entry, bool, error) {
	var found *record
	for _, sg := range j.segs {
		rec, ok, err := sg.find(row)
		if err != nil {
			return Entry{}, false, fmt.Errorf("journal %s: %w", j.path, err)
		}
		if ok && found == nil {
			found = &rec
		}
	}
	if found == nil {
		return Entry{}, false, nil
	}
	var kb [16]byte
	if found.Key != string(appendKey(kb[:0], key)) || (len(found.Resp) == 0 && (found.Err == "" || found.Kind == "")) {
		// Another address, or a record with neither an answer nor a
		// refusal: the row is verified again.
		j.changed++
		return Entry{}, false, nil
	}
	e := Entry{Row: row, Key: key, Err: found.Err, Kind: found.Kind, FromCache: found.FromCache}
	if len(found.Resp) > 0 {
		resp, err := decodeResponse(found.Resp)
		if err != nil {
			return Entry{}, false, fmt.Errorf("journal %s: row %d: %w", j.path, row, err)
		}
		e.Response = resp
	}
	j.replayed++
	return e, true, nil
}

// find returns the segment's record of row, reading ahead until it is
// found or cannot come any more.
func (sg *segment) find(row int) (record, bool, error) {
	for {
		if rec, ok := sg.pending[row]; ok {
			delete(sg.pending, row)
			return rec, true, nil
		}
		// Rows finish at most a window out of order: once a record lies
		// further ahead than that, row's would have been read already.
		if sg.eof || sg.maxSeen > row+sg.bound {
			sg.trim(row)
			return record{}, false, nil
		}
		if err := sg.readOne(row); err != nil {
			return record{}, false, err
		}
	}
}

// readOne reads the segment's next record into pending.
func (sg *segment) readOne(row int) error {
	line, _, err := readLine(sg.rd)
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, errTorn):
		// A segment ends after an LF: a torn line means the file changed
		// under us, and what was not read is verified again.
		sg.eof = true
		return nil
	case errors.Is(err, errLong):
		return nil // damage Open counted
	case err != nil:
		return err
	}
	rec, ok := parseLine(line)
	if !ok {
		return nil // damage Open counted
	}
	switch rec.T {
	case tRun:
		sg.bound = max(sg.bound, rec.Window+slack)
	case "":
		if rec.Row >= row {
			sg.pending[rec.Row] = rec
		}
		sg.maxSeen = max(sg.maxSeen, rec.Row)
	}
	return nil
}

// trim drops records of rows already passed; they belong to rows the run
// did not ask about (unmapped rows, or rows recorded twice).
func (sg *segment) trim(row int) {
	if len(sg.pending) <= 2*sg.bound {
		return
	}
	for r := range sg.pending {
		if r < row {
			delete(sg.pending, r)
		}
	}
}

// Failed reports that a write to the journal failed: what it holds may be
// worth keeping even if no row was counted.
func (j *Journal) Failed() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.werr != nil
}

// Replayed is the number of rows Lookup answered; Changed the number of
// records not used because the row's address differs.
func (j *Journal) Replayed() int64 { return j.replayed }

// Changed is the number of records not used because the row's address
// differs from the journalled one.
func (j *Journal) Changed() int64 { return j.changed }

// Close syncs and closes the journal, keeping the file.
func (j *Journal) Close() error {
	if j.stopSync != nil {
		close(j.stopSync)
		<-j.syncDone
		j.stopSync = nil
	}
	if j.rdFile != nil {
		j.rdFile.Close()
		j.rdFile = nil
	}
	j.mu.Lock()
	werr := j.werr
	j.mu.Unlock()
	err := j.f.Sync()
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	if werr != nil {
		return werr
	}
	if err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	return nil
}

// Remove closes the journal and deletes the file.
func (j *Journal) Remove() error {
	// Removed while still locked, so no other run can open it halfway.
	if err := os.Remove(j.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		_ = j.Close()
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	return j.Close()
}

// scan reads the whole file, checking every record, and fills info, valid,
// starts and window.
//
// Lines that fail their check after the last intact record are the torn
// end a crash leaves: Continue cuts them off. Lines that fail it before an
// intact one are damage in the middle of the file: they are skipped and
// counted, and the records after them kept. A damaged line may have been a
// run record, after which rows can lie far behind the ones before it (a
// later run records the rows an earlier one left): so the records after
// damage get a reader of their own, as if a run started there. Splitting a
// run's records between two readers loses none of them, since each part
// is still at most a window out of order.
func (j *Journal) scan() error {
	st, err := j.f.Stat()
	if err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	j.info = Info{Path: j.path, Updated: st.ModTime()}
	rd := bufio.NewReaderSize(io.NewSectionReader(j.f, 0, st.Size()), 64<<10)
	var (
		off     int64 // where the line being read starts
		bad     int64 // damaged lines since the last intact one
		splits  int
		lineNum int
	)
	for {
		line, n, err := readLine(rd)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && !errors.Is(err, errTorn) && !errors.Is(err, errLong) {
			return fmt.Errorf("journal %s: %w", j.path, err)
		}
		lineNum++
		var rec record
		ok := false
		if err == nil {
			rec, ok = parseLine(line)
		}
		if lineNum == 1 {
			if errors.Is(err, errTorn) {
				// The file ends inside its first line: a run was killed
				// while it created the journal.
				j.info.Headless = true
				return nil
			}
			if !ok {
				return fmt.Errorf("journal %s: line 1 (the header) is damaged: %w", j.path, ErrCorrupt)
			}
			if rec.T != tHeader || rec.Journal != "addrclean" || rec.Meta == nil {
				return fmt.Errorf("journal %s: %w (no header)", j.path, ErrCorrupt)
			}
			if rec.Version != Version {
				return fmt.Errorf("journal %s: format version %d, this addrclean reads %d: %w", j.path, rec.Version, Version, ErrCorrupt)
			}
			j.info.Meta = *rec.Meta
			j.info.Created = rec.Created
			off += n
			j.valid = off
			continue
		}
		if !ok {
			bad++
			off += n
			continue
		}
		if bad > 0 {
			j.info.Damaged += bad
			bad = 0
			if rec.T != tRun && splits < maxSplits {
				splits++
				j.starts = append(j.starts, start{off: off, damage: true})
			}
		}
		switch rec.T {
		case tRun:
			j.info.Runs++
			j.info.Complete = false
			j.starts = append(j.starts, start{off: off})
			j.window = max(j.window, rec.Window)
		case tDone:
			j.info.Complete = true
		case "":
			j.info.Rows++
			j.info.Complete = false
		}
		off += n
		j.valid = off
	}
	if lineNum == 0 {
		j.info.Headless = true
		return nil
	}
	j.info.Torn = st.Size() - j.valid
	return nil
}

var (
	errTorn = errors.New("torn record")
	errLong = errors.New("line too long")
)

// readLine returns the next line with its LF, and the number of bytes it
// took from rd. A last line without an LF is errTorn; a line longer than
// maxRecord is errLong, and is skipped to its LF without being held in
// memory. The line may be rd's buffer: it is valid until the next read.
func readLine(rd *bufio.Reader) ([]byte, int64, error) {
	chunk, err := rd.ReadSlice('\n')
	limit := int64(maxRecord)
	if err == nil && int64(len(chunk)) <= limit {
		return chunk, int64(len(chunk)), nil
	}
	n := int64(len(chunk))
	var line []byte
	if n <= limit {
		line = grow(nil, chunk)
	}
	for errors.Is(err, bufio.ErrBufferFull) {
		chunk, err = rd.ReadSlice('\n')
		n += int64(len(chunk))
		if n <= limit {
			line = grow(line, chunk)
		} else {
			line = nil
		}
	}
	switch {
	case errors.Is(err, io.EOF):
		if n == 0 {
			return nil, 0, io.EOF
		}
		return nil, n, errTorn
	case err != nil:
		return nil, n, err
	case n > limit:
		return nil, n, errLong
	}
	return line, n, nil
}

// grow appends chunk to line, doubling its capacity when it must grow:
// append grows large slices by a quarter, which would allocate five times
// the length of a long line on the way to it.
func grow(line, chunk []byte) []byte {
	if need := len(line) + len(chunk); need > cap(line) {
		l := make([]byte, len(line), max(min(2*cap(line), maxRecord), need))
		copy(l, line)
		line = l
	}
	return append(line, chunk...)
}

// parseLine checks a line's checksum and decodes it.
func parseLine(line []byte) (record, bool) {
	if len(line) < 11 || line[8] != ' ' || line[len(line)-1] != '\n' {
		return record{}, false
	}
	// Lower case only, as written: a checksum whose case changed is
	// damage like any other, so that Damaged counts every changed line.
	var want uint32
	for _, c := range line[:8] {
		switch {
		case '0' <= c && c <= '9':
			want = want<<4 | uint32(c-'0')
		case 'a' <= c && c <= 'f':
			want = want<<4 | uint32(c-'a'+10)
		default:
			return record{}, false
		}
	}
	body := line[9 : len(line)-1]
	if crc32.Checksum(body, crcTable) != want {
		return record{}, false
	}
	var rec record
	if err := json.Unmarshal(body, &rec); err != nil {
		return record{}, false
	}
	if rec.T == "" && rec.Row < 1 {
		return record{}, false
	}
	return rec, true
}
