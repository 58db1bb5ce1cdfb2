package boltfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"

	bolt "go.etcd.io/bbolt"
)

// Opening a damaged bbolt file can crash the process: bbolt reads pages
// through a memory map, so a page past the end of a truncated file faults
// (SIGBUS), a page number flipped past the map faults (SIGSEGV), and other
// damage panics, sometimes on a goroutine of bbolt's own. Its Tx.Check does
// not help: it trusts the same fields on a goroutine of its own (a flipped
// overflow count made it loop for minutes, a flipped page number faults).
//
// So the file is read without bbolt first, with ReadAt and every offset and
// count bounded: precheck compares the meta pages (both checksums) with the
// file's size before bbolt maps it, and check then reads every page
// reachable from the root bucket and the freelist, with what Tx.Check
// asserts (every page below the high-water mark in use or free, and only
// once; keys in order), and every entry's checksum. A file that passes
// gives bbolt nothing to fault, panic or loop on; guard still catches what
// a file changed afterwards (by another program) can do.
//
// Reading every page costs 0.8 s for a million entries (2.5 GB) in the page
// cache, 4.9 s from disk (BenchmarkOpenLarge), one pread a page; the size
// check alone costs 2-20 ms but leaves damage that makes bbolt write at
// wrong offsets or free pages in use, spreading it before a read finds it.
// Memory stays a bit per page and a page buffer per tree level.

// Layout of bbolt's file format, version 2 (go.etcd.io/bbolt
// internal/common), in the machine's byte order.
const (
	pageHeaderSize  = 16 // id u64, flags u16, count u16, overflow u32
	elementSize     = 16 // branch: pos u32, ksize u32, pgid u64; leaf: flags u32, pos u32, ksize u32, vsize u32
	bucketHeader    = 16 // root pgid u64, sequence u64; an inline bucket's page follows
	branchPageFlag  = 0x01
	leafPageFlag    = 0x02
	freelistFlag    = 0x10
	bucketLeafFlag  = 0x01
	boltMagic       = 0xED0CDAED
	boltVersion     = 2
	metaSumSize     = 56 // the meta fields the checksum covers
	noFreelist      = ^uint64(0)
	maxTreeDepth    = 64       // a B+tree of a few levels; more is a loop or damage
	maxBucketDepth  = 8        // namespaces are one level down, labels two
	maxPageRunBytes = 64 << 20 // one page and its overflow: an entry is a few KB
)

// meta is a bbolt meta page's fields.
type meta struct {
	pageSize       uint32
	root, freelist uint64
	hwm            uint64 // pages in use: the high-water mark
	txid           uint64
}

// readMeta decodes and validates the meta page in b (a page's first bytes).
func readMeta(b []byte) (meta, error) {
	ne := binary.NativeEndian
	if len(b) < pageHeaderSize+metaSumSize+8 {
		return meta{}, errors.New("short")
	}
	m := b[pageHeaderSize:]
	switch {
	case ne.Uint32(m) != boltMagic:
		return meta{}, errors.New("no bbolt magic number")
	case ne.Uint32(m[4:]) != boltVersion:
		return meta{}, fmt.Errorf("bbolt format version %d", ne.Uint32(m[4:]))
	}
	h := fnv.New64a()
	h.Write(m[:metaSumSize])
	if h.Sum64() != ne.Uint64(m[metaSumSize:]) {
		return meta{}, errors.New("checksum mismatch")
	}
	return meta{pageSize: ne.Uint32(m[8:]), root: ne.Uint64(m[16:]), freelist: ne.Uint64(m[32:]),
		hwm: ne.Uint64(m[40:]), txid: ne.Uint64(m[48:])}, nil
}

// readMetas finds the page size and the meta page in use of the bbolt file
// r of size bytes as bbolt does (meta page 0, else meta page 1 after a page
// of any size; the valid one of the higher transaction), and returns the
// problem of the other meta page, if any.
func readMetas(r io.ReaderAt, size int64) (m meta, ps int, other, err error) {
	buf := make([]byte, pageHeaderSize+metaSumSize+8)
	read := func(off int64) (meta, error) {
		if _, err := r.ReadAt(buf, off); err != nil {
			return meta{}, err
		}
		return readMeta(buf)
	}
	m0, err0 := read(0)
	if err0 == nil {
		ps = int(m0.pageSize)
	} else {
		for try := int64(1024); try <= 64<<10 && try+int64(len(buf)) <= size; try *= 2 {
			if m1, err := read(try); err == nil && int64(m1.pageSize) == try {
				ps = int(try)
				break
			}
		}
	}
	if ps < 1024 || ps > 64<<10 || ps&(ps-1) != 0 {
		return meta{}, 0, nil, fmt.Errorf("no valid meta page (%v)", err0)
	}
	m1, err1 := read(int64(ps))
	if err1 == nil && int(m1.pageSize) != ps {
		err1 = fmt.Errorf("page size %d, not %d", m1.pageSize, ps)
	}
	switch {
	case err0 != nil && err1 != nil:
		return meta{}, 0, nil, fmt.Errorf("both meta pages are damaged (%v; %v)", err0, err1)
	case err0 != nil:
		return m1, ps, err0, nil
	case err1 != nil:
		return m0, ps, err1, nil
	case m1.txid > m0.txid:
		return m1, ps, nil, nil
	}
	return m0, ps, nil, nil
}

// sane checks what meta m claims against the file's size.
func (m meta) sane(ps int, size int64) error {
	used := int64(m.hwm) * int64(ps)
	switch {
	case m.hwm > uint64(size) || used > size:
		return fmt.Errorf("the file is %d bytes, shorter than the %d bytes of pages it holds: it was cut short", size, used)
	case m.hwm < 3 || m.root < 2 || m.root >= m.hwm || m.freelist != noFreelist && (m.freelist < 2 || m.freelist >= m.hwm):
		return fmt.Errorf("meta page of transaction %d: root page %d, freelist page %d, %d pages", m.txid, m.root, m.freelist, m.hwm)
	}
	return nil
}

// precheck checks the meta pages of the file at path against its size
// before bbolt maps it: a page past the end of the file is a SIGBUS. It
// needs no lock: a writer grows the file before it writes the meta page
// that claims the pages, and writes one meta page at a time.
func precheck(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil // bbolt says why
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return nil // a new file
	}
	m, ps, _, err := readMetas(f, fi.Size())
	if err == nil {
		err = m.sane(ps, fi.Size())
	}
	return err
}

// check looks for damage before the file is used, holding the lock.
func (d *DB) check() error {
	var (
		txid uint64
		used int64
	)
	if err := d.View(func(tx *bolt.Tx) error {
		txid, used = uint64(tx.ID()), tx.Size()
		return nil
	}); err != nil {
		return err
	}
	fi, err := d.file.Stat()
	if err != nil {
		return fmt.Errorf("%s %s: %w", d.o.Kind, d.path, err)
	}
	m, ps, other, err := readMetas(d.file, fi.Size())
	switch {
	case err != nil:
		return d.Corrupt(err)
	case m.txid != txid || int64(m.hwm)*int64(ps) != used || ps != d.Bolt.Info().PageSize:
		return d.Corrupt(fmt.Sprintf("the meta pages do not match what bbolt read (transaction %d, %d pages of %d bytes)", m.txid, m.hwm, ps))
	}
	if err := m.sane(ps, fi.Size()); err != nil {
		return d.Corrupt(err)
	}
	if other != nil {
		// The torn write that bbolt's two meta pages are there to survive:
		// the other page is used, and the next commit rewrites this one.
		d.o.Logger.Warn().Str(d.o.Kind, d.path).Msgf("%s: one of the two meta pages is damaged (%v); the other one is used", d.o.Kind, other)
	}
	c := &checker{f: d.file, ps: ps, hwm: m.hwm, marker: d.o.Marker, entry: d.o.Entry}
	if err := c.all(m); err != nil {
		return d.Corrupt(err)
	}
	return nil
}

// checker reads a bbolt file through ReadAt and checks its structure.
type checker struct {
	f       io.ReaderAt
	ps      int
	hwm     uint64
	seen    []uint64 // bitmap: page in use or free
	bufs    [][]byte // a page buffer per level of recursion
	level   int
	marker  []byte            // the top-level bucket of the file's kind
	entry   func(k, v []byte) // shown the entries of the other top-level buckets
	buckets int               // at the top level
	ours    bool              // one of them is marker
}

// all checks every page of the file that meta m describes.
func (c *checker) all(m meta) error {
	c.seen = make([]uint64, (c.hwm+63)/64)
	c.mark(0)
	c.mark(1)
	if m.freelist != noFreelist {
		if err := c.freelist(m.freelist); err != nil {
			return err
		}
	}
	if err := c.tree(m.root, nil, nil, 0, 0, false); err != nil {
		return err
	}
	for id := uint64(0); id < c.hwm; id++ {
		if c.seen[id/64]&(1<<(id%64)) == 0 {
			return fmt.Errorf("page %d is neither in use nor free", id)
		}
	}
	return nil
}

// mark records page id as accounted for, and reports whether it was new.
func (c *checker) mark(id uint64) bool {
	w, bit := id/64, uint64(1)<<(id%64)
	if c.seen[w]&bit != 0 {
		return false
	}
	c.seen[w] |= bit
	return true
}

// page reads page id with its overflow pages, checks its header and marks
// its pages.
func (c *checker) page(id uint64) ([]byte, error) {
	if id < 2 || id >= c.hwm {
		return nil, fmt.Errorf("page %d is outside the file's %d pages", id, c.hwm)
	}
	// A buffer per level of recursion: a branch's keys stay in use while
	// its children are read.
	for len(c.bufs) <= c.level {
		c.bufs = append(c.bufs, make([]byte, c.ps))
	}
	b := c.bufs[c.level][:c.ps]
	off := int64(id) * int64(c.ps)
	if _, err := c.f.ReadAt(b, off); err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	ne := binary.NativeEndian
	overflow := uint64(ne.Uint32(b[12:]))
	switch {
	case ne.Uint64(b) != id:
		return nil, fmt.Errorf("page %d calls itself page %d", id, ne.Uint64(b))
	case id+overflow >= c.hwm || (overflow+1)*uint64(c.ps) > maxPageRunBytes:
		return nil, fmt.Errorf("page %d: %d overflow pages", id, overflow)
	}
	for i := uint64(0); i <= overflow; i++ {
		if !c.mark(id + i) {
			return nil, fmt.Errorf("page %d is used twice", id+i)
		}
	}
	if overflow == 0 {
		return b, nil
	}
	size := int((overflow + 1) * uint64(c.ps))
	if cap(c.bufs[c.level]) < size {
		c.bufs[c.level] = append(make([]byte, 0, size), b...)
	}
	b = c.bufs[c.level][:size]
	if _, err := c.f.ReadAt(b[c.ps:], off+int64(c.ps)); err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	return b, nil
}

// freelist checks the free pages' list and marks them.
func (c *checker) freelist(id uint64) error {
	b, err := c.page(id)
	if err != nil {
		return fmt.Errorf("freelist: %w", err)
	}
	ne := binary.NativeEndian
	if flags := ne.Uint16(b[8:]); flags != freelistFlag {
		return fmt.Errorf("freelist page %d has flags %#x", id, flags)
	}
	ids := b[pageHeaderSize:]
	n := uint64(ne.Uint16(b[10:]))
	if n == 0xFFFF { // the count is the first element
		n, ids = ne.Uint64(ids), ids[8:]
	}
	if n > uint64(len(ids)/8) {
		return fmt.Errorf("freelist page %d: %d free pages do not fit", id, n)
	}
	for i := range n {
		free := ne.Uint64(ids[8*i:])
		if free < 2 || free >= c.hwm || !c.mark(free) {
			return fmt.Errorf("freelist page %d: page %d is outside the file, or in use, or free twice", id, free)
		}
	}
	return nil
}

// tree checks the B+tree at page id: page types, keys in order and within
// [lo, hi) (hi nil: no bound), the buckets in it, and the entries of a
// top-level bucket (entries).
func (c *checker) tree(id uint64, lo, hi []byte, depth, buckets int, entries bool) error {
	if depth > maxTreeDepth {
		return fmt.Errorf("page %d: a tree deeper than %d", id, maxTreeDepth)
	}
	c.level++
	defer func() { c.level-- }()
	b, err := c.page(id)
	if err != nil {
		return err
	}
	ne := binary.NativeEndian
	switch flags := ne.Uint16(b[8:]); flags {
	case leafPageFlag:
		return c.leaf(id, b, lo, hi, buckets, entries)
	case branchPageFlag:
		n := int(ne.Uint16(b[10:]))
		if n == 0 {
			return fmt.Errorf("page %d: an empty branch", id)
		}
		keys := make([][]byte, n)
		for i := range n {
			if keys[i], _, err = element(b, i, 0); err != nil {
				return fmt.Errorf("page %d: %w", id, err)
			}
		}
		for i, k := range keys {
			next := hi
			if i+1 < n {
				next = keys[i+1]
			}
			if err := inOrder(id, k, lo, next, i == 0); err != nil {
				return err
			}
			child := ne.Uint64(b[pageHeaderSize+i*elementSize+8:])
			if err := c.tree(child, k, next, depth+1, buckets, entries); err != nil {
				return err
			}
			lo = k
		}
		return nil
	default:
		return fmt.Errorf("page %d: flags %#x where a branch or leaf page belongs", id, flags)
	}
}

// leaf checks the leaf page id, b (a page, or an inline bucket's page).
func (c *checker) leaf(id uint64, b, lo, hi []byte, buckets int, entries bool) error {
	ne := binary.NativeEndian
	n := int(ne.Uint16(b[10:]))
	for i := range n {
		k, v, err := element(b, i, 1)
		if err != nil {
			return fmt.Errorf("page %d: %w", id, err)
		}
		if err := inOrder(id, k, lo, hi, i == 0); err != nil {
			return err
		}
		lo = k
		if ne.Uint32(b[pageHeaderSize+i*elementSize:])&bucketLeafFlag == 0 {
			if entries && c.entry != nil {
				c.entry(k, v)
			}
			continue
		}
		if err := c.bucket(id, k, v, buckets); err != nil {
			return err
		}
	}
	return nil
}

// bucket checks the bucket k, whose header v is on page id.
func (c *checker) bucket(id uint64, k, v []byte, depth int) error {
	if depth >= maxBucketDepth {
		return fmt.Errorf("page %d: buckets nested deeper than %d", id, maxBucketDepth)
	}
	if len(v) < bucketHeader {
		return fmt.Errorf("page %d: bucket %x: a header of %d bytes", id, k, len(v))
	}
	// Entries live one level down: in any bucket of the root but the
	// marker.
	entries := depth == 0 && !bytes.Equal(k, c.marker)
	if depth == 0 {
		c.buckets++
		c.ours = c.ours || !entries
	}
	if root := binary.NativeEndian.Uint64(v); root != 0 {
		return c.tree(root, nil, nil, 0, depth+1, entries)
	}
	inline := v[bucketHeader:]
	if len(inline) < pageHeaderSize || binary.NativeEndian.Uint16(inline[8:]) != leafPageFlag {
		return fmt.Errorf("page %d: inline bucket %x is not a leaf page", id, k)
	}
	return c.leaf(id, inline, nil, nil, depth+1, entries)
}

// element returns the key and, on a leaf (leaf 1), the value of element i
// of page b, within b's bounds.
func element(b []byte, i, leaf int) (k, v []byte, err error) {
	ne := binary.NativeEndian
	off := pageHeaderSize + i*elementSize
	if off+elementSize > len(b) {
		return nil, nil, fmt.Errorf("element %d is past the page", i)
	}
	e := b[off : off+elementSize]
	pos, ksize := uint64(ne.Uint32(e[4*leaf:])), uint64(ne.Uint32(e[4+4*leaf:]))
	var vsize uint64
	if leaf == 1 {
		vsize = uint64(ne.Uint32(e[12:]))
	}
	start := uint64(off) + pos
	if start+ksize+vsize > uint64(len(b)) {
		return nil, nil, fmt.Errorf("element %d: key and value past the page", i)
	}
	return b[start : start+ksize : start+ksize], b[start+ksize : start+ksize+vsize : start+ksize+vsize], nil
}

// inOrder checks that key k of page id is within [lo, hi); first allows k
// to equal lo (a branch's first key is its lower bound).
func inOrder(id uint64, k, lo, hi []byte, first bool) error {
	if lo != nil && (bytes.Compare(k, lo) < 0 || !first && bytes.Equal(k, lo)) || hi != nil && bytes.Compare(k, hi) >= 0 {
		return fmt.Errorf("page %d: key %x out of order", id, k)
	}
	return nil
}

// hasMagicAt reports whether r has bbolt's magic number in one of its meta
// pages: a damaged bbolt file (that Replace may empty), not something else
// that --cache was pointed at.
func hasMagicAt(r io.ReaderAt) bool {
	var buf [4]byte
	at := func(off int64) bool {
		_, err := r.ReadAt(buf[:], off+pageHeaderSize)
		return err == nil && binary.NativeEndian.Uint32(buf[:]) == boltMagic
	}
	if at(0) { // meta page 0
		return true
	}
	for ps := int64(1024); ps <= 64<<10; ps *= 2 { // meta page 1 after a page of any size
		if at(ps) {
			return true
		}
	}
	return false
}

// foreign says why the file f of size bytes is not a file of the kind
// whose marker bucket is marker, or "" when it is one, a damaged bbolt
// file or empty.
func foreign(f *os.File, size int64, marker []byte) string {
	if size == 0 {
		return ""
	}
	if !hasMagicAt(f) {
		return "not a bbolt file"
	}
	m, ps, _, err := readMetas(f, size)
	if err != nil || m.sane(ps, size) != nil {
		return ""
	}
	c := &checker{f: f, ps: ps, hwm: m.hwm, marker: marker}
	if err := c.all(m); err == nil && c.buckets > 0 && !c.ours {
		return "a bbolt file of another program"
	}
	return ""
}
