package cache

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"iter"
	"math"
	"slices"
	"time"

	"modernc.org/sqlite"
)

// Which way CountAnswered reads the file. A walk of the namespace's index
// reads every leaf of it once (about 50 entries a page); a look-up per
// digest reads a leaf for each. Rows: a scan reads every page of the table
// once, in order (about 2 answers a page); a read by row id a page for
// each row, and descends the tree to it. Variables for the tests, which
// take every way on small files.
var (
	// walkIndexShare: the index is walked when the digests number at
	// least the file's pages over it.
	walkIndexShare = 32
	// scanRowsShare: the table is scanned when the rows to read number at
	// least the file's pages over it.
	scanRowsShare = 4
)

// CountAnswered returns how many of n requests, known by their digests (the
// first 8 bytes, big-endian, of the SHA-256 of the address key: the first
// 16 hex digits of the stored key), the store answers as Get would: an
// entry stored under the key, passing its checksum and younger than the
// time to live. has tells whether a digest is one of them, all yields them.
//
// It reads the file in two passes, each in the file's order. The index
// (every entry of the namespace, when the digests are many against the
// file's size; else a look-up per digest) gives the row id of each digest's
// entry; then the rows are read by increasing row id (a scan of the table
// when they are many), and an entry is counted when its row is the one the
// index names (its key is the index entry's) and passes the checks of Get.
// After ScanAhead both are done already: its rows are counted by their
// keys' digests (see aheadRows). Answers queued for their
// commit are looked at first, as Get does. Damaged entries are misses,
// counted in Damaged; a file that fails to read makes the cache fail
// (DB.Failed) and counts nothing, as Get misses then. Only a cancelled ctx
// is an error.
//
// Two stored keys of one digest, or a request's digest shared by another
// stored key, are as likely as two SHA-256 prefixes of 64 bits being equal
// (docs/estimate.md); the first entry in key order is taken.
func (s *Store) CountAnswered(ctx context.Context, n int, has func(digest uint64) bool, all iter.Seq[uint64]) (int64, error) {
	d := s.d
	var rows *aheadRows
	if ahead := s.ahead.Swap(nil); ahead != nil {
		few := int64(n)*int64(walkIndexShare) < ahead.pages
		if few {
			ahead.cancel() // looking them up reads less than the rest of the scan
		}
		<-ahead.done
		if !few && d.batch.Commits() == ahead.commits {
			rows = ahead.rows // else answers were stored since it began: read the file again
		}
	}
	if n <= 0 || d.Failed() != nil {
		return 0, nil
	}
	var count int64
	// Answers queued for their batch's commit are not in the file yet; the
	// latest queued for a key decides for it, as in GetEncoded.
	queued := map[uint64]bool{}
	d.batch.Pending(func(es []entry) {
		for i := len(es) - 1; i >= 0; i-- {
			e := es[i]
			dg, ok := keyDigest(e.key)
			if e.ns != s.ns || !ok || !has(dg) || queued[dg] {
				continue
			}
			queued[dg] = true
			if s.fresh(e.key, e.at, e.answer, int64(checksum(e.ns, e.key, e.at, e.answer))) {
				count++
			}
		}
	})
	wanted := func(dg uint64) bool { return has(dg) && !queued[dg] }
	found, err := s.countFile(ctx, n, wanted, all, rows)
	switch {
	case err != nil && ctx.Err() != nil:
		return 0, ctx.Err()
	case err != nil:
		d.fail(fmt.Errorf("%w (read)", err))
		return 0, nil
	}
	return count + found, nil
}

// countFile is CountAnswered's reading of the file, for the digests that
// wanted accepts (all yields them, and maybe more); rows, if not nil, are
// the rows read ahead.
func (s *Store) countFile(ctx context.Context, n int, wanted func(uint64) bool, all iter.Seq[uint64], ahead *aheadRows) (int64, error) {
	if ahead != nil {
		return ahead.count(wanted, s.miss), nil
	}
	var count int64
	err := s.d.f.Do(ctx, func(c *sql.Conn) error {
		var pages int64
		if err := c.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
			return err
		}
		var (
			matches []indexed
			err     error
		)
		if int64(n)*int64(walkIndexShare) >= pages {
			matches, err = s.walkIndex(ctx, c, wanted)
		} else {
			matches, err = s.seekIndex(ctx, c, wanted, all)
		}
		if err != nil || len(matches) == 0 {
			return err
		}
		slices.SortFunc(matches, func(a, b indexed) int { return cmp.Compare(a.rowid, b.rowid) })
		check := func(m indexed, r row) {
			switch {
			case keyHash(r.key) != m.hash: // not the row of the index entry's key
			case !r.sound():
				s.miss()
			case r.fresh(s.ttl):
				count++
			}
		}
		if int64(len(matches))*int64(scanRowsShare) >= pages {
			return s.scanRows(ctx, c, matches[0].rowid, func(r row) bool {
				for len(matches) > 0 && matches[0].rowid < r.rowid {
					matches = matches[1:] // named by the index, not the namespace's row: a miss
				}
				if len(matches) > 0 && matches[0].rowid == r.rowid {
					check(matches[0], r)
					matches = matches[1:]
				}
				return len(matches) > 0
			})
		}
		return s.seekRows(ctx, c, matches, check)
	})
	return count, err
}

// walkIndex reads the namespace's index from end to end (a covering index:
// no row is read) and returns its entries whose digest is wanted, the first
// of each digest.
func (s *Store) walkIndex(ctx context.Context, c *sql.Conn, wanted func(uint64) bool) ([]indexed, error) {
	rows, err := c.QueryContext(ctx, walkIndexSQL, s.ns)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var (
		matches []indexed
		key     sql.RawBytes
		rowid   int64
		last    uint64
		seen    bool
	)
	for rows.Next() {
		if err := rows.Scan(&key, &rowid); err != nil {
			return nil, err
		}
		dg, ok := keyDigest(key)
		if !ok || (seen && dg == last) || !wanted(dg) { // keys come in order: one digest's are together
			continue
		}
		matches = append(matches, indexed{rowid, keyHash(key)})
		last, seen = dg, true
	}
	return matches, rows.Err()
}

// seekIndex looks each digest up in the namespace's index: the first entry
// whose key begins with its 16 hex digits.
func (s *Store) seekIndex(ctx context.Context, c *sql.Conn, wanted func(uint64) bool, all iter.Seq[uint64]) ([]indexed, error) {
	st, err := c.PrepareContext(ctx, seekIndexSQL)
	if err != nil {
		return nil, err
	}
	defer func() { _ = st.Close() }()
	var matches []indexed
	for dg := range all {
		if !wanted(dg) {
			continue
		}
		lo, hi := digestRange(dg)
		var (
			rowid int64
			key   string
		)
		switch err := st.QueryRowContext(ctx, s.ns, lo, hi).Scan(&key, &rowid); {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return nil, err
		default:
			if _, ok := keyDigest(key); ok {
				matches = append(matches, indexed{rowid, keyHash(key)})
			}
		}
	}
	return matches, nil
}

// row is an entry as CountAnswered reads it: its answer is not read into
// Go, the database computes its checksum (checksumFunc).
type row struct {
	rowid, at int64
	key       []byte // the driver's memory, valid during the call
	crc       int64  // as stored
	sum       int64  // as computed from the other columns
}

// sound reports whether the row passes its checksum.
func (r row) sound() bool { return r.crc>>32 == 0 && r.crc == r.sum }

// fresh reports whether the row is within the time to live ttl.
func (r row) fresh(ttl time.Duration) bool { return time.Since(time.UnixMilli(r.at)) <= ttl }

// scanRows reads the table in row id order from row id first on, and hands
// each row of the namespace to each until it returns false.
func (s *Store) scanRows(ctx context.Context, c *sql.Conn, first int64, each func(row) bool) error {
	rows, err := c.QueryContext(ctx, scanRowsSQL, s.ns, first)
	if err != nil {
		return err
	}
	return readRows(rows, each)
}

// seekRows reads the rows of matches (in row id order) by row id, hasBatch
// a query, and hands each to check.
func (s *Store) seekRows(ctx context.Context, c *sql.Conn, matches []indexed, check func(indexed, row)) error {
	ids := make([]int64, len(matches))
	for i, m := range matches {
		ids[i] = m.rowid
	}
	return forChunks(ids, func(chunk []any) error {
		return s.queryOn(ctx, c, rowidRowSQL(len(chunk)), chunk, func(rows *sql.Rows) error {
			return readRows(rows, func(r row) bool {
				if i, ok := slices.BinarySearchFunc(matches, r.rowid, func(m indexed, id int64) int { return cmp.Compare(m.rowid, id) }); ok {
					check(matches[i], r)
				}
				return true
			})
		})
	})
}

// readRows hands each of rows (scanRowsSQL's columns) to each until it
// returns false, and closes rows.
func readRows(rows *sql.Rows, each func(row) bool) error {
	defer rows.Close()
	var r row
	for rows.Next() {
		if err := rows.Scan(&r.rowid, (*sql.RawBytes)(&r.key), &r.at, &r.crc, &r.sum); err != nil {
			return err
		}
		if !each(r) {
			return nil
		}
	}
	return rows.Err()
}

// checksumFunc is the SQL function that computes an entry's checksum in
// the database, from the namespace, the key, the time and the answer as
// blobs (the bytes of the text): an estimate reads every answer of the
// file, and this way none is copied into Go memory. Its arguments are
// SQLite's memory, not kept past the call (VolatileArgs). Arguments of
// other types (a damaged file) give -1, which no stored checksum equals.
const checksumFunc = "addrclean_cache_checksum"

func init() {
	sqlite.MustRegisterFunction(checksumFunc, &sqlite.FunctionImpl{
		NArgs: 4, Deterministic: true, VolatileArgs: true,
		Scalar: func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			ns, ok1 := args[0].([]byte)
			key, ok2 := args[1].([]byte)
			at, ok3 := args[2].(int64)
			answer, ok4 := args[3].([]byte)
			if !ok1 || !ok2 || !ok3 || !ok4 {
				return int64(-1), nil
			}
			c := crc32.Update(crc32.Update(0, crcTable, ns), crcTable, []byte{0})
			return int64(checksumFrom(c, key, at, answer)), nil
		},
	})
}

// maxAhead is how many entries ScanAhead keeps (8 bytes each, 32 MiB):
// past it, the scan stops and CountAnswered reads the index and the rows
// it needs itself.
const maxAhead = 4 << 20

// ahead is a scan of the rows started by ScanAhead.
type ahead struct {
	pages   int64 // the file's, when it started
	commits int64 // the batches committed then: a later one makes rows stale
	cancel  context.CancelFunc
	done    chan struct{}
	rows    *aheadRows // nil when stopped before the end
}

// aheadRows are the digests (keyDigest) of the namespace's entries: fresh
// those that pass their checksum and are within the time to live, damaged
// those that fail it. Expired entries, and keys no Get looks up, are not
// kept.
//
// Counting from them trusts the (namespace, key) index to name each key's
// row, as it does after the open's quick_check of its structure: a row
// the index does not reach (a damage only PRAGMA integrity_check finds)
// would be counted, where Get misses it. Walking the index as well cost a
// fifth of a dry run over a full cache (BENCHMARKS.md, issue 23).
type aheadRows struct {
	fresh, damaged []uint64
}

// count counts the wanted digests with a fresh entry, once each, and calls
// miss for each wanted digest with only a damaged one, as Get would.
func (a *aheadRows) count(wanted func(uint64) bool, miss func()) int64 {
	var hits []uint64
	for _, dg := range a.fresh {
		if wanted(dg) {
			hits = append(hits, dg)
		}
	}
	// Two stored keys of one digest (docs/estimate.md): one request.
	slices.Sort(hits)
	hits = slices.Compact(hits)
	for _, dg := range a.damaged {
		if _, hit := slices.BinarySearch(hits, dg); wanted(dg) && !hit {
			miss()
		}
	}
	return int64(len(hits))
}

// ScanAhead starts reading every row of the namespace in the background,
// in the file's order, keeping 8 bytes of each (at most maxAhead), so that
// the next CountAnswered reads nothing more: an estimate calls it when
// the cache is open and then reads its input, on another core. The scan
// uses the file's connection until it ends; CountAnswered waits for it, or
// stops it when it is asked about few requests, and reads the file itself
// when answers were committed since the scan began (Prune and Clear are not
// run at the same time as an estimate). stop stops it and waits.
func (s *Store) ScanAhead(ctx context.Context) (stop func()) {
	var pages int64
	err := s.d.f.Do(ctx, func(c *sql.Conn) error {
		return c.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages)
	})
	if err != nil || s.d.Failed() != nil {
		return func() {} // CountAnswered meets the error again, if it lasts
	}
	ctx, cancel := context.WithCancel(ctx)
	a := &ahead{pages: pages, commits: s.d.batch.Commits(), cancel: cancel, done: make(chan struct{})}
	s.ahead.Store(a)
	go func() {
		defer close(a.done)
		rows := &aheadRows{}
		err := s.d.f.Do(ctx, func(c *sql.Conn) error {
			return s.scanRows(ctx, c, math.MinInt64, func(r row) bool {
				dg, ok := keyDigest(r.key)
				switch sound := r.sound(); {
				case !ok, sound && !r.fresh(s.ttl):
					return true // no Get's key; expired: a miss, not a damaged entry
				case sound:
					rows.fresh = append(rows.fresh, dg)
				default:
					rows.damaged = append(rows.damaged, dg)
				}
				return len(rows.fresh)+len(rows.damaged) < maxAhead
			})
		})
		if err == nil && len(rows.fresh)+len(rows.damaged) < maxAhead {
			a.rows = rows // else CountAnswered reads the rows itself
		}
	}()
	return func() {
		cancel()
		<-a.done
	}
}

const (
	// walkIndexSQL reads the namespace's entries of the (namespace, key)
	// index, in key order, without reading a row (TestCountQueryPlans).
	walkIndexSQL = "SELECT key, rowid FROM cache_answers WHERE namespace = ? ORDER BY key"
	// seekIndexSQL is the first entry whose key begins with a digest's hex
	// digits: key >= them and < those of the next digest.
	seekIndexSQL = "SELECT key, rowid FROM cache_answers WHERE namespace = ? AND key >= ? AND key < ? ORDER BY key LIMIT 1"
	// scanRowsSQL reads the table in row id order from a row id on; the +
	// keeps SQLite from going through the (namespace, key) index instead.
	scanRowsSQL = "SELECT rowid, " + rowColumns + " FROM cache_answers WHERE +namespace = ? AND rowid >= ? ORDER BY rowid"
	// rowColumns are a row's columns after its row id (see row).
	rowColumns = "key, obtained_ms, crc, " + checksumFunc + "(CAST(namespace AS BLOB), CAST(key AS BLOB), obtained_ms, CAST(answer AS BLOB))"
)

// rowidRowSQL reads the entries of n row ids, if they are the namespace's,
// with their row ids.
func rowidRowSQL(n int) string {
	return "SELECT rowid, " + rowColumns + " FROM cache_answers WHERE +namespace = ? AND rowid IN (" + marks(n) + ")"
}

// keyDigest is the digest of a stored key (64 lower-case hex digits, as
// entryKey writes them): its first 16 digits as a number. ok is false for
// any other text, which no Get looks up.
func keyDigest[T ~string | ~[]byte](key T) (uint64, bool) {
	if len(key) != 64 {
		return 0, false
	}
	var dg uint64
	bad := byte(0)
	for i := range len(key) {
		v := hexValue[key[i]]
		bad |= v // 0xff for a byte that is not a lower-case hex digit
		if i < 16 {
			dg = dg<<4 | uint64(v)
		}
	}
	return dg, bad&0xf0 == 0
}

// hexValue is the value of each lower-case hex digit, 0xff for any other
// byte.
var hexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i, c := range "0123456789abcdef" {
		t[c] = byte(i)
	}
	return t
}()

// digestRange is the range [lo, hi) of the stored keys of digest dg.
func digestRange(dg uint64) (lo, hi string) {
	lo = fmt.Sprintf("%016x", dg)
	if dg == math.MaxUint64 {
		return lo, "g" // after every hex digit
	}
	return lo, fmt.Sprintf("%016x", dg+1)
}

// indexed is an entry of the namespace's index: the row id it names and
// the hash of its key (keyHash).
type indexed struct {
	rowid int64
	hash  uint64
}

// keySeed seeds keyHash: one per process, as no hash is kept.
var keySeed = maphash.MakeSeed()

// keyHash is a 64-bit hash of a whole stored key. A row is the entry the
// index names when its key hashes as the index entry's: the digest alone
// (the key's first 16 hex digits) would take a row for an index entry
// damaged in its other digits, which Get never finds.
func keyHash[T ~string | ~[]byte](key T) uint64 {
	return maphash.String(keySeed, string(key))
}
