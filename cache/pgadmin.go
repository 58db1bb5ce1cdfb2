package cache

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Stats counts the entries of every namespace, those older than ttl (none
// when ttl is 0) and those that fail their checksum, reading every entry as
// a stream. Size is the answers table's size on disk, indexes included.
// A cancelled ctx stops it with its error.
func (p *PG) Stats(ctx context.Context, ttl time.Duration) (Stats, error) {
	st := Stats{Path: p.display, Namespaces: []NamespaceStats{}}
	tl := newTally(ttl, time.Now())
	rows, err := p.pool.Query(ctx, "SELECT id, label FROM cache_namespaces")
	if err != nil {
		return Stats{}, p.wrap(err)
	}
	var id, label string
	_, err = pgx.ForEachRow(rows, []any{&id, &label}, func() error {
		tl.label(id, label)
		return nil
	})
	if err != nil {
		return Stats{}, p.wrap(err)
	}
	var (
		ns, key string
		at, crc int64
		body    []byte
	)
	rows, err = p.pool.Query(ctx, "SELECT namespace, key, obtained_ms, answer, crc FROM cache_answers")
	if err != nil {
		return Stats{}, p.wrap(err)
	}
	_, err = pgx.ForEachRow(rows, []any{&ns, &key, &at, &body, &crc}, func() error {
		tl.add(ns, time.UnixMilli(at), checksumOK(crc, ns, key, at, body))
		return nil
	})
	if err != nil {
		return Stats{}, p.wrap(err)
	}
	if err := p.pool.QueryRow(ctx, "SELECT pg_total_relation_size('cache_answers')").Scan(&st.Size); err != nil {
		return Stats{}, p.wrap(err)
	}
	tl.into(&st)
	return st, nil
}

// Prune removes the entries older than ttl from every namespace, and those
// that fail their checksum, in transactions of pruneChunk entries read in
// key order, and the claims whose lease ran out. A cancelled ctx stops it
// with its error; the transactions committed before stay done.
func (p *PG) Prune(ctx context.Context, ttl time.Duration) (Pruned, error) {
	var pr Pruned
	if ttl <= 0 {
		return pr, fmt.Errorf("cache %s: time to live %s: want a positive duration", p.display, ttl)
	}
	cutoff := time.Now().Add(-ttl).UnixMilli()
	var lastNS, lastKey string
	for {
		n := 0
		err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `SELECT namespace, key, obtained_ms, answer, crc FROM cache_answers
				WHERE (namespace, key) > ($1, $2) ORDER BY namespace, key LIMIT $3`, lastNS, lastKey, pruneChunk)
			if err != nil {
				return err
			}
			var (
				ns, key string
				at, crc int64
				body    []byte
				old     [][2]string
			)
			_, err = pgx.ForEachRow(rows, []any{&ns, &key, &at, &body, &crc}, func() error {
				n++
				lastNS, lastKey = ns, key
				switch {
				case !checksumOK(crc, ns, key, at, body):
					pr.Unusable++
				case at < cutoff:
					pr.Expired++
				default:
					return nil
				}
				old = append(old, [2]string{ns, key})
				return nil
			})
			if err != nil {
				return err
			}
			for _, o := range old {
				if _, err := tx.Exec(ctx, "DELETE FROM cache_answers WHERE namespace = $1 AND key = $2", o[0], o[1]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return pr, p.wrap(err)
		}
		if n < pruneChunk {
			break
		}
	}
	if _, err := p.pool.Exec(ctx, "DELETE FROM cache_claims WHERE expires < clock_timestamp()"); err != nil {
		return pr, p.wrap(err)
	}
	return pr, nil
}

// Clear removes every namespace and entry, and the claims whose lease ran
// out (those of running runners stay theirs), and returns how many entries
// it removed. It is one transaction: a cancelled ctx (Ctrl-C on a slow
// database) stops it with its error, and removes nothing.
func (p *PG) Clear(ctx context.Context) (int64, error) {
	var removed int64
	err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM cache_answers")
		if err != nil {
			return err
		}
		removed = tag.RowsAffected()
		if _, err := tx.Exec(ctx, "DELETE FROM cache_namespaces"); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "DELETE FROM cache_claims WHERE expires < clock_timestamp()")
		return err
	})
	if err != nil {
		return 0, p.wrap(err)
	}
	return removed, nil
}
