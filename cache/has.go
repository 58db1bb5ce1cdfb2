package cache

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// hasBatch is how many keys Has asks about in one query. One query per key
// costs a statement's start and a read transaction each (about 15 µs in
// modernc SQLite, a round trip in PostgreSQL); a few hundred at once share
// them, and stay far under both databases' limits on parameters.
const hasBatch = 256

// Has reports, for each of keys, whether Get would find an answer for it:
// stored, passing its checksum and younger than the time to live. It asks
// about hasBatch keys per query and does not decode the answers: an
// estimate counts answers, it does not use them (an answer that passes its
// checksum decodes, unless it was written so by a bug: Get then misses
// where Has counted). Damaged entries are misses, counted in Damaged; a
// file that fails to read makes the cache fail (DB.Failed) and every key a
// miss, as Get does. Only a cancelled ctx is an error.
func (s *Store) Has(ctx context.Context, keys []string) ([]bool, error) {
	d := s.d
	found := make([]bool, len(keys))
	if d.Failed() != nil {
		return found, nil
	}
	want := entryKeys(keys)
	// Answers queued for their batch's commit are not in the file yet.
	d.batch.Pending(func(es []entry) {
		for _, e := range es {
			if is, ok := want[e.key]; ok && e.ns == s.ns && s.fresh(e.key, e.at, e.answer, int64(checksum(e.ns, e.key, e.at, e.answer))) {
				for _, i := range is {
					found[i] = true
				}
			}
		}
	})
	err := forChunks(want, func(chunk []any) error {
		return d.f.Do(ctx, func(c *sql.Conn) error {
			if d.has == nil {
				var err error
				if d.has, err = c.PrepareContext(ctx, hasSQL("?", hasBatch)); err != nil {
					return err
				}
			}
			rows, err := d.has.QueryContext(ctx, append([]any{s.ns}, chunk...)...)
			if err != nil {
				return err
			}
			defer rows.Close()
			return scanHas(rows, want, found, s.fresh)
		})
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		d.fail(fmt.Errorf("%w (read)", err))
		clear(found)
	}
	return found, nil
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

// forChunks calls fn with the stored keys of want, hasBatch at a time. The
// last chunk is filled up by repeating its last key, so that one prepared
// statement serves every chunk.
func forChunks(want map[string][]int, fn func(chunk []any) error) error {
	chunk := make([]any, 0, hasBatch)
	for k := range want {
		if chunk = append(chunk, k); len(chunk) == hasBatch {
			if err := fn(chunk); err != nil {
				return err
			}
			chunk = chunk[:0]
		}
	}
	if len(chunk) == 0 {
		return nil
	}
	for last := chunk[len(chunk)-1]; len(chunk) < hasBatch; {
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

// scanHas marks in found the positions of the keys of rows (key,
// obtained_ms, answer, crc) whose entry is valid and fresh (fresh).
func scanHas(rows scanner, want map[string][]int, found []bool, fresh func(k string, at int64, answer []byte, crc int64) bool) error {
	for rows.Next() {
		var (
			k       string
			at, crc int64
			body    []byte
		)
		if err := rows.Scan(&k, &at, &body, &crc); err != nil {
			return err
		}
		if fresh(k, at, body, crc) {
			for _, i := range want[k] {
				found[i] = true
			}
		}
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
	return s.d.now().Sub(time.UnixMilli(at)) <= s.ttl
}

// fresh is Store.fresh for the shared cache.
func (s *PGStore) fresh(k string, at int64, answer []byte, crc int64) bool {
	if !checksumOK(crc, s.ns, k, at, answer) {
		s.miss()
		return false
	}
	return s.p.now().Sub(time.UnixMilli(at)) <= s.ttl
}

// Has reports, for each of keys, whether Peek would find an answer for it,
// as Store.Has does: one query per hasBatch keys, no decoding, no claim and
// no wait.
func (r PGPeek) Has(ctx context.Context, keys []string) ([]bool, error) {
	s := r.s
	found := make([]bool, len(keys))
	want := entryKeys(keys)
	err := forChunks(want, func(chunk []any) error {
		rows, err := s.p.pool.Query(ctx, hasSQL("$", hasBatch), append([]any{s.ns}, chunk...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		return scanHas(rows, want, found, s.fresh)
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, s.p.wrap(err)
	}
	return found, nil
}
