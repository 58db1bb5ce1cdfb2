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

	"github.com/addrclean/addrclean/api"
)

// spillBuckets is the number of chains of the spill's hash index. Their
// heads are the only memory the spill holds (8 bytes each, 8 MiB), whatever
// the number of verdicts: at a million verdicts a chain is one record long
// on average, at ten million ten.
const spillBuckets = 1 << 20

// spillBuffer is how much of the file is written at once.
const spillBuffer = 64 << 10

// A record in the spill file: the offset of the previous record of the same
// chain (0 ends it), the SHA-256 of the dedup key, the length and CRC-32C of
// the encoded verdict, then the verdict.
const spillHeader = 8 + sha256.Size + 4 + 4

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
	size    int64 // bytes in the file, written or buffered
	flushed int64 // bytes that reached the file
	heads   []int64
	written int64 // verdicts kept
	buf     []byte
}

type spillKey [sha256.Size]byte

func spillKeyOf(key string) spillKey { return sha256.Sum256([]byte(key)) }

func (k *spillKey) bucket() int { return int(binary.LittleEndian.Uint64(k[:8]) % spillBuckets) }

// put keeps v for key. A key put twice keeps the later verdict.
func (s *spill) put(key string, v verdict) error {
	if s.f == nil {
		if err := s.open(); err != nil {
			return err
		}
	}
	k := spillKeyOf(key)
	b := k.bucket()
	s.buf = append(s.buf[:0], make([]byte, spillHeader)...)
	s.buf = appendVerdict(s.buf, v)
	body := s.buf[spillHeader:]
	binary.LittleEndian.PutUint64(s.buf[0:], uint64(s.heads[b]))
	copy(s.buf[8:], k[:])
	binary.LittleEndian.PutUint32(s.buf[8+sha256.Size:], uint32(len(body)))
	binary.LittleEndian.PutUint32(s.buf[8+sha256.Size+4:], crc32.Checksum(body, spillCRC))
	if _, err := s.w.Write(s.buf); err != nil {
		return s.wrap(err)
	}
	s.heads[b] = s.size
	s.size += int64(len(s.buf))
	s.written++
	return nil
}

func (s *spill) get(key string) (verdict, bool, error) {
	if s.f == nil {
		return verdict{}, false, nil
	}
	k := spillKeyOf(key)
	var hdr [spillHeader]byte
	for off := s.heads[k.bucket()]; off != 0; {
		if off+spillHeader > s.flushed {
			if err := s.w.Flush(); err != nil {
				return verdict{}, false, s.wrap(err)
			}
			s.flushed = s.size
		}
		if _, err := s.f.ReadAt(hdr[:], off); err != nil {
			return verdict{}, false, s.wrap(err)
		}
		prev := int64(binary.LittleEndian.Uint64(hdr[0:]))
		if !bytes.Equal(hdr[8:8+sha256.Size], k[:]) {
			off = prev
			continue
		}
		n := int64(binary.LittleEndian.Uint32(hdr[8+sha256.Size:]))
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
		if crc32.Checksum(body, spillCRC) != binary.LittleEndian.Uint32(hdr[8+sha256.Size+4:]) {
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
	s.heads = make([]int64, spillBuckets)
	// Offset 0 ends a chain, so the first record must not start there.
	if _, err := s.w.WriteString("addrclean-dedup-spill/1\n"); err != nil {
		return s.wrap(err)
	}
	s.size = int64(s.w.Buffered())
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
	s.f, s.w, s.heads = nil, nil, nil
	return err
}

func (s *spill) wrap(err error) error {
	dir := cmp.Or(s.dir, os.TempDir())
	return fmt.Errorf("dedup spill in %s (verdicts kept for far-apart duplicates; set TMPDIR to a writable directory with room): %w", dir, err)
}

// Layout of an encoded verdict: a flags byte, the reason and the kind each
// as a uvarint length and bytes, then the answer as JSON when there is one.
const (
	flagResp      = 1 << 0
	flagFromCache = 1 << 1
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
	b = append(b, flags)
	for _, s := range [...]string{v.reason, v.kind} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
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
	if flags&flagResp != 0 {
		resp, err := api.DecodeVerifyResponse(b)
		if err != nil {
			return verdict{}, fmt.Errorf("%w: %w", errBadVerdict, err)
		}
		v.resp = resp
	}
	return v, nil
}
