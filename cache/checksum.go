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
	return checksumFrom(nsChecksum(ns), key, at, answer)
}

// nsChecksum is the CRC-32C of namespace ns and a NUL byte: where the
// checksums of its entries start.
func nsChecksum(ns string) uint32 {
	return crc32.Update(crc32.Update(0, crcTable, []byte(ns)), crcTable, []byte{0})
}

// checksumFrom is checksum, from the namespace's part (nsChecksum): a scan
// of many rows neither converts the namespace nor allocates.
func checksumFrom[K ~string | ~[]byte](c uint32, key K, at int64, answer []byte) uint32 {
	c = crc32.Update(c, crcTable, []byte(key))
	var t [9]byte // NUL, then the time
	binary.BigEndian.PutUint64(t[1:], uint64(at))
	c = crc32.Update(c, crcTable, t[:])
	return crc32.Update(c, crcTable, answer)
}

// checksumOK reports whether crc, as stored (a bigint), is the checksum of
// the other columns.
func checksumOK(crc int64, ns, key string, at int64, answer []byte) bool {
	return crc>>32 == 0 && uint32(crc) == checksum(ns, key, at, answer)
}
