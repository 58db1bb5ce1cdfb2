package writers

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/addrclean/addrclean/internal/sqlitefile"
	"github.com/addrclean/addrclean/runstats"
)

// DuplicateReporter is implemented by the enriched writers: after a
// successful Close, Duplicates returns what was found.
type DuplicateReporter interface {
	Duplicates() runstats.Duplicates
}

// dupMemBytes bounds the duplicate counts kept in memory: the bytes of the
// index's records (an id and its two counts). Past it the counts move to a
// scratch SQLite file on disk, so memory does not grow with the number of
// distinct addresses. A record of a 10-byte id takes 27 bytes, and the table
// 5 to 11 more: 8 MiB is about 300,000 such ids, with the table 10 MiB (12 MiB
// for the shortest ids). Runs with fewer ids never touch the disk.
const dupMemBytes = 8 << 20

// dupCount is one address id's row count and first row.
type dupCount struct {
	n, first int64
}

// dupIndex counts rows per address id. Rows arrive in order, so the first
// row seen for an id is its first row.
//
// In memory an id costs its bytes and about 25 more: each id is one record
// in an append-only arena (its row count and first row, 8 bytes each, then
// its length and its bytes), found through an open-addressing table of
// arena offsets. A map[string] would cost a string header, a copied key
// and a bucket slot besides the counts (about 70 bytes an id). Ids are
// compared byte for byte: two ids are never merged.
type dupIndex struct {
	limit int // bytes of arena before a spill
	seed  maphash.Seed
	arena []byte
	// slots holds arena offsets plus one (0 is an empty slot), probed
	// linearly from an id's hash; at most three quarters are used.
	slots  []uint32
	ids    int
	dir    string
	prefix string
	f      *sqlitefile.File // nil until the arena first overflows
	path   string
}

// dupSlots is the table's first size; it doubles as ids come.
const dupSlots = 1 << 10

// dupHead is the bytes of a record before its id's length: the row count
// and the first row.
const dupHead = 16

// dupSchema is the scratch file's table: an id's row count and first row.
var dupSchema = []string{"CREATE TABLE dups (id text PRIMARY KEY, n integer NOT NULL, first integer NOT NULL) WITHOUT ROWID"}

func newDupIndex(dir, prefix string, limit int) *dupIndex {
	// The offsets are uint32: the arena stays far below 4 GiB, one
	// record past the limit at most.
	limit = min(limit, 1<<30)
	return &dupIndex{limit: limit, seed: maphash.MakeSeed(), slots: make([]uint32, dupSlots), dir: dir, prefix: prefix}
}

// record returns the id of the record at off and the offset past it.
func (x *dupIndex) record(off int) (id []byte, next int) {
	n, k := binary.Uvarint(x.arena[off+dupHead:])
	start := off + dupHead + k
	return x.arena[start : start+int(n)], start + int(n)
}

// count returns the counts of the record at off.
func (x *dupIndex) count(off int) dupCount {
	return dupCount{n: int64(binary.LittleEndian.Uint64(x.arena[off:])), first: int64(binary.LittleEndian.Uint64(x.arena[off+8:]))}
}

// find returns the slot of id, whose hash is h: the slot holding its
// record, or the empty slot where it would go.
func (x *dupIndex) find(h uint64, id string) int {
	mask := uint64(len(x.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		o := x.slots[i]
		if o == 0 {
			return int(i)
		}
		if got, _ := x.record(int(o - 1)); string(got) == id {
			return int(i)
		}
	}
}

// place puts the record at off, whose id hashes to h, in the first empty
// slot from h: ids in the arena are all different.
func (x *dupIndex) place(h uint64, off int) {
	mask := uint64(len(x.slots) - 1)
	i := h & mask
	for x.slots[i] != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = uint32(off + 1)
}

func (x *dupIndex) add(id string, row int) error {
	h := maphash.String(x.seed, id)
	if o := x.slots[x.find(h, id)]; o != 0 {
		off := int(o - 1)
		binary.LittleEndian.PutUint64(x.arena[off:], binary.LittleEndian.Uint64(x.arena[off:])+1)
		return nil
	}
	if x.ids > 0 && len(x.arena)+dupHead+binary.MaxVarintLen64+len(id) > x.limit {
		if err := x.spill(); err != nil {
			return err
		}
	}
	if 4*(x.ids+1) > 3*len(x.slots) {
		x.grow()
	}
	off := len(x.arena)
	if need := off + dupHead + binary.MaxVarintLen64 + len(id); need > cap(x.arena) {
		// Grown as append would, but never past the limit: the arena's
		// capacity is what the index costs.
		x.arena = append(make([]byte, 0, max(need, min(cap(x.arena)+cap(x.arena)/4+4096, x.limit))), x.arena...)
	}
	x.arena = binary.LittleEndian.AppendUint64(x.arena, 1)
	x.arena = binary.LittleEndian.AppendUint64(x.arena, uint64(row))
	x.arena = binary.AppendUvarint(x.arena, uint64(len(id)))
	// A copy: the id may share memory with the whole decoded answer,
	// which the index must not keep for the run.
	x.arena = append(x.arena, id...)
	x.place(h, off)
	x.ids++
	return nil
}

// grow doubles the table and places every record again.
func (x *dupIndex) grow() {
	x.slots = make([]uint32, 2*len(x.slots))
	for off := 0; off < len(x.arena); {
		id, next := x.record(off)
		x.place(maphash.Bytes(x.seed, id), off)
		off = next
	}
}

// get returns the in-memory counts of id (zero if it has none).
func (x *dupIndex) get(id string) dupCount {
	if o := x.slots[x.find(maphash.String(x.seed, id), id)]; o != 0 {
		return x.count(int(o - 1))
	}
	return dupCount{}
}

// spill merges the in-memory counts into the scratch file and empties them.
func (x *dupIndex) spill() error {
	if x.ids == 0 {
		return nil
	}
	ctx := context.Background()
	if x.f == nil {
		tf, err := os.CreateTemp(x.dir, x.prefix+"dups-*")
		if err != nil {
			return fmt.Errorf("duplicate counts: %w", err)
		}
		x.path = tf.Name()
		_ = tf.Close()
		// A scratch file: nothing survives a crash, so no journal and no sync.
		f, err := sqlitefile.Open(ctx, x.path, sqlitefile.Options{Kind: "duplicate counts", Format: "addrclean-dups/1",
			FormatFamily: "addrclean-dups/", Schema: dupSchema, Scratch: true, Corrupt: errDupsCorrupt, NotOurs: errDupsCorrupt, Locked: errDupsCorrupt})
		if err != nil {
			_ = sqlitefile.Remove(x.path)
			return fmt.Errorf("duplicate counts: %w", err)
		}
		x.f = f
	}
	err := x.f.Tx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, "INSERT INTO dups (id, n, first) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET n = n + excluded.n")
		if err != nil {
			return err
		}
		defer st.Close()
		// In key order: each insert lands next to the last one in the
		// b-tree, on a page already in memory. An id spilled before keeps
		// its first row: earlier rows were spilled earlier.
		offs := make([]int, 0, x.ids)
		for off := 0; off < len(x.arena); {
			offs = append(offs, off)
			_, off = x.record(off)
		}
		slices.SortFunc(offs, func(a, b int) int {
			ia, _ := x.record(a)
			ib, _ := x.record(b)
			return bytes.Compare(ia, ib)
		})
		for _, off := range offs {
			id, _ := x.record(off)
			c := x.count(off)
			if _, err := st.ExecContext(ctx, string(id), c.n, c.first); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("duplicate counts: %w", err)
	}
	x.arena = x.arena[:0]
	clear(x.slots)
	x.ids = 0
	return nil
}

// errDupsCorrupt: the scratch file of duplicate counts cannot be read.
var errDupsCorrupt = errors.New("scratch file unreadable")

// lookup calls fn with a function giving an id's count. Once counting is
// over, counts on disk are read through one prepared statement.
func (x *dupIndex) lookup(fn func(get func(id string) (dupCount, error)) error) error {
	if x.f == nil {
		return fn(func(id string) (dupCount, error) { return x.get(id), nil })
	}
	if err := x.spill(); err != nil {
		return err
	}
	ctx := context.Background()
	var fnErr error // the caller's (writing the output), not the file's
	err := x.f.Do(ctx, func(c *sql.Conn) error {
		st, err := c.PrepareContext(ctx, "SELECT n, first FROM dups WHERE id = ?")
		if err != nil {
			return err
		}
		defer st.Close()
		fnErr = fn(func(id string) (dupCount, error) {
			var dc dupCount
			err := st.QueryRowContext(ctx, id).Scan(&dc.n, &dc.first)
			if errors.Is(err, sql.ErrNoRows) {
				return dupCount{}, nil
			}
			if err != nil {
				return dupCount{}, fmt.Errorf("duplicate counts: %w", err)
			}
			return dc, nil
		})
		return nil
	})
	if err != nil {
		return fmt.Errorf("duplicate counts: %w", err)
	}
	return fnErr
}

func (x *dupIndex) close() {
	if x.f != nil {
		_ = x.f.Close()
		_ = sqlitefile.Remove(x.path)
		x.f = nil
	}
}

// spool holds the rendered rows of an enriched output until the duplicate
// counts are known: one record per row (row number, address id, cells),
// each string length-prefixed, in a temporary file.
type spool struct {
	f   *os.File
	bw  *bufio.Writer
	buf []byte
}

func newSpool(dir, prefix string) (*spool, error) {
	f, err := os.CreateTemp(dir, prefix+"spool-*")
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	lockTemp(f)
	return &spool{f: f, bw: bufio.NewWriterSize(f, csvBuffer)}, nil
}

func (s *spool) add(row int, id string, cells []string) error {
	// A record is its length, then the row, the number of cells, and the id
	// and cells each length-prefixed: replay reads it in one piece.
	b := s.buf[:0]
	b = binary.AppendUvarint(b, uint64(row))
	b = binary.AppendUvarint(b, uint64(len(cells)))
	b = binary.AppendUvarint(b, uint64(len(id)))
	b = append(b, id...)
	for _, c := range cells {
		b = binary.AppendUvarint(b, uint64(len(c)))
		b = append(b, c...)
	}
	s.buf = b
	var n [binary.MaxVarintLen64]byte
	if _, err := s.bw.Write(binary.AppendUvarint(n[:0], uint64(len(b)))); err != nil {
		return err
	}
	_, err := s.bw.Write(b)
	return err
}

// errSpoolCorrupt means the spool file does not hold what was written to it.
var errSpoolCorrupt = errors.New("spool file is corrupt")

// maxSpoolRecord bounds one record (a row's cells), so a damaged spool
// cannot ask for an absurd allocation.
const maxSpoolRecord = 1 << 30

// replay calls fn with every record in order; cells is reused between
// calls. Each record's cells share one string: one allocation per row.
func (s *spool) replay(fn func(row int, id string, cells []string) error) error {
	if err := s.bw.Flush(); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	br := bufio.NewReaderSize(s.f, csvBuffer)
	var cells []string
	var data []byte
	for {
		size, err := binary.ReadUvarint(br)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil || size > maxSpoolRecord {
			return fmt.Errorf("spool: %w", errSpoolCorrupt)
		}
		if uint64(cap(data)) < size {
			data = make([]byte, size)
		}
		data = data[:size]
		if _, err := io.ReadFull(br, data); err != nil {
			return fmt.Errorf("spool: %w", err)
		}
		rec := string(data)
		off := 0
		num := func() (uint64, bool) {
			v, n := binary.Uvarint(data[off:])
			if n <= 0 {
				return 0, false
			}
			off += n
			return v, true
		}
		str := func() (string, bool) {
			n, ok := num()
			if !ok || n > uint64(len(rec)-off) {
				return "", false
			}
			off += int(n)
			return rec[off-int(n) : off], true
		}
		row, ok1 := num()
		n, ok2 := num()
		id, ok3 := str()
		if !ok1 || !ok2 || !ok3 || row > 1<<53 || n > uint64(len(rec)) {
			return fmt.Errorf("spool: %w", errSpoolCorrupt)
		}
		cells = cells[:0]
		for range n {
			c, ok := str()
			if !ok {
				return fmt.Errorf("spool: %w", errSpoolCorrupt)
			}
			cells = append(cells, c)
		}
		if err := fn(int(row), id, cells); err != nil {
			return err
		}
	}
}

func (s *spool) close() {
	name := s.f.Name()
	_ = s.f.Close()
	_ = os.Remove(name)
}

// dupPass holds an enriched output's rows back until Close, then writes
// them with av_duplicates and av_first_row filled in. Memory stays bounded:
// the rows wait in a spool file and the counts move to disk past dupMemBytes.
type dupPass struct {
	sp    *spool
	idx   *dupIndex
	found runstats.Duplicates
}

// scratch is where an output's scratch files go and how they are named:
// beside the output (the disk that will hold it; /tmp may be memory), named
// like its temporary file so that RemoveStaleTemps finds those a killed run
// left; the temp dir for stdout.
func scratch(path string) (dir, prefix string) {
	if path == Stdout {
		return os.TempDir(), ".addrclean-stdout.tmp-"
	}
	dir, base := filepath.Dir(path), filepath.Base(path)
	return dir, tempPrefix(base)
}

func newDupPass(path string, limit int) (*dupPass, error) {
	dir, prefix := scratch(path)
	sp, err := newSpool(dir, prefix)
	if err != nil {
		return nil, err
	}
	return &dupPass{sp: sp, idx: newDupIndex(dir, prefix, limit)}, nil
}

func (d *dupPass) add(row int, id string, cells []string) error {
	if id != "" {
		if err := d.idx.add(id, row); err != nil {
			return err
		}
	}
	return d.sp.add(row, id, cells)
}

// flush writes every held row through write, with the two duplicate cells
// (at cols) filled for rows that have an address id.
func (d *dupPass) flush(dupCol, firstCol int, write func(row int, cells []string) error) error {
	err := d.idx.lookup(func(get func(id string) (dupCount, error)) error {
		return d.sp.replay(func(row int, id string, cells []string) error {
			if id != "" {
				c, err := get(id)
				if err != nil {
					return err
				}
				cells[dupCol] = strconv.FormatInt(c.n, 10)
				cells[firstCol] = strconv.FormatInt(c.first, 10)
				if c.n > 1 && c.first == int64(row) {
					d.found.Groups++
					d.found.Rows += c.n
					if c.n > d.found.Largest {
						d.found.Largest, d.found.LargestID = c.n, id
					}
				}
			}
			return write(row, cells)
		})
	})
	d.found.Extra = d.found.Rows - d.found.Groups
	return err
}

func (d *dupPass) close() {
	d.sp.close()
	d.idx.close()
}
