package cache

import (
	"encoding/binary"
	"hash/crc32"
	"time"
)

// An entry is stored as
//
//	version (1 byte) | CRC-32C (4 bytes) | Unix nanoseconds (8 bytes) | answer as JSON
//
// The CRC-32C covers the entry's key, the version byte, the time and the
// JSON: a flipped byte anywhere in them, or a value that a damaged page
// hands to another key, fails the check instead of becoming another
// address's answer. Version 1 entries (no checksum) are never read as
// answers: they are misses, verified again and overwritten.
const (
	entryVersion = 2
	entryCRC     = 1                // offset of the checksum
	entryTime    = entryCRC + 4     // offset of the time
	entryHeader  = entryTime + 8    // offset of the JSON
	entryOldest  = 1                // the first layout (no checksum)
	entryKeySize = 32               // SHA-256 of the pipeline's key
	crcPoly      = crc32.Castagnoli // hardware-accelerated on amd64 and arm64
)

var crcTable = crc32.MakeTable(crcPoly)

// entryState is what a stored value turned out to be.
type entryState int

const (
	entryOK       entryState = iota
	entryDamaged             // fails its checksum or its layout
	entryOutdated            // written by an older version: a miss
)

// encodeEntry returns the stored value of body for key k at time at.
func encodeEntry(k []byte, at time.Time, body []byte) []byte {
	v := make([]byte, entryHeader, entryHeader+len(body))
	return sealEntry(k, at, append(v, body...))
}

// sealEntry fills in the header of v, an entry whose JSON follows
// entryHeader bytes of room, for key k at time at, and returns v.
func sealEntry(k []byte, at time.Time, v []byte) []byte {
	v[0] = entryVersion
	binary.BigEndian.PutUint64(v[entryTime:], uint64(at.UnixNano()))
	binary.BigEndian.PutUint32(v[entryCRC:], entrySum(k, v))
	return v
}

// entrySum is the checksum of the value v stored under k.
func entrySum(k, v []byte) uint32 {
	c := crc32.Update(0, crcTable, k)
	c = crc32.Update(c, crcTable, v[:entryCRC])
	return crc32.Update(c, crcTable, v[entryTime:])
}

// decodeEntry checks the value v stored under k and splits it into its time
// and JSON body, which alias v.
func decodeEntry(k, v []byte) (time.Time, []byte, entryState) {
	switch {
	case len(v) > 0 && v[0] == entryOldest && len(k) == entryKeySize:
		return time.Time{}, nil, entryOutdated
	case len(v) < entryHeader || v[0] != entryVersion || len(k) != entryKeySize:
		return time.Time{}, nil, entryDamaged
	case binary.BigEndian.Uint32(v[entryCRC:]) != entrySum(k, v):
		return time.Time{}, nil, entryDamaged
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(v[entryTime:]))), v[entryHeader:], entryOK
}
