package writers

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/addrclean/addrclean/internal/sqlitefile"
	"github.com/addrclean/addrclean/runstats"
)

// DuplicateReporter is implemented by the enriched writers: after a
// successful Close, Duplicates returns what was found.
type DuplicateReporter interface {
	Duplicates() runstats.Duplicates
}

// dupMemIDs bounds the address ids whose counts are kept in memory; past it
// the counts move to a scratch SQLite file on disk, so memory does not grow
// with the number of distinct addresses. About 70 bytes an id: ~18 MB. Runs
// with fewer distinct ids never touch the disk.
const dupMemIDs = 1 << 18

// dupCount is one address id's row count and first row.
type dupCount struct {
	n, first int64
}

// dupIndex counts rows per address id. Rows arrive in order, so the first
// row seen for an id is its first row.
type dupIndex struct {
	limit int
	// mem maps an id to its count in counts. Counts are never assigned
	// through the map: assigning to an entry with a string key stores the
	// caller's key, which may be a slice of a whole decoded answer.
	mem    map[string]int
	counts []dupCount
	dir    string
	prefix string
	f      *sqlitefile.File // nil until mem first overflows
	path   string
}

// dupSchema is the scratch file's table: an id's row count and first row.
var dupSchema = []string{"CREATE TABLE dups (id text PRIMARY KEY, n integer NOT NULL, first integer NOT NULL) WITHOUT ROWID"}

func newDupIndex(dir, prefix string, limit int) *dupIndex {
	return &dupIndex{limit: limit, dir: dir, prefix: prefix, mem: make(map[string]int)}
}

func (x *dupIndex) add(id string, row int) error {
	if i, ok := x.mem[id]; ok {
		x.counts[i].n++
		return nil
	}
	if len(x.mem) >= x.limit {
		if err := x.spill(); err != nil {
			return err
		}
	}
	// The id may share memory with the whole decoded answer; a key kept
	// for the run must not pin it.
	x.mem[strings.Clone(id)] = len(x.counts)
	x.counts = append(x.counts, dupCount{n: 1, first: int64(row)})
	return nil
}

// spill merges the in-memory counts into the scratch file and empties them.
func (x *dupIndex) spill() error {
	if len(x.mem) == 0 {
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
		for _, id := range slices.Sorted(maps.Keys(x.mem)) {
			c := x.counts[x.mem[id]]
			if _, err := st.ExecContext(ctx, id, c.n, c.first); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("duplicate counts: %w", err)
	}
	clear(x.mem)
	x.counts = x.counts[:0]
	return nil
}

// errDupsCorrupt: the scratch file of duplicate counts cannot be read.
var errDupsCorrupt = errors.New("scratch file unreadable")

// lookup calls fn with a function giving an id's count. Once counting is
// over, counts on disk are read through one prepared statement.
func (x *dupIndex) lookup(fn func(get func(id string) (dupCount, error)) error) error {
	if x.f == nil {
		return fn(func(id string) (dupCount, error) {
			if i, ok := x.mem[id]; ok {
				return x.counts[i], nil
			}
			return dupCount{}, nil
		})
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
// the rows wait in a spool file and the counts move to disk past dupMemIDs.
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
