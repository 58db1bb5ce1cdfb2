package cache

import (
	"encoding/binary"
	"time"

	"github.com/addrclean/addrclean/internal/boltfile"
)

// An entry is stored as
//
//	version (1 byte) | CRC-32C (4 bytes) | Unix nanoseconds (8 bytes) | answer as JSON
//
// sealed by boltfile.Seal: the CRC-32C covers the entry's key, the version
// byte, the time and the JSON. Version 1 entries (no checksum) are never
// read as answers: they are misses, verified again and overwritten.
const (
	entryVersion = 2
	entryCRC     = 1                 // offset of the checksum
	entryTime    = boltfile.SealSize // offset of the time
	entryHeader  = entryTime + 8     // offset of the JSON
	entryOldest  = 1                 // the first layout (no checksum)
	entryKeySize = 32                // SHA-256 of the pipeline's key
)

// entryState is what a stored value turned out to be.
type entryState int

const (
	entryOK       entryState = iota
	entryDamaged             // fails its checksum or its layout
	entryOutdated            // written by an older version: a miss
)

// sealEntry fills in the header of v, an entry whose JSON follows
// entryHeader bytes of room, for key k at time at, and returns v.
func sealEntry(k []byte, at time.Time, v []byte) []byte {
	v[0] = entryVersion
	binary.BigEndian.PutUint64(v[entryTime:], uint64(at.UnixNano()))
	return boltfile.Seal(k, v)
}

// decodeEntry checks the value v stored under k and splits it into its time
// and JSON body, which alias v.
func decodeEntry(k, v []byte) (time.Time, []byte, entryState) {
	switch {
	case len(v) > 0 && v[0] == entryOldest && len(k) == entryKeySize:
		return time.Time{}, nil, entryOutdated
	case len(v) < entryHeader || v[0] != entryVersion || len(k) != entryKeySize || !boltfile.Sealed(k, v):
		return time.Time{}, nil, entryDamaged
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(v[entryTime:]))), v[entryHeader:], entryOK
}
