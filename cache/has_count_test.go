package cache

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"
)

// digestOf is the digest CountAnswered takes for an address key.
func digestOf(t *testing.T, key string) uint64 {
	dg, ok := keyDigest(entryKey(key))
	if !ok {
		t.Fatalf("no digest for %q", key)
	}
	return dg
}

// TestCountAnsweredIsGet: CountAnswered counts, by every way it reads the
// file (the index walked or looked up per digest, the rows scanned or read
// by row id, or read ahead), the keys that GetEncoded answers one at a
// time: answers committed and still queued, expired ones, damaged ones,
// another namespace's, keys not stored. Damaged entries asked about are
// counted in Damaged as Get counts them, and only those.
func TestCountAnsweredIsGet(t *testing.T) {
	for _, tc := range []struct {
		name              string
		walk, scan        bool
		ahead, stop, late bool
	}{
		{name: "seek index, seek rows"},
		{name: "walk index, seek rows", walk: true},
		{name: "walk index, scan rows", walk: true, scan: true},
		{name: "seek index, scan rows", scan: true},
		{name: "read ahead, walk index", ahead: true, walk: true},
		{name: "read ahead, stopped for a few requests", ahead: true, stop: true},
		{name: "read ahead, answers stored since", ahead: true, late: true, walk: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testCountAnsweredIsGet(t, tc.walk, tc.scan, tc.ahead, tc.stop, tc.late) })
		})
	}
}

func testCountAnsweredIsGet(t *testing.T, walk, scan, ahead, stop, late bool) {
	walkIndexShare, scanRowsShare = 0, 0 // never: look up, read by row id
	if walk {
		walkIndexShare = 1 << 20
	}
	if scan {
		scanRowsShare = 1 << 20
	}
	t.Cleanup(func() { walkIndexShare, scanRowsShare = 32, 4 })
	path := filepath.Join(t.TempDir(), "c.db")
	d := open(t, path)
	ns := LiveNamespace("https://x", "k")
	s := store(t, d, ns, time.Hour)
	other := store(t, d, LiveNamespace("https://x", "k2"), time.Hour)
	keys := hasKeys(2*hasBatch + 37)
	damaged := []int{7, 301}
	for i, k := range keys[:len(keys)-2] {
		switch {
		case i%5 == 0:
			mustPut(t, other, k, answer("O")) // another namespace's only
		case i%13 == 0:
			// not stored
		default:
			mustPut(t, s, k, answer(fmt.Sprint(i)))
		}
		if i == len(keys)/3 {
			time.Sleep(50 * time.Minute) // the ones before expire below (the bubble's clock)
		}
	}
	for i := range 40 { // answers never asked about, one of them damaged
		mustPut(t, s, fmt.Sprint("elsewhere ", i), answer("E"))
	}
	if err := d.batch.Flush(); err != nil {
		t.Fatal(err)
	}
	// The file is open: the damage goes through its connection.
	for _, k := range append([]string{"elsewhere 3"}, keys[damaged[0]], keys[damaged[1]]) {
		err := d.f.Do(context.Background(), func(conn *sql.Conn) error {
			_, err := conn.ExecContext(context.Background(), "UPDATE cache_answers SET crc = crc + 1 WHERE key = ?", entryKey(k))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(20 * time.Minute)
	// Some answers still queued for their commit, one of them of a key
	// whose stored answer is damaged; read ahead, they are committed first,
	// or (late) after the scan.
	queued := []string{keys[1], keys[damaged[1]], keys[len(keys)-3]}
	queue := func() {
		for _, k := range queued {
			mustPut(t, s, k, answer("Q"))
		}
	}
	if !ahead {
		queue()
	} else if !late {
		queue()
		if err := d.batch.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	asked := map[uint64]bool{}
	if stop {
		keys = keys[:20] // few: the scan ahead is stopped, the index looked up
	}
	for _, k := range keys {
		asked[digestOf(t, k)] = true
	}
	if ahead {
		stopAhead := s.ScanAhead(context.Background())
		defer stopAhead()
		synctest.Wait()
	}
	if late {
		queue()
		if err := d.batch.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.CountAnswered(context.Background(), len(asked), func(dg uint64) bool { return asked[dg] }, maps.Keys(asked))
	if err != nil {
		t.Fatal(err)
	}
	gotDamaged := s.Damaged()
	var want int64
	for _, k := range slices.Compact(slices.Sorted(slices.Values(keys))) {
		_, _, _, ok, err := s.GetEncoded(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			want++
		}
	}
	if got != want {
		t.Errorf("CountAnswered = %d, Get answers %d of %d keys", got, want, len(asked))
	}
	if wantDamaged := s.Damaged() - gotDamaged; gotDamaged != wantDamaged {
		t.Errorf("CountAnswered counted %d damaged, Get %d", gotDamaged, wantDamaged)
	}
	if want == 0 || want == int64(len(asked)) {
		t.Errorf("%d of %d keys answered: the case proves nothing", want, len(asked))
	}
}

// TestKeyDigest: a stored key's digest is its first 16 hex digits; any
// other text has none (no Get looks it up).
func TestKeyDigest(t *testing.T) {
	k := entryKey("1 main street")
	for _, tc := range []struct {
		key  string
		want uint64
		ok   bool
	}{
		{k, 0, true},
		{"0123456789abcdef" + k[16:], 0x0123456789abcdef, true},
		{"ffffffffffffffff" + k[16:], 0xffffffffffffffff, true},
		{"0123456789ABCDEF" + k[16:], 0, false}, // upper case: entryKey never writes it
		{k[:63] + "g", 0, false},
		{k[:63], 0, false},
		{k + "0", 0, false},
		{"", 0, false},
	} {
		dg, ok := keyDigest(tc.key)
		if tc.key == k {
			tc.want = digestOfKey(t, k)
		}
		if ok != tc.ok || (ok && dg != tc.want) {
			t.Errorf("keyDigest(%q) = %#x, %v; want %#x, %v", tc.key, dg, ok, tc.want, tc.ok)
		}
		if bdg, bok := keyDigest([]byte(tc.key)); bdg != dg || bok != ok {
			t.Errorf("keyDigest of bytes %q = %#x, %v; of a string %#x, %v", tc.key, bdg, bok, dg, ok)
		}
	}
}

// digestOfKey parses the first 16 hex digits of a stored key.
func digestOfKey(t *testing.T, k string) uint64 {
	dg, err := strconv.ParseUint(k[:16], 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	return dg
}

// TestChecksumFrom: the checksum from a namespace's part is the checksum.
func TestChecksumFrom(t *testing.T) {
	for _, at := range []int64{0, 1, -1, 1764150000000} {
		for _, key := range []string{"", entryKey("k")} {
			want := checksum("live-x", key, at, []byte(`{"a":1}`))
			if got := checksumFrom(nsChecksum("live-x"), []byte(key), at, []byte(`{"a":1}`)); got != want {
				t.Errorf("at %d, key %q: %#x, want %#x", at, key, got, want)
			}
		}
	}
}
