package cache

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/addrclean/addrclean/api"
	"time"
)

// hasKeys are n address keys, then the fourth again and one more.
func hasKeys(n int) []string {
	var keys []string
	for i := range n {
		keys = append(keys, fmt.Sprintf("%d main street\x00cork", i))
	}
	return append(keys, keys[3], "not stored")
}

// TestGetManyIsGet: GetMany answers, for more keys than one query takes,
// what GetEncoded answers one key at a time: answers committed and still queued, expired
// ones, a damaged one, another namespace's, a key asked twice.
func TestGetManyIsGet(t *testing.T) { synctest.Test(t, testGetManyIsGet) }

func testGetManyIsGet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	d := open(t, path)
	ns := LiveNamespace("https://x", "k")
	s := store(t, d, ns, time.Hour)
	other := store(t, d, LiveNamespace("https://x", "k2"), time.Hour)
	keys := hasKeys(2*hasBatch + 37)
	for i, k := range keys[:len(keys)-2] {
		switch {
		case i%5 == 0:
			mustPut(t, other, k, answer("O")) // another namespace's only
		case i == 7:
			mustPut(t, s, k, answer("D")) // damaged below
		default:
			mustPut(t, s, k, answer(fmt.Sprint(i)))
		}
		if i == len(keys)/3 {
			time.Sleep(50 * time.Minute) // the ones before expire below (the bubble's clock)
		}
	}
	if err := d.batch.Flush(); err != nil {
		t.Fatal(err)
	}
	// The file is open: the damage goes through its connection.
	err := d.f.Do(context.Background(), func(conn *sql.Conn) error {
		_, err := conn.ExecContext(context.Background(), "UPDATE cache_answers SET crc = crc + 1 WHERE key = ?", entryKey(keys[7]))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Minute)
	// Some answers still queued for their commit.
	for _, i := range []int{1, len(keys) - 3} {
		mustPut(t, s, keys[i], answer("Q"))
	}
	many := make([]string, len(keys))
	err = s.GetMany(context.Background(), keys, func(i int, resp *api.VerifyResponse, answer []byte, at time.Time) {
		many[i] = fmt.Sprint(resp.Address.ID, string(answer), at.UnixMilli())
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []bool
	for i, k := range keys {
		resp, answer, at, ok, err := s.GetEncoded(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, ok)
		one := ""
		if ok {
			one = fmt.Sprint(resp.Address.ID, string(answer), at.UnixMilli())
		}
		if many[i] != one {
			t.Errorf("key %d: GetMany %q, GetEncoded %q", i, many[i], one)
		}
	}
	if s.Damaged() != 2 {
		t.Errorf("GetMany and GetEncoded counted %d damaged, want 1 each", s.Damaged())
	}
	if n := len(slices.DeleteFunc(slices.Clone(want), func(b bool) bool { return !b })); n == 0 || n == len(keys) {
		t.Errorf("%d of %d keys found: the case proves nothing", n, len(keys))
	}
}

// TestCountQueryPlans: CountAnswered's walk reads the index alone (no
// row); its look-ups search the index; its scan reads the table in row id
// order from a row id on, and its reads by row id search by row id: SQLite
// prefers the (namespace, key) index for a namespace's equality, which
// would read the namespace's rows in key order, a page for each.
func TestCountQueryPlans(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "c.db"))
	for _, tc := range []struct {
		query, want string
		args        []any
	}{
		{walkIndexSQL, "SEARCH cache_answers USING COVERING INDEX sqlite_autoindex_cache_answers_1 (namespace=?)", []any{"ns"}},
		{seekIndexSQL, "SEARCH cache_answers USING COVERING INDEX sqlite_autoindex_cache_answers_1 (namespace=? AND key>? AND key<?)", []any{"ns", "a", "b"}},
		{scanRowsSQL, "SEARCH cache_answers USING INTEGER PRIMARY KEY (rowid>?)", []any{"ns", 1}},
		{rowidRowSQL(4), "SEARCH cache_answers USING INTEGER PRIMARY KEY (rowid=?)", []any{"ns", 1, 2, 3, 4}},
	} {
		var plan []string
		err := d.f.Do(context.Background(), func(c *sql.Conn) error {
			rows, err := c.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+tc.query, tc.args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					return err
				}
				plan = append(plan, detail)
			}
			return rows.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(plan, tc.want) {
			t.Errorf("%s:\nplan %q\nwant %q", tc.query, plan, tc.want)
		}
	}
}
