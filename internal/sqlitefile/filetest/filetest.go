package filetest

import (
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"testing"

	_ "modernc.org/sqlite" // the driver
)

// Exec runs stmts on the SQLite database at path (created if missing), the
// way sqlite3 would, and closes it.
func Exec(t testing.TB, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// Bbolt returns the first pages of a bbolt file as an older addrclean wrote
// its cache and journal: two meta pages with bbolt's magic number.
func Bbolt() []byte {
	const page = 4096
	b := make([]byte, 4*page)
	for i := range 2 {
		m := b[i*page:]
		binary.LittleEndian.PutUint64(m, uint64(i)) // page id
		binary.LittleEndian.PutUint16(m[8:], 0x04)  // meta page
		binary.LittleEndian.PutUint32(m[16:], 0xED0CDAED)
		binary.LittleEndian.PutUint32(m[20:], 2) // version
		binary.LittleEndian.PutUint32(m[24:], page)
	}
	return b
}

// ZeroPages returns a copy of the SQLite file b with its page n (1-based,
// of 4,096 bytes) zeroed, as a bad disk block or a hole would leave it.
func ZeroPages(b []byte, n int) []byte {
	c := append([]byte(nil), b...)
	lo, hi := (n-1)*4096, n*4096
	if lo >= len(c) {
		return c
	}
	clear(c[lo:min(hi, len(c))])
	return c
}

// Sums is the SHA-256 in hex of the SQLite file at path and of its WAL
// ("absent" for a file that is not there): what a test compares to show
// that an open left the file as it was.
func Sums(t testing.TB, path string) [2]string {
	t.Helper()
	var sums [2]string
	for i, p := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			sums[i] = "absent"
		case err != nil:
			t.Fatal(err)
		default:
			h := sha256.Sum256(b)
			sums[i] = hex.EncodeToString(h[:])
		}
	}
	return sums
}

// JournalMode is the journal mode of the SQLite file at path, read the way
// sqlite3 would (a read: it leaves a file in DELETE mode as it is).
func JournalMode(t testing.TB, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var m string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&m); err != nil {
		t.Fatal(err)
	}
	return m
}
