package sqlitefile

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// testRow is a row of the test table; a nil name breaks its NOT NULL
// constraint.
type testRow struct {
	id   int64
	name *string
	n    int
}

var errTestCorrupt = errors.New("damaged")

func openTest(t *testing.T) *File {
	t.Helper()
	f, err := Open(context.Background(), filepath.Join(t.TempDir(), "f"), Options{
		Kind: "test", Format: "addrclean-test/1", FormatFamily: "addrclean-test/",
		Schema:  []string{"CREATE TABLE t (id integer PRIMARY KEY, name text NOT NULL, n integer NOT NULL)"},
		Corrupt: errTestCorrupt, NotOurs: errors.New("not ours"), Locked: errors.New("locked"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

const testInsert = "INSERT INTO t (id, name, n) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET name = excluded.name, n = excluded.n"

func testArgs(r testRow) []any {
	var name any // nil: NULL
	if r.name != nil {
		name = *r.name
	}
	return []any{r.id, name, r.n}
}

func newTestBatch(t *testing.T, f *File) *Batch[testRow] {
	t.Helper()
	b, err := NewBatch(f, 1<<20, 0, testInsert, testArgs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func named(s string) *string { return &s }

// table returns the test table's rows as "id=name/n", in id order.
func table(t *testing.T, f *File) []string {
	t.Helper()
	var got []string
	err := f.Do(context.Background(), func(c *sql.Conn) error {
		rows, err := c.QueryContext(context.Background(), "SELECT id, name, n FROM t ORDER BY id")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				id, n int64
				name  string
			)
			if err := rows.Scan(&id, &name, &n); err != nil {
				return err
			}
			got = append(got, fmt.Sprintf("%d=%s/%d", id, name, n))
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestBatchCommits: a commit of any number of rows (one INSERT up to
// chunkRows rows, several in one transaction above) writes every row, a
// key given twice in one commit keeps its last row, as one statement per
// row would, and a key already stored is updated.
func TestBatchCommits(t *testing.T) {
	for _, rows := range []int{1, 3, chunkRows - 1, chunkRows, chunkRows + 1, 3*chunkRows + 5, 300} {
		t.Run(fmt.Sprint(rows), func(t *testing.T) {
			f := openTest(t)
			b := newTestBatch(t, f)
			// Rows 1..rows, then rows 1 and rows again (n 2): in the same
			// commit, in another chunk when rows > chunkRows.
			var want []string
			for i := 1; i <= rows; i++ {
				if err := b.Add(testRow{id: int64(i), name: named(fmt.Sprint("r", i)), n: 1}); err != nil {
					t.Fatal(err)
				}
				want = append(want, fmt.Sprintf("%d=r%d/1", i, i))
			}
			for _, i := range []int{1, rows} {
				if err := b.Add(testRow{id: int64(i), name: named("again"), n: 2}); err != nil {
					t.Fatal(err)
				}
				want[i-1] = fmt.Sprintf("%d=again/2", i)
			}
			if err := b.Flush(); err != nil {
				t.Fatal(err)
			}
			if got := table(t, f); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("table:\n%v\nwant\n%v", got, want)
			}
			// A stored key is updated by a later commit.
			if err := b.Add(testRow{id: 1, name: named("later"), n: 3}); err != nil {
				t.Fatal(err)
			}
			if err := b.Flush(); err != nil {
				t.Fatal(err)
			}
			if got := table(t, f); got[0] != "1=later/3" || len(got) != rows {
				t.Fatalf("after an update: %v", got)
			}
			if b.Commits() != 2 {
				t.Errorf("%d commits, want 2", b.Commits())
			}
		})
	}
}

// TestBatchFailedCommit: a commit whose row breaks a constraint writes none
// of its rows, whichever INSERT of the commit holds it, and its error fails
// every later call.
func TestBatchFailedCommit(t *testing.T) {
	for _, tc := range []struct{ rows, bad int }{{3, 2}, {chunkRows, chunkRows}, {3*chunkRows + 5, 2*chunkRows + 1}} {
		t.Run(fmt.Sprint(tc.rows, "/", tc.bad), func(t *testing.T) {
			f := openTest(t)
			b := newTestBatch(t, f)
			if err := b.Add(testRow{id: 1000, name: named("kept"), n: 1}); err != nil {
				t.Fatal(err)
			}
			if err := b.Flush(); err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= tc.rows; i++ {
				r := testRow{id: int64(i), name: named("x"), n: 1}
				if i == tc.bad {
					r.name = nil
				}
				if err := b.Add(r); err != nil {
					t.Fatal(err)
				}
			}
			err := b.Flush()
			if err == nil || !strings.Contains(err.Error(), "NOT NULL") {
				t.Fatalf("Flush: %v, want the NOT NULL constraint's error", err)
			}
			if got := table(t, f); len(got) != 1 || got[0] != "1000=kept/1" {
				t.Fatalf("the failed commit left %v", got)
			}
			if err2 := b.Add(testRow{id: 2000, name: named("y")}); !errors.Is(err2, err) && (err2 == nil || err2.Error() != err.Error()) {
				t.Errorf("Add after a failed commit: %v, want %v", err2, err)
			}
			if err2 := b.Close(); err2 == nil || err2.Error() != err.Error() {
				t.Errorf("Close after a failed commit: %v, want %v", err2, err)
			}
		})
	}
}

// TestBatchGroupCommit: rows added with AddWait from many goroutines are all
// committed when their calls return, and share commits: a goroutine whose
// row another one's commit took returns without committing the one row
// added meanwhile (goroutines that each waited their turn to commit made
// one commit a row: 1.0 rows a commit, against 4 to 7 here).
func TestBatchGroupCommit(t *testing.T) {
	f := openTest(t)
	b := newTestBatch(t, f)
	const goroutines, each = 8, 100
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				id := int64(g*each + i + 1)
				if err := b.AddWait(testRow{id: id, name: named("w"), n: g}); err != nil {
					t.Error(err)
					return
				}
				// Committed when AddWait returns.
				found := false
				b.Pending(func(rows []testRow) { found = slices.ContainsFunc(rows, func(r testRow) bool { return r.id == id }) })
				if found {
					t.Errorf("row %d still pending after AddWait", id)
				}
			}
		})
	}
	wg.Wait()
	if got := table(t, f); len(got) != goroutines*each {
		t.Fatalf("%d rows in the table, want %d", len(got), goroutines*each)
	}
	if perCommit := float64(goroutines*each) / float64(b.Commits()); perCommit < 2 {
		t.Errorf("%.2f rows a commit, want at least 2 with %d goroutines adding at once", perCommit, goroutines)
	}
}

// TestNewBatchStatement: a statement NewBatch cannot write for several rows,
// or that SQLite refuses, is refused when the batch is made, not at its
// first commit, after rows were accepted.
func TestNewBatchStatement(t *testing.T) {
	f := openTest(t)
	for i, tc := range []struct {
		q, err string // err: part of the error, "" for none
	}{
		{q: testInsert},
		{q: "INSERT INTO t (id, name, n) VALUES (?, ?, ?)"},
		{q: "INSERT OR REPLACE INTO t (id, name, n) VALUES (?,?,?)"},
		{q: "INSERT INTO t (id, name, n) SELECT 1, 'a', 2", err: "without"},
		{q: "INSERT INTO t (id, name, n) VALUES (?, upper(?), ?)", err: "? only"},
		{q: "INSERT INTO t (id, name, n) VALUES (?, ?, ?", err: "not closed"},
		{q: "INSERT INTO t (id, name, n) VALUES ()", err: "? only"},
		{q: "INSERT INTO t (id, name, n) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET n = ?", err: "outside"},
		{q: "WITH x AS (SELECT ?) INSERT INTO t (id, name, n) VALUES (?, ?, ?)", err: "outside"},
		{q: "INSERT INTO nosuch (id, name, n) VALUES (?, ?, ?)", err: "no such table"},
		{q: "INSERT INTO t (id, nosuch, n) VALUES (?, ?, ?)", err: "nosuch"},
		{q: "INSERT INTO t (id, name, n) VALUES (?, ?)", err: "2 values for 3 columns"},
		{q: "INSERT INTO t (id, name, n) VALUES (?, ?, ?) ON CONFLICT DO NOTHING garbage", err: "syntax error"},
	} {
		b, err := NewBatch(f, 0, 0, tc.q, testArgs)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.q, err)
		case tc.err == "" && err == nil:
			if err := b.AddWait(testRow{id: int64(i), name: named("a"), n: 1}); err != nil {
				t.Errorf("%s: AddWait: %v", tc.q, err)
			}
			if err := b.Close(); err != nil {
				t.Errorf("%s: Close: %v", tc.q, err)
			}
		case err == nil:
			_ = b.Close()
			t.Errorf("%s: no error, want one with %q", tc.q, tc.err)
		case !strings.Contains(err.Error(), tc.err):
			t.Errorf("%s: %v, want an error with %q", tc.q, err, tc.err)
		}
	}
}

// TestBatchCloseKeepsAcceptedRows: every row whose Add returned nil while
// Close ran is in the table afterwards. Rows added during Close's last
// commit (or between it and Close's end) were accepted and then dropped.
// The adders stop at their first error; each is a bound, not a goal.
func TestBatchCloseKeepsAcceptedRows(t *testing.T) {
	f := openTest(t)
	const attempts, goroutines, each = 20, 4, 1 << 16
	var id, accepted atomic.Int64
	for range attempts {
		b, err := NewBatch(f, 1<<20, 0, testInsert, testArgs)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range goroutines {
			wg.Go(func() {
				<-start
				for range each {
					if b.Add(testRow{id: id.Add(1), name: named("c"), n: 1}) != nil {
						return
					}
					accepted.Add(1)
				}
			})
		}
		close(start)
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
	}
	if got := int64(len(table(t, f))); got != accepted.Load() {
		t.Fatalf("%d rows in the table, %d accepted", got, accepted.Load())
	}
}

// panicValuer's Value panics, as a user's driver.Valuer might.
type panicValuer struct{}

func (panicValuer) Value() (driver.Value, error) { panic("valuer boom") }

// TestBatchPanic: a panic in args or in a driver.Valuer during a commit
// fails that commit, and every later call, with an error, like a failed
// commit; none of the commit's rows is written and the File stays usable.
// The panic used to unwind through Add's deferred Unlock of a mutex wait
// had released: "fatal error: sync: unlock of unlocked mutex".
func TestBatchPanic(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rows, bad int
		args      func(testRow) []any
	}{
		{name: "args", rows: 3, bad: 2},
		{name: "args in a transaction", rows: 3*chunkRows + 5, bad: 2*chunkRows + 1},
		{name: "valuer", rows: 3, bad: 3, args: func(r testRow) []any { return []any{r.id, panicValuer{}, r.n} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := openTest(t)
			b, err := NewBatch(f, 1<<20, 0, testInsert, func(r testRow) []any {
				switch {
				case r.id != int64(tc.bad):
					return testArgs(r)
				case tc.args != nil:
					return tc.args(r)
				}
				panic("args boom")
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := b.AddWait(testRow{id: 1000, name: named("kept"), n: 1}); err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= tc.rows; i++ {
				if err := b.Add(testRow{id: int64(i), name: named("x"), n: 1}); err != nil {
					t.Fatal(err)
				}
			}
			err = b.Flush()
			if err == nil || !strings.Contains(err.Error(), "panic") {
				t.Fatalf("Flush: %v, want the panic's error", err)
			}
			for name, call := range map[string]func() error{
				"Add":     func() error { return b.Add(testRow{id: 2000, name: named("y")}) },
				"AddWait": func() error { return b.AddWait(testRow{id: 2001, name: named("y")}) },
				"Flush":   b.Flush,
				"Close":   b.Close,
			} {
				if err2 := call(); err2 == nil || err2.Error() != err.Error() {
					t.Errorf("%s after the panic: %v, want %v", name, err2, err)
				}
			}
			if got := table(t, f); len(got) != 1 || got[0] != "1000=kept/1" {
				t.Fatalf("the failed commit left %v", got)
			}
		})
	}
}

// TestDriverValue: a batch argument of any type database/sql takes is
// converted as database/sql converts it; others are refused.
func TestDriverValue(t *testing.T) {
	type name string
	type count int16
	s, i := "s", int64(7)
	for _, tc := range []struct {
		in   any
		want driver.Value // nil with bad: refused
		bad  bool
	}{
		{in: int64(1), want: int64(1)},
		{in: 2, want: int64(2)},
		{in: int32(-3), want: int64(-3)},
		{in: uint16(4), want: int64(4)},
		{in: uint32(5), want: int64(5)},
		{in: uint64(6), want: int64(6)},
		{in: count(8), want: int64(8)},
		{in: float32(0.5), want: float64(0.5)},
		{in: name("n"), want: "n"},
		{in: &s, want: "s"},
		{in: &i, want: int64(7)},
		{in: (*string)(nil), want: nil},
		{in: sql.NullString{String: "v", Valid: true}, want: "v"},
		{in: sql.NullInt64{}, want: nil},
		{in: (*sql.NullString)(nil), want: nil},
		{in: uint64(1) << 63, bad: true},
		{in: struct{}{}, bad: true},
		{in: make(chan int), bad: true},
	} {
		got, err := driverValue(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("%T: %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%T: %v (%T), %v, want %v (%T)", tc.in, got, got, err, tc.want, tc.want)
		}
	}
}
