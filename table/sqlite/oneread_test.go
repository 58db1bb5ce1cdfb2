package sqlite

import (
	"errors"
	"testing"

	"github.com/addrclean/addrclean/table"
)

// TestOneRead: one statement that reads passes, whatever its quotes and
// comments hold; a second statement, or one that is not a read, is refused.
func TestOneRead(t *testing.T) {
	for _, c := range []struct {
		query string
		ok    bool
	}{
		{"SELECT 1", true},
		{"select 1;", true},
		{"SELECT 1; ; -- done\n", true},
		{"  /* why */ WITH x AS (SELECT 1) SELECT * FROM x", true},
		{"VALUES (1), (2)", true},
		{"SELECT ';' AS a, \"b;c\", `d;e`, [f;g] FROM t", true},
		{"SELECT 'it''s; fine'", true},
		{"SELECT 1 -- ; DROP TABLE t\n", true},
		{"SELECT 1 /* ; DROP TABLE t */", true},
		{"SELECT 1; DROP TABLE t", false},
		{"SELECT 1;DROP TABLE t", false},
		{"SELECT 'a'; SELECT 'b'", false},
		{"SELECT 1 /* x */; ATTACH 'e.db' AS e", false},
		{"SELECT 'it''s'; DELETE FROM t", false},
		{"VACUUM INTO 'copy.db'", false},
		{"ATTACH DATABASE 'evil.db' AS e", false},
		{"PRAGMA query_only = 0", false},
		{"DELETE FROM t RETURNING *", false},
		{"BEGIN", false},
		{"-- only a comment\nDROP TABLE t", false},
	} {
		err := oneRead(c.query)
		if (err == nil) != c.ok {
			t.Errorf("%q: %v, want ok %v", c.query, err, c.ok)
		}
		if err != nil && !errors.Is(err, table.ErrBadQuery) {
			t.Errorf("%q: %v does not wrap ErrBadQuery", c.query, err)
		}
	}
}
