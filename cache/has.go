package cache

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/addrclean/addrclean/api"
)

// hasBatch is how many keys (or row ids) one query asks about. One query
// per key costs a statement's start and a read transaction each (about
// 15 µs in modernc SQLite, a round trip in PostgreSQL); a few hundred at
// once share them, and stay far under both databases' limits on
// parameters.
const hasBatch = 256

// GetMany looks keys up as GetEncoded does, hasBatch per query, and calls
// fn for each key found with its position in keys. A run's feeder asks it
// about the leading rows that come together.
func (s *Store) GetMany(ctx context.Context, keys []string, fn func(i int, resp *api.VerifyResponse, answer []byte, at time.Time)) error {
	type hit struct {
		resp   *api.VerifyResponse
		answer []byte
		at     int64
	}
	hits := make([]hit, len(keys))
	err := s.many(ctx, keys, s.readByKey, func(is []int, at int64, answer []byte) bool {
		// The driver's memory, valid during the call: the answer and what
		// is decoded from it must not share it.
		answer = bytes.Clone(answer)
		// Past the checksum an answer that does not decode was written
		// so (a bug): a miss, like a damaged one.
		resp, err := api.DecodeVerifyResponse(answer)
		if err != nil || resp == nil {
			s.miss()
			return false
		}
		for _, i := range is {
			hits[i] = hit{resp, answer, at}
		}
		return true
	})
	switch {
	case errors.Is(err, errFailed):
		return nil
	case err != nil:
		return err
	}
	for i, h := range hits {
		if h.resp != nil {
			fn(i, h.resp, h.answer, time.UnixMilli(h.at))
		}
	}
	return nil
}

// errFailed is many's error when the file failed under it: every key is a
// miss then.
var errFailed = errors.New("the cache failed")

// many looks keys up and calls use with the positions in keys of each
// entry that passes its checksum and is within the time to live, its time
// and its answer (valid during the call only): first those queued for their
// commit, then those in the file, read by read. use reports whether it took
// the entry. A damaged entry is counted (Damaged); a file that fails to
// read makes the cache fail and takes nothing back: every key is a miss
// then, as for Get. Only a cancelled ctx is an error.
func (s *Store) many(ctx context.Context, keys []string, read fileRead, use func(is []int, at int64, answer []byte) bool) error {
	d := s.d
	if d.Failed() != nil {
		return nil
	}
	want := entryKeys(keys)
	take := func(k string, at int64, answer []byte, crc int64) {
		if is, ok := want[k]; ok && s.fresh(k, at, answer, crc) && use(is, at, answer) {
			delete(want, k) // taken: a later row of it (the file's, older) is not
		}
	}
	// Answers queued for their batch's commit are not in the file yet;
	// looked at first, they are in one or the other.
	d.batch.Pending(func(es []entry) {
		for _, e := range es {
			if e.ns == s.ns {
				take(e.key, e.at, e.answer, int64(checksum(e.ns, e.key, e.at, e.answer)))
			}
		}
	})
	err := read(ctx, slices.Collect(maps.Keys(want)), take)
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		d.fail(fmt.Errorf("%w (read)", err))
		return errFailed
	}
	return nil
}

// fileRead reads the store's entries of the stored keys from the file and
// calls take with each row (key, obtained_ms, answer, crc); the answer is
// the driver's memory, valid during the call only.
type fileRead func(ctx context.Context, keys []string, take func(k string, at int64, answer []byte, crc int64)) error

// readByKey reads the entries of keys hasBatch keys per query: one look in
// the index and one row read per key. For the few hundred keys of a run's
// leading rows, whose answers it decodes anyway.
func (s *Store) readByKey(ctx context.Context, keys []string, take func(k string, at int64, answer []byte, crc int64)) error {
	return forChunks(keys, func(chunk []any) error {
		return s.query(ctx, hasSQL("?", len(chunk)), chunk, func(rows *sql.Rows) error {
			return scanMany(rows, true, take)
		})
	})
}

// query runs query, prepared, on the file's connection with the store's
// namespace and chunk as its arguments, and hands its rows to read.
func (s *Store) query(ctx context.Context, query string, chunk []any, read func(*sql.Rows) error) error {
	return s.d.f.Do(ctx, func(c *sql.Conn) error {
		return s.queryOn(ctx, c, query, chunk, read)
	})
}

// queryOn is query on c, the file's connection, already held.
func (s *Store) queryOn(ctx context.Context, c *sql.Conn, query string, chunk []any, read func(*sql.Rows) error) error {
	st, err := s.d.prepared(ctx, c, query)
	if err != nil {
		return err
	}
	rows, err := st.QueryContext(ctx, append([]any{s.ns}, chunk...)...)
	if err != nil {
		return err
	}
	defer rows.Close()
	return read(rows)
}

// prepared returns query prepared on c, the file's connection, preparing it
// when first asked: a few texts (one per chunk size) serve every call.
func (d *DB) prepared(ctx context.Context, c *sql.Conn, query string) (*sql.Stmt, error) {
	if st := d.stmts[query]; st != nil {
		return st, nil
	}
	st, err := c.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	d.stmts[query] = st
	return st, nil
}

// marks is n placeholders ? separated by commas.
func marks(n int) string {
	return strings.Repeat("?, ", n-1) + "?"
}

// hasSQL is Has's query for n keys, with placeholders $1... (PostgreSQL) or
// ? (SQLite): the first is the namespace.
func hasSQL(placeholder string, n int) string {
	var b strings.Builder
	b.WriteString("SELECT key, obtained_ms, answer, crc FROM cache_answers WHERE namespace = ")
	for i := range n + 1 {
		if placeholder == "?" {
			b.WriteString("?")
		} else {
			fmt.Fprintf(&b, "$%d", i+1)
		}
		switch {
		case i == 0:
			b.WriteString(" AND key IN (")
		case i < n:
			b.WriteString(", ")
		}
	}
	b.WriteString(")")
	return b.String()
}

// entryKeys maps the stored key of each address key to its positions in
// keys.
func entryKeys(keys []string) map[string][]int {
	want := make(map[string][]int, len(keys))
	for i, k := range keys {
		ek := entryKey(k)
		want[ek] = append(want[ek], i)
	}
	return want
}

// forChunks calls fn with vals (stored keys, row ids), hasBatch at a time,
// in their order. The last chunk is filled up to a power of two by
// repeating its last value, so that a few prepared statements serve every
// chunk, and a lookup of a few keys is not a query of hasBatch.
func forChunks[T any](vals []T, fn func(chunk []any) error) error {
	chunk := make([]any, 0, hasBatch)
	for _, v := range vals {
		if chunk = append(chunk, v); len(chunk) == hasBatch {
			if err := fn(chunk); err != nil {
				return err
			}
			chunk = chunk[:0]
		}
	}
	if len(chunk) == 0 {
		return nil
	}
	size := 1
	for size < len(chunk) {
		size *= 2
	}
	for last := chunk[len(chunk)-1]; len(chunk) < size; {
		chunk = append(chunk, last)
	}
	return fn(chunk)
}

// scanner is what Has reads rows from (*sql.Rows, pgx.Rows).
type scanner interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// scanMany calls take with each row (key, obtained_ms, answer, crc). With
// raw (database/sql's rows) the answer is the driver's memory, valid during
// the call only: an estimate checks hundreds of thousands of answers and
// keeps none.
func scanMany(rows scanner, raw bool, take func(k string, at int64, answer []byte, crc int64)) error {
	for rows.Next() {
		var (
			k       string
			at, crc int64
			body    []byte
			err     error
		)
		if raw {
			err = rows.Scan(&k, &at, (*sql.RawBytes)(&body), &crc)
		} else {
			err = rows.Scan(&k, &at, &body, &crc)
		}
		if err != nil {
			return err
		}
		take(k, at, body, crc)
	}
	return rows.Err()
}

// fresh reports whether the entry (k, at, answer, crc) of the store's
// namespace passes its checksum and is within the time to live; a damaged
// one is counted.
func (s *Store) fresh(k string, at int64, answer []byte, crc int64) bool {
	if !checksumOK(crc, s.ns, k, at, answer) {
		s.miss()
		return false
	}
	return time.Since(time.UnixMilli(at)) <= s.ttl
}

// fresh is Store.fresh for the shared cache.
func (s *PGStore) fresh(k string, at int64, answer []byte, crc int64) bool {
	if !checksumOK(crc, s.ns, k, at, answer) {
		s.miss()
		return false
	}
	return time.Since(time.UnixMilli(at)) <= s.ttl
}

// Has reports, for each of keys, whether Peek would find an answer for it:
// stored, passing its checksum and younger than the time to live; one
// query per hasBatch keys, no decoding, no claim and no wait.
func (r PGPeek) Has(ctx context.Context, keys []string) ([]bool, error) {
	s := r.s
	found := make([]bool, len(keys))
	want := entryKeys(keys)
	err := forChunks(slices.Collect(maps.Keys(want)), func(chunk []any) error {
		rows, err := s.p.pool.Query(ctx, hasSQL("$", len(chunk)), append([]any{s.ns}, chunk...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		return scanMany(rows, false, func(k string, at int64, answer []byte, crc int64) {
			if s.fresh(k, at, answer, crc) {
				for _, i := range want[k] {
					found[i] = true
				}
			}
		})
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, s.p.wrap(err)
	}
	return found, nil
}
