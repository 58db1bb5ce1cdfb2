package boltfile

import (
	"encoding/binary"
	"hash/crc32"
)

// SealSize is the room a sealed value keeps at its start: a version byte,
// then the CRC-32C of the key it is stored under, of the version byte and
// of the rest of the value. bbolt checks no page's content: the checksum
// makes a changed byte, or a value that a damaged page hands to another
// key, fail instead of being read as data.
const SealSize = 5

var crcTable = crc32.MakeTable(crc32.Castagnoli) // hardware-accelerated on amd64 and arm64

// Seal fills in the checksum of v, stored under k, and returns v.
func Seal(k, v []byte) []byte {
	binary.BigEndian.PutUint32(v[1:], sum(k, v))
	return v
}

// Sealed reports whether v, stored under k, passes its checksum.
func Sealed(k, v []byte) bool {
	return len(v) >= SealSize && binary.BigEndian.Uint32(v[1:]) == sum(k, v)
}

func sum(k, v []byte) uint32 {
	c := crc32.Update(0, crcTable, k)
	c = crc32.Update(c, crcTable, v[:1])
	return crc32.Update(c, crcTable, v[SealSize:])
}
