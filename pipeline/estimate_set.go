package pipeline

import (
	"crypto/sha256"
	"encoding/binary"
	"iter"
)

// requestDigest is the digest by which the estimate tells distinct requests
// apart: the first 8 bytes, big-endian, of the SHA-256 of the dedup key.
// The cache stores the hex SHA-256 of the same key, so the digest is also
// the first 16 hex digits of the key the cache files its answer under
// (docs/storage.md): the cache is asked about digests, not keys.
func requestDigest(key string) uint64 {
	sum := sha256.Sum256([]byte(key))
	return binary.BigEndian.Uint64(sum[:8])
}

// digestSet is a set of 64-bit digests, 8 bytes a slot: open addressing
// with linear probing in a table of a power of two slots kept at most three
// quarters full (between 10.7 and 21.3 bytes a digest). A digest is a
// SHA-256 prefix, evenly spread: its low bits index the table as they are.
// Slot value 0 is empty; the digest 0 is kept aside. The zero value is an
// empty set.
type digestSet struct {
	slots []uint64
	n     int  // digests in slots
	zero  bool // whether the digest 0 is in the set
}

// add puts d in the set and reports whether it was not there yet.
func (s *digestSet) add(d uint64) bool {
	if d == 0 {
		added := !s.zero
		s.zero = true
		return added
	}
	if 4*(s.n+1) > 3*len(s.slots) {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	for i := d & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case d:
			return false
		case 0:
			s.slots[i] = d
			s.n++
			return true
		}
	}
}

// has reports whether d is in the set.
func (s *digestSet) has(d uint64) bool {
	if d == 0 {
		return s.zero
	}
	if len(s.slots) == 0 {
		return false
	}
	mask := uint64(len(s.slots) - 1)
	for i := d & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case d:
			return true
		case 0:
			return false
		}
	}
}

// len is the number of digests in the set.
func (s *digestSet) len() int {
	if s.zero {
		return s.n + 1
	}
	return s.n
}

// all yields the digests of the set, in no order.
func (s *digestSet) all() iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		if s.zero && !yield(0) {
			return
		}
		for _, d := range s.slots {
			if d != 0 && !yield(d) {
				return
			}
		}
	}
}

// grow doubles the table (1,024 slots at first) and places the digests
// again.
func (s *digestSet) grow() {
	old := s.slots
	s.slots = allocSlots(max(2*len(old), 1024))
	s.n = 0
	for _, d := range old {
		if d != 0 {
			s.add(d)
		}
	}
	freeSlots(old)
}

// release gives the table's memory back; the set is empty after it.
func (s *digestSet) release() {
	freeSlots(s.slots)
	*s = digestSet{}
}
