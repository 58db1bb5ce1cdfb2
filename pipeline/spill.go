package pipeline

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"time"

	"github.com/addrclean/addrclean/api"
)

// The spill's hash index: chains whose heads and signatures, 4 bytes each,
// are the only memory the spill holds. The index starts small and doubles
// while the verdicts outnumber its chains, up to spillMaxBuckets (8 MiB),
// whatever the number of verdicts: a run that spills 40,000 holds 512 KiB;
// at a million verdicts a chain is one record long on average, at ten
// million ten.
const (
	spillMinBuckets = 1 << 12
	spillMaxBuckets = 1 << 20
)

// spillAlign is the alignment of the records in the file: a head holds an
// offset in these units, so that 4 bytes reach 64 GiB (some 40 million
// answers of the usual size, or a billion of the estimate's verdicts, which
// its 44-byte header and 3-byte verdict pad to 48 bytes).
const spillAlign = 16

// spillMax is the size of file the 4-byte offsets reach.
const spillMax = (1<<32 - 1) * spillAlign

// spillBuffer is how much of the file is written at once.
const spillBuffer = 64 << 10

// A record in the spill file, at an offset that is a multiple of
// spillAlign: the offset of the previous record of the same chain in those
// units (0 ends it), the SHA-256 of the dedup key, the length and CRC-32C
// of the encoded verdict, then the verdict, padded with zeros to the next
// record.
const spillHeader = 4 + sha256.Size + 4 + 4

var spillCRC = crc32.MakeTable(crc32.Castagnoli)

// spill keeps the verdicts that the in-memory LRU evicts, so that a
// duplicate is answered once per run however far apart its rows are, while
// memory stays fixed. It is an append-only file of the run's own with a
// chained hash index whose heads stay in memory: an eviction is a
// sequential write, and a lookup of an address never spilled costs no I/O
// at all when its chain is empty. The file is created on the first
// eviction (runs with few distinct addresses never touch the disk) and
// unlinked as soon as it is open, so a killed run leaves nothing behind.
// It is not safe for concurrent use: dedup's mutex guards it.
type spill struct {
	dir     string // where the file goes; "" is os.TempDir()
	f       *os.File
	path    string // set while the file still has a name
	w       *bufio.Writer
	size    int64    // bytes in the file, written or buffered
	flushed int64    // bytes that reached the file
	heads   []uint32 // a power of two of them, each an offset / spillAlign
	// sigs has a chain's signature: the sig bits of every key in it. A
	// key whose bits are not all there is not in the chain, and its
	// lookup reads nothing: most lookups are of addresses never spilled,
	// and a doubled index's chains also hold their twin's older records.
	sigs []uint32
	// maxHeads caps heads (spillMaxBuckets when 0; tests set less).
	maxHeads int
	written  int64 // verdicts kept
	reads    int64 // record headers read by get
	buf      []byte
}

type spillKey [sha256.Size]byte

func spillKeyOf(key string) spillKey { return sha256.Sum256([]byte(key)) }

// bucket is k's chain in an index of n chains, n a power of two: a key's
// chain in an index twice as large is its chain here or that plus n.
func (k *spillKey) bucket(n int) int { return int(binary.LittleEndian.Uint64(k[:8]) & uint64(n-1)) }

// sig is k's signature bits: two of 32, from bytes the bucket does not use.
func (k *spillKey) sig() uint32 { return 1<<(k[8]&31) | 1<<(k[9]&31) }

// errSpillFull is returned by put when the file has reached spillMax.
var errSpillFull = errors.New("the spill file reached its size limit")

// put keeps v for key. A key put twice keeps the later verdict.
func (s *spill) put(key string, v verdict) error {
	if s.f == nil {
		if err := s.open(); err != nil {
			return err
		}
	}
	if s.size > spillMax {
		return s.wrap(fmt.Errorf("%w (%d GiB)", errSpillFull, spillMax>>30))
	}
	if s.written >= int64(len(s.heads)) && len(s.heads) < cmp.Or(s.maxHeads, spillMaxBuckets) {
		s.grow()
	}
	k := spillKeyOf(key)
	b := k.bucket(len(s.heads))
	s.buf = append(s.buf[:0], make([]byte, spillHeader)...)
	s.buf = appendVerdict(s.buf, v)
	body := s.buf[spillHeader:]
	binary.LittleEndian.PutUint32(s.buf[0:], s.heads[b])
	copy(s.buf[4:], k[:])
	binary.LittleEndian.PutUint32(s.buf[4+sha256.Size:], uint32(len(body)))
	binary.LittleEndian.PutUint32(s.buf[4+sha256.Size+4:], crc32.Checksum(body, spillCRC))
	s.buf = append(s.buf, make([]byte, -len(s.buf)&(spillAlign-1))...)
	if _, err := s.w.Write(s.buf); err != nil {
		return s.wrap(err)
	}
	s.heads[b] = uint32(s.size / spillAlign)
	s.sigs[b] |= k.sig()
	s.size += int64(len(s.buf))
	s.written++
	return nil
}

// grow doubles the index. The chain of a key in the larger index starts
// where its chain in the smaller one did, and goes on through the records
// of both of the chains it splits into: longer by the records already
// there, which lookups tell apart by their keys, never wrong.
func (s *spill) grow() {
	n := len(s.heads)
	s.heads = append(s.heads, s.heads...)[:2*n]
	s.sigs = append(s.sigs, s.sigs...)[:2*n]
}

func (s *spill) get(key string) (verdict, bool, error) {
	if s.f == nil {
		return verdict{}, false, nil
	}
	k := spillKeyOf(key)
	b := k.bucket(len(s.heads))
	if sig := k.sig(); s.sigs[b]&sig != sig {
		return verdict{}, false, nil
	}
	var hdr [spillHeader]byte
	for at := s.heads[b]; at != 0; {
		off := int64(at) * spillAlign
		if off+spillHeader > s.flushed {
			if err := s.w.Flush(); err != nil {
				return verdict{}, false, s.wrap(err)
			}
			s.flushed = s.size
		}
		s.reads++
		if _, err := s.f.ReadAt(hdr[:], off); err != nil {
			return verdict{}, false, s.wrap(err)
		}
		prev := binary.LittleEndian.Uint32(hdr[0:])
		if prev >= at { // chains only go back: a damaged one must not loop
			return verdict{}, false, s.wrap(fmt.Errorf("record at %d: %w: bad chain", off, errBadVerdict))
		}
		if !bytes.Equal(hdr[4:4+sha256.Size], k[:]) {
			at = prev
			continue
		}
		n := int64(binary.LittleEndian.Uint32(hdr[4+sha256.Size:]))
		if off+spillHeader+n > s.flushed {
			if err := s.w.Flush(); err != nil {
				return verdict{}, false, s.wrap(err)
			}
			s.flushed = s.size
		}
		body := make([]byte, n)
		if _, err := s.f.ReadAt(body, off+spillHeader); err != nil {
			return verdict{}, false, s.wrap(err)
		}
		if crc32.Checksum(body, spillCRC) != binary.LittleEndian.Uint32(hdr[4+sha256.Size+4:]) {
			return verdict{}, false, s.wrap(fmt.Errorf("record at %d: %w: checksum mismatch", off, errBadVerdict))
		}
		v, err := decodeVerdict(body)
		if err != nil {
			return verdict{}, false, s.wrap(fmt.Errorf("record at %d: %w", off, err))
		}
		return v, true, nil
	}
	return verdict{}, false, nil
}

func (s *spill) open() error {
	f, err := os.CreateTemp(s.dir, "addrclean-dedup-*.tmp")
	if err != nil {
		return s.wrap(err)
	}
	s.f, s.path = f, f.Name()
	// Unlinked while open: a killed run leaves no file behind. Where the
	// system refuses (Windows), close removes it.
	if os.Remove(s.path) == nil {
		s.path = ""
	}
	s.w = bufio.NewWriterSize(f, spillBuffer)
	s.heads, s.sigs = make([]uint32, spillMinBuckets), make([]uint32, spillMinBuckets)
	// Offset 0 ends a chain, so the first record must not start there.
	const magic = "addrclean-dedup-spill/2\n"
	hdr := make([]byte, (len(magic)+spillAlign-1)&^(spillAlign-1))
	copy(hdr, magic)
	if _, err := s.w.Write(hdr); err != nil {
		return s.wrap(err)
	}
	s.size = int64(len(hdr))
	return nil
}

func (s *spill) close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	if s.path != "" {
		_ = os.Remove(s.path)
	}
	s.f, s.w, s.heads, s.sigs = nil, nil, nil, nil
	return err
}

func (s *spill) wrap(err error) error {
	dir := cmp.Or(s.dir, os.TempDir())
	return fmt.Errorf("dedup spill in %s (verdicts kept for far-apart duplicates; set TMPDIR to a writable directory with room): %w", dir, err)
}

// Layout of an encoded verdict: a flags byte, the reason and the kind each
// as a uvarint length and bytes, when the verdict has one (flagAt) the time
// of the answer as a varint of Unix nanoseconds, then the answer as JSON
// when there is one.
const (
	flagResp      = 1 << 0
	flagFromCache = 1 << 1
	// flagAt: a duplicate answered from the spill keeps its answer's time
	// (writers.Result.VerifiedAt), as one answered from memory does, so
	// that the outputs do not depend on how many verdicts memory holds.
	flagAt = 1 << 2
)

var errBadVerdict = errors.New("malformed verdict")

func appendVerdict(b []byte, v verdict) []byte {
	var flags byte
	if v.resp != nil {
		flags |= flagResp
	}
	if v.fromCache {
		flags |= flagFromCache
	}
	if !v.at.IsZero() {
		flags |= flagAt
	}
	b = append(b, flags)
	for _, s := range [...]string{v.reason, v.kind} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	if !v.at.IsZero() {
		b = binary.AppendVarint(b, v.at.UnixNano())
	}
	switch {
	case v.answer != nil:
		b = append(b, v.answer...)
	case v.resp != nil:
		b = api.AppendVerifyResponse(b, v.resp)
	}
	return b
}

func decodeVerdict(b []byte) (verdict, error) {
	if len(b) < 1 {
		return verdict{}, errBadVerdict
	}
	flags := b[0]
	b = b[1:]
	var strs [2]string
	for i := range strs {
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			return verdict{}, errBadVerdict
		}
		strs[i] = string(b[w : w+int(n)])
		b = b[w+int(n):]
	}
	v := verdict{reason: strs[0], kind: strs[1], fromCache: flags&flagFromCache != 0}
	if flags&flagAt != 0 {
		ns, w := binary.Varint(b)
		if w <= 0 {
			return verdict{}, errBadVerdict
		}
		v.at = time.Unix(0, ns)
		b = b[w:]
	}
	if flags&flagResp != 0 {
		resp, err := api.DecodeVerifyResponse(b)
		if err != nil {
			return verdict{}, fmt.Errorf("%w: %w", errBadVerdict, err)
		}
		v.resp = resp
	}
	return v, nil
}
