package cache

import (
	"encoding/binary"
	"hash/crc32"
)

var crcTable = crc32.MakeTable(crc32.Castagnoli) // hardware-accelerated on amd64 and arm64

// checksum is an answer's CRC-32C: of its namespace, a NUL byte, its key, a
// NUL byte, its time (8 bytes, big-endian) and its JSON. A changed byte in
// any column, or a damaged page that hands one key's answer to another,
// fails it.
func checksum(ns, key string, at int64, answer []byte) uint32 {
	c := crc32.Update(0, crcTable, []byte(ns))
	c = crc32.Update(c, crcTable, []byte{0})
	c = crc32.Update(c, crcTable, []byte(key))
	c = crc32.Update(c, crcTable, []byte{0})
	c = crc32.Update(c, crcTable, binary.BigEndian.AppendUint64(nil, uint64(at)))
	return crc32.Update(c, crcTable, answer)
}

// checksumOK reports whether crc, as stored (a bigint), is the checksum of
// the other columns.
func checksumOK(crc int64, ns, key string, at int64, answer []byte) bool {
	return crc>>32 == 0 && uint32(crc) == checksum(ns, key, at, answer)
}
