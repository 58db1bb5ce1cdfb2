package journal

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/internal/sqlitefile"
	"github.com/addrclean/addrclean/internal/sqlitefile/filetest"
)

var (
	sqliteExec = filetest.Exec
	bboltFile  = filetest.Bbolt
	zeroPages  = filetest.ZeroPages
)

func answer(id string) *api.VerifyResponse {
	return &api.VerifyResponse{Type: "verify", Action: api.ActionAccept,
		Address: api.MatchedAddress{ID: id, Label: []string{"1 Main Street " + id, "Cork"}},
		Extra:   map[string]json.RawMessage{"echo": json.RawMessage(`{"n":` + id + `}`)}}
}

var testMeta = Meta{
	Input:   Input{Path: "in.csv", Size: 42, SHA256: "abc"},
	Options: map[string]string{"country": "IE", "service": "embedded"},
}

// entry is row n's result: refusals every seventh row, answers otherwise.
func entry(n int) Entry {
	e := Entry{Row: n, Key: uint64(n) * 0x9e3779b97f4a7c15, FromCache: n%5 == 0}
	if n%7 == 0 {
		e.Err, e.Kind = "service answered 400: bad address", "permanent"
	} else {
		e.Response = answer(strconv.Itoa(n))
	}
	return e
}

// write creates a journal holding rows in the order given, and closes it.
func write(t testing.TB, path string, rows []int) {
	t.Helper()
	j, err := Create(context.Background(), path, testMeta)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range rows {
		if err := j.Record(entry(n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

func reopen(t *testing.T, path string) *Journal {
	t.Helper()
	j, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = j.Close() })
	return j
}

// shuffled returns 1..n with every row moved at most window places, the way
// a pool of workers finishes rows.
func shuffled(n, window int, seed uint64) []int {
	rows := make([]int, n)
	for i := range rows {
		rows[i] = i + 1
	}
	r := rand.New(rand.NewPCG(seed, 1))
	for i := 0; i+window < n; i += window / 2 {
		part := rows[i : i+window/2]
		r.Shuffle(len(part), func(a, b int) { part[a], part[b] = part[b], part[a] })
	}
	return rows
}

// TestReplay: rows recorded out of order come back for exactly the rows
// recorded, with their results unchanged.
func TestReplay(t *testing.T) {
	tests := []struct {
		name  string
		rows  []int
		asked int // rows 1..asked are looked up
	}{
		{"in order", shuffled(500, 2, 1), 500},
		{"out of order", shuffled(3000, 64, 2), 3000},
		{"gaps: rows never recorded", []int{1, 2, 4, 5, 9, 10, 11, 30}, 40},
		{"empty", nil, 10},
		{"more asked than recorded", shuffled(100, 16, 3), 300},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "j")
			write(t, path, tc.rows)
			j := reopen(t, path)
			if info := j.Info(); info.Rows != int64(len(tc.rows)) || info.Runs != 1 || info.Complete || info.Damaged != 0 ||
				!reflect.DeepEqual(info.Meta, testMeta) {
				t.Fatalf("info = %+v", info)
			}
			if err := j.Continue(); err != nil {
				t.Fatal(err)
			}
			recorded := map[int]bool{}
			for _, n := range tc.rows {
				recorded[n] = true
			}
			for n := 1; n <= tc.asked; n++ {
				e, ok, err := j.Lookup(n, entry(n).Key)
				if err != nil {
					t.Fatal(err)
				}
				if ok != recorded[n] {
					t.Fatalf("row %d: found %v, recorded %v", n, ok, recorded[n])
				}
				if ok && !reflect.DeepEqual(e, entry(n)) {
					t.Fatalf("row %d:\n got %+v\nwant %+v", n, e, entry(n))
				}
			}
		})
	}
}

// TestRecordRoundTrip: a record decodes to what was recorded, reasons with
// quotes, controls and NUL bytes included; a changed byte anywhere, or a
// record under another row's number, fails its checksum.
func TestRecordRoundTrip(t *testing.T) {
	for _, e := range []Entry{
		entry(1), entry(7), entry(10),
		{Row: 3, Key: 1<<64 - 1, Err: "service answered 400: \"bad\"\n\x00\x01 <b>é", Kind: "permanent"},
	} {
		r := encodeRecord(e)
		got, ok := decodeRecord(r)
		if !ok || !reflect.DeepEqual(got, e) {
			t.Fatalf("%+v decoded to %+v, %v", e, got, ok)
		}
		other := r
		other.row++
		if _, ok := decodeRecord(other); ok {
			t.Fatalf("row %d's record read as row %d's", e.Row, e.Row+1)
		}
		for _, damage := range []func(*record){
			func(r *record) { r.key ^= 1 << 40 },
			func(r *record) { r.flags ^= flagCached },
			func(r *record) { r.crc ^= 1 },
			func(r *record) { r.answer.String = strings.Replace(r.answer.String, "Cork", "York", 1) },
			func(r *record) {
				if r.reason.Valid {
					r.reason.String += "!"
				}
			},
			func(r *record) {
				if r.kind.Valid {
					r.kind.String = "transient"
				}
			},
		} {
			d := r
			damage(&d)
			if d == r {
				continue // the column this damage changes is empty here
			}
			if _, ok := decodeRecord(d); ok {
				t.Fatalf("%+v changed to %+v, and the record still decodes", r, d)
			}
		}
	}
}

// FuzzDecodeRecord: no record, however damaged, panics the decoder, and
// one it accepts has a positive row and either an answer or a refusal.
func FuzzDecodeRecord(f *testing.F) {
	for _, n := range []int{7, 8} {
		r := encodeRecord(entry(n))
		f.Add(r.row, r.key, r.flags, r.answer.String, r.kind.String, r.reason.String, r.crc)
	}
	f.Add(int64(0), int64(0), int64(0), "", "", "", int64(0))
	f.Fuzz(func(t *testing.T, row, key, flags int64, answer, kind, reason string, crc int64) {
		r := record{row: row, key: key, flags: flags, crc: crc,
			answer: sql.NullString{String: answer, Valid: answer != ""}, kind: sql.NullString{String: kind, Valid: kind != ""},
			reason: sql.NullString{String: reason, Valid: reason != ""}}
		r.crc = r.sum() // past the checksum: what the decoder makes of the columns
		e, ok := decodeRecord(r)
		if ok && (e.Row < 1 || (e.Response == nil) == (e.Kind == "")) {
			t.Fatalf("accepted %+v", e)
		}
	})
}

// oldJournal is a journal of the text format (version 1), as an older
// addrclean wrote it: header, run record, one row.
func oldJournal() []byte {
	var b []byte
	for _, body := range []string{
		`{"t":"header","journal":"addrclean","version":1,"created":"2026-11-21T07:27:10Z","meta":{"input":{"path":"in.csv","size":42,"sha256":"abc"},"options":{}}}`,
		`{"t":"run","started":"2026-11-21T07:27:10Z","window":256}`,
		`{"row":1,"key":"8c3f0d2a91b4e677","resp":{"type":"verify"}}`,
	} {
		b = fmt.Appendf(b, "%08x %s\n", crc32.Checksum([]byte(body), crc32.MakeTable(crc32.Castagnoli)), body)
	}
	return b
}

func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	write(t, good, shuffled(300, 8, 1))
	goodBytes, _ := os.ReadFile(good)
	foreign := filepath.Join(dir, "foreign")
	sqliteExec(t, foreign, "CREATE TABLE theirs (a text)")
	foreignBytes, _ := os.ReadFile(foreign)
	unknown := filepath.Join(dir, "unknown")
	write(t, unknown, []int{1})
	sqliteExec(t, unknown, "UPDATE addrclean_meta SET value = 'addrclean-journal/99' WHERE name = 'format'")
	unknownBytes, _ := os.ReadFile(unknown)
	cache := filepath.Join(dir, "cache")
	sqliteExec(t, cache, "CREATE TABLE addrclean_meta (name text PRIMARY KEY, value text NOT NULL)",
		"INSERT INTO addrclean_meta VALUES ('format', 'addrclean-cache/2')")
	cacheBytes, _ := os.ReadFile(cache)

	tests := []struct {
		name    string
		content []byte
		want    error
		text    string
	}{
		{"not a journal", []byte("id,name\n1,x\n"), ErrCorrupt, "not a readable addrclean journal"},
		{"zeros", make([]byte, 300), ErrCorrupt, "not a readable addrclean journal"},
		{"the text format of earlier versions", oldJournal(), ErrOldFormat, "written by an older addrclean"},
		{"a bbolt journal of an older addrclean", bboltFile(), ErrOldFormat, "the bbolt format"},
		{"another program's SQLite file", foreignBytes, ErrCorrupt, "another program"},
		{"a result cache", cacheBytes, ErrCorrupt, "another kind"},
		{"cut short", goodBytes[:len(goodBytes)/2], ErrCorrupt, "not a readable addrclean journal"},
		{"pages zeroed", zeroPages(goodBytes, 2), ErrCorrupt, "not a readable addrclean journal"},
		{"a newer format", unknownBytes, ErrCorrupt, `unknown format "addrclean-journal/99"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "j")
			if err := os.WriteFile(p, tc.content, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Open(context.Background(), p)
			if !errors.Is(err, tc.want) || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("Open = %v, want %v naming the file and saying %q", err, tc.want, tc.text)
			}
			if after, _ := os.ReadFile(p); !bytes.Equal(after, tc.content) {
				t.Error("Open changed the file it refused")
			}
		})
	}
	if _, err := Open(context.Background(), filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

// TestHeadless: a run killed while it created its journal leaves an empty
// file, or (an older addrclean) a torn first line. It holds no rows: Open
// reports it, and Start replaces it.
func TestHeadless(t *testing.T) {
	old := oldJournal()
	for name, content := range map[string][]byte{
		"empty":                   nil,
		"torn text-format header": old[:bytes.IndexByte(old, '\n')-5],
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "j")
			if err := os.WriteFile(p, content, 0o600); err != nil {
				t.Fatal(err)
			}
			j, err := Open(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if info := j.Info(); !info.Headless || info.Rows != 0 {
				t.Fatalf("info %+v", info)
			}
			if err := j.Continue(); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Continue of a headless journal: %v", err)
			}
			if err := j.Start(testMeta); err != nil {
				t.Fatal(err)
			}
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			if info := reopen(t, p).Info(); info.Headless || info.Runs != 1 {
				t.Fatalf("after Start: %+v", info)
			}
		})
	}
}

// TestOpenWritesNothing: Open, Info, Lookup and Close leave the file as
// they found it, to the byte (a dry run, a run refused before its first
// row): a journal switched out of WAL mode by hand keeps its mode and gets
// no -wal beside it; an empty file and an SQLite file without tables are
// headless and not made journals. Open still locks the file against a
// second Open, as a write would (an empty one too).
// Continue or Start then sets WAL mode.
func TestOpenWritesNothing(t *testing.T) {
	deleteMode := func(t *testing.T, p string) {
		write(t, p, shuffled(50, 8, 3))
		sqliteExec(t, p, "PRAGMA journal_mode = DELETE")
	}
	start := func(j *Journal) error { return j.Start(testMeta) }
	for _, tc := range []struct {
		name     string
		make     func(t *testing.T, p string)
		headless bool
		begin    func(j *Journal) error
	}{
		{"DELETE mode, continued", deleteMode, false, (*Journal).Continue},
		{"DELETE mode, started afresh", deleteMode, false, start},
		{"empty file", func(t *testing.T, p string) {
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, true, start},
		{"SQLite file without tables", func(t *testing.T, p string) { sqliteExec(t, p, "PRAGMA user_version = 7") }, true, start},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "j")
			tc.make(t, p)
			if m := filetest.JournalMode(t, p); m != "delete" {
				t.Fatalf("journal mode %q before, want delete", m)
			}
			before := filetest.Sums(t, p)
			j, err := Open(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if info := j.Info(); info.Headless != tc.headless || (info.Rows == 50) == tc.headless {
				t.Fatalf("info %+v", info)
			}
			// Locked as a write would lock it, an empty file too.
			k, err := Open(context.Background(), p)
			if err == nil {
				_ = k.Close()
			}
			if !errors.Is(err, ErrLocked) {
				t.Fatalf("a second Open: %v", err)
			}
			for n := 1; n <= 60; n++ {
				if _, ok, err := j.Lookup(n, entry(n).Key); err != nil || ok != (n <= 50 && !tc.headless) {
					t.Fatalf("Lookup(%d) = %v, %v", n, ok, err)
				}
			}
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			if after := filetest.Sums(t, p); after != before {
				t.Fatalf("Open changed the file: %v, was %v", after, before)
			}
			if side, _ := filepath.Glob(p + "-*"); len(side) > 0 {
				t.Fatalf("Open left %q", side)
			}
			if m := filetest.JournalMode(t, p); m != "delete" {
				t.Fatalf("journal mode %q after Open, want delete", m)
			}

			j, err = Open(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if err := errors.Join(tc.begin(j), j.Close()); err != nil {
				t.Fatal(err)
			}
			if m := filetest.JournalMode(t, p); m != "wal" {
				t.Fatalf("journal mode %q after the first write, want wal", m)
			}
			if info := reopen(t, p).Info(); info.Headless {
				t.Fatalf("after the first write: %+v", info)
			}
		})
	}
}

// TestOpenCancelled: Open and Create stop at a cancelled ctx with its
// error, and leave the journal as it was and unlocked.
func TestOpenCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, err := Create(context.Background(), path, testMeta)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(j.Record(entry(1)), j.Close()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, open := range map[string]func() (*Journal, error){
		"Open":   func() (*Journal, error) { return Open(ctx, path) },
		"Create": func() (*Journal, error) { return Create(ctx, path, testMeta) },
	} {
		if j, err := open(); !errors.Is(err, context.Canceled) {
			if j != nil {
				_ = j.Close()
			}
			t.Errorf("%s with a cancelled ctx: %v, want context.Canceled", name, err)
		}
	}
	if info := reopen(t, path).Info(); info.Rows != 1 || info.Runs != 1 {
		t.Fatalf("after the cancelled opens: %+v", info)
	}
}

// TestCreateCancelledLeavesNoFile: a Create stopped before the journal
// began leaves no file where there was none (it left an empty one, which
// kept the directory made for it from being removed).
func TestCreateCancelledLeavesNoFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Create(ctx, path, testMeta); !errors.Is(err, context.Canceled) {
		t.Fatalf("Create with a cancelled ctx: %v", err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s is there after a cancelled Create: %v", filepath.Base(p), err)
		}
	}
}

// TestLocked: a second run cannot open or replace a journal in use.
func TestLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, err := Create(context.Background(), path, testMeta)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := j.Record(entry(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), path); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open while in use: %v", err)
	}
	if _, err := Create(context.Background(), path, testMeta); !errors.Is(err, ErrLocked) {
		t.Fatalf("Create while in use: %v", err)
	}
	if _, ok, err := j.Lookup(1, entry(1).Key); !ok || err != nil {
		t.Fatalf("the journal in use was damaged: %v %v", ok, err)
	}
}

// TestChangedAddress: a record whose address key differs is not used.
func TestChangedAddress(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	write(t, path, []int{1, 2, 3})
	j := reopen(t, path)
	if err := j.Continue(); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := j.Lookup(1, entry(1).Key); !ok {
		t.Fatal("row 1 not found")
	}
	if _, ok, _ := j.Lookup(2, 12345); ok {
		t.Fatal("row 2 used for a different address")
	}
	if _, ok, _ := j.Lookup(3, entry(3).Key); !ok {
		t.Fatal("row 3 not found")
	}
	if j.Changed() != 1 {
		t.Fatalf("changed %d, want 1", j.Changed())
	}
}

// TestCompleteAndRestart: a done mark makes the journal complete; Start
// empties it for a new run; another run makes it incomplete again.
func TestCompleteAndRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, err := Create(context.Background(), path, testMeta)
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 3; n++ {
		if err := j.Record(entry(n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Complete(3); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j = reopen(t, path)
	if info := j.Info(); !info.Complete || info.Rows != 3 {
		t.Fatalf("info %+v", info)
	}
	if err := j.Continue(); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j = reopen(t, path)
	if info := j.Info(); info.Complete || info.Runs != 2 || info.Rows != 3 {
		t.Fatalf("after a resumed run: %+v", info)
	}
	other := testMeta
	other.Options = map[string]string{"country": "GB"}
	if err := j.Start(other); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j = reopen(t, path)
	if info := j.Info(); info.Complete || info.Rows != 0 || info.Runs != 1 || info.Meta.Options["country"] != "GB" {
		t.Fatalf("after Start: %+v", info)
	}
}

func TestRemove(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, err := Create(context.Background(), path, testMeta)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("journal still there: %v", err)
	}
}

func TestMetaDiff(t *testing.T) {
	base := Meta{Input: Input{Path: "a.csv", Size: 10, SHA256: "x"},
		Options: map[string]string{"country": "IE", "mapping": "line1=Street", "service": "embedded"}}
	with := func(f func(*Meta)) Meta {
		m := base
		m.Options = map[string]string{}
		for k, v := range base.Options {
			m.Options[k] = v
		}
		f(&m)
		return m
	}
	tests := []struct {
		name string
		now  Meta
		want []string
	}{
		{"same", with(func(*Meta) {}), nil},
		{"same content, other path", with(func(m *Meta) { m.Input.Path = "b.csv" }), nil},
		{"content", with(func(m *Meta) { m.Input.SHA256 = "y" }), []string{"the input file changed"}},
		{"size", with(func(m *Meta) { m.Input.Size = 11 }), []string{"10 bytes then, 11 bytes now"}},
		{"option changed", with(func(m *Meta) { m.Options["country"] = "GB" }), []string{`country was "IE", now "GB"`}},
		{"option added", with(func(m *Meta) { m.Options["language"] = "ga" }), []string{`language was not set, now "ga"`}},
		{"option removed", with(func(m *Meta) { delete(m.Options, "country") }), []string{`country was "IE", now not set`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := base.Diff(tc.now)
			if len(got) != len(tc.want) {
				t.Fatalf("Diff = %q, want %d differences", got, len(tc.want))
			}
			for i := range got {
				if !strings.Contains(got[i], tc.want[i]) {
					t.Errorf("difference %d = %q, want it to contain %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestResumeOfResume: a row an earlier run left (it failed, or was in
// flight) and a later run recorded is found by a third run.
func TestResumeOfResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	var first []int
	for n := 1; n <= 300; n++ {
		if n != 5 && n != 150 {
			first = append(first, n)
		}
	}
	write(t, path, first)
	j := reopen(t, path)
	if err := j.Continue(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{5, 150, 301, 302} {
		if err := j.Record(entry(n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j = reopen(t, path)
	if info := j.Info(); info.Runs != 2 || info.Rows != 302 {
		t.Fatalf("info %+v", info)
	}
	if err := j.Continue(); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 302; n++ {
		if _, ok, err := j.Lookup(n, entry(n).Key); !ok || err != nil {
			t.Fatalf("row %d not found (%v): a later run's record was missed", n, err)
		}
	}
}

// TestConcurrentRecords: rows recorded from many goroutines at once (group
// commit) all come back intact.
func TestConcurrentRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	const goroutines, each = 16, 200
	j, err := Create(context.Background(), path, testMeta)
	if err != nil {
		t.Fatal(err)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				if err := j.Record(entry(int(next.Add(1)))); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if j.Info().Rows != goroutines*each {
		t.Fatalf("%d rows counted", j.Info().Rows)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j = reopen(t, path)
	if info := j.Info(); info.Rows != goroutines*each || info.Damaged != 0 {
		t.Fatalf("info %+v", info)
	}
	if err := j.Continue(); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= goroutines*each; n++ {
		e, ok, err := j.Lookup(n, entry(n).Key)
		if err != nil || !ok || !reflect.DeepEqual(e, entry(n)) {
			t.Fatalf("row %d: %v %v", n, ok, err)
		}
	}
}

// TestDamagedRecord: a byte changed inside two records costs those two
// rows (counted in Damaged, verified again); every other row is used, and
// a resumed run's record of a damaged row replaces it.
func TestDamagedRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	write(t, path, shuffled(300, 8, 4))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{"1 Main Street 100", "1 Main Street 200"} {
		i := bytes.Index(b, []byte(label))
		if i < 0 || bytes.Count(b, []byte(label)) != 1 {
			t.Fatalf("%q found %d times", label, bytes.Count(b, []byte(label)))
		}
		b[i+len(label)-1] ^= 0x01 // "100" → "101": another row's answer
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	j := reopen(t, path)
	if info := j.Info(); info.Damaged != 2 || info.Rows != 298 {
		t.Fatalf("info %+v", info)
	}
	if err := j.Continue(); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 300; n++ {
		e, ok, err := j.Lookup(n, entry(n).Key)
		if err != nil || ok == (n == 100 || n == 200) || ok && !reflect.DeepEqual(e, entry(n)) {
			t.Fatalf("row %d: %v %v %+v", n, ok, err, e)
		}
	}
	if err := j.Record(entry(100)); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if info := reopen(t, path).Info(); info.Damaged != 1 || info.Rows != 299 {
		t.Fatalf("after a resumed run recorded row 100: %+v", info)
	}
}

// FuzzOpen: whatever the file holds, Open and a replay neither panic nor
// return a row other than one recorded with exactly that result; a damaged
// file is an error wrapping ErrCorrupt that names it.
func FuzzOpen(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed")
	write(f, path, shuffled(60, 8, 5))
	seed, _ := os.ReadFile(path)
	f.Add(seed, uint64(0), uint8(0))
	// Bytes changed at random over the whole file: pages, keys, values.
	for i := range uint64(120) {
		f.Add(seed, i, uint8(1+i%8))
	}
	f.Fuzz(func(t *testing.T, b []byte, seed uint64, flips uint8) {
		r := rand.New(rand.NewPCG(seed, 2))
		b = bytes.Clone(b)
		for range min(flips, 64) {
			if len(b) > 0 {
				b[r.IntN(len(b))] ^= byte(1 + r.IntN(255))
			}
		}
		p := filepath.Join(t.TempDir(), "j")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		j, err := Open(context.Background(), p)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), p) {
				t.Fatalf("Open: %v, want ErrCorrupt naming the file", err)
			}
			return
		}
		defer j.Close()
		for n := 1; n <= 64; n++ {
			e, ok, err := j.Lookup(n, entry(n).Key)
			if err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("row %d: %v", n, err)
			}
			if ok && !reflect.DeepEqual(e, entry(n)) {
				t.Fatalf("row %d: got %+v", n, e)
			}
		}
	})
}

// TestKilledWriter kills (SIGKILL) a process while it records rows from
// eight goroutines: the journal opens cleanly, with no damaged record,
// every record in it is a row recorded with exactly its result, and every
// row whose Record returned before the last one the writer reported is
// there.
func TestKilledWriter(t *testing.T) {
	if path := os.Getenv("JOURNAL_TEST_WRITER"); path != "" {
		j, err := Create(context.Background(), path, testMeta)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		var wg sync.WaitGroup
		var next atomic.Int64
		var mu sync.Mutex
		for range 8 {
			wg.Go(func() {
				for {
					// Rows are recorded in order (under mu), each Record
					// returning once it is committed.
					mu.Lock()
					n := int(next.Add(1))
					err := j.Record(entry(n))
					mu.Unlock()
					if err != nil {
						panic(err)
					}
					if n%100 == 0 {
						// Every row up to n was recorded: in the file,
						// but for those the cache answered (queued).
						fmt.Println(n)
					}
				}
			})
		}
		wg.Wait()
	}
	for round := range 3 {
		path := filepath.Join(t.TempDir(), "j")
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriter$")
		cmd.Env = append(os.Environ(), "JOURNAL_TEST_WRITER="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		committed := 0
		for commits := 0; commits < 3*(round+1) && sc.Scan(); commits++ {
			n, err := strconv.Atoi(sc.Text())
			if err != nil {
				t.Fatalf("writer: %s", sc.Text())
			}
			committed = n
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		if committed == 0 {
			t.Fatalf("round %d: the writer committed nothing", round)
		}
		j := reopen(t, path)
		info := j.Info()
		if info.Damaged != 0 {
			t.Fatalf("round %d: %d rows committed, journal %+v", round, committed, info)
		}
		for n := 1; n <= max(committed, int(info.Rows))+50; n++ {
			e, ok, err := j.Lookup(n, entry(n).Key)
			if err != nil || ok && !reflect.DeepEqual(e, entry(n)) || !ok && n <= committed && !entry(n).FromCache {
				t.Fatalf("round %d: row %d (committed up to %d): %v %v %+v", round, n, committed, ok, err, e)
			}
		}
	}
}

// TestRecordFromCacheQueued: a row the cache answered stands for no call,
// so Record queues it instead of committing it on its own (a run over a
// warm cache records its rows one after another: a commit each); a paid
// row's Record commits it along, and Close keeps the rest.
func TestRecordFromCacheQueued(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, err := Create(context.Background(), path, testMeta)
	if err != nil {
		t.Fatal(err)
	}
	cached := func(n int) Entry {
		e := entry(n)
		e.FromCache, e.Err, e.Kind, e.Response = true, "", "", answer(strconv.Itoa(n))
		return e
	}
	const rows = 600
	for n := 1; n <= rows; n++ {
		if err := j.Record(cached(n)); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := j.Lookup(n, cached(n).Key); err != nil || !ok || !reflect.DeepEqual(got, cached(n)) {
			t.Fatalf("row %d just recorded: %+v, %v, %v", n, got, ok, err)
		}
	}
	// A commit per sqlitefile.DefaultBatchRows rows, and one a second.
	if c := j.batch.Commits(); c > rows/sqlitefile.DefaultBatchRows+2 {
		t.Fatalf("%d rows the cache answered took %d commits", rows, c)
	}
	paid := entry(rows + 1)
	paid.FromCache = false
	if err := j.Record(paid); err != nil {
		t.Fatal(err)
	}
	var queued int
	j.batch.Pending(func(rs []record) { queued = len(rs) })
	if queued != 0 {
		t.Fatalf("a paid row's Record returned with %d rows queued", queued)
	}
	for n := rows + 2; n < rows+12; n++ {
		if err := j.Record(cached(n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j = reopen(t, path)
	if info := j.Info(); info.Rows != rows+11 || info.Damaged != 0 {
		t.Fatalf("reopened: %+v, want %d rows", info, rows+11)
	}
	for n := 1; n < rows+12; n++ {
		want := cached(n)
		if n == rows+1 {
			want = paid
		}
		if got, ok, err := j.Lookup(n, want.Key); err != nil || !ok || !reflect.DeepEqual(got, want) {
			t.Fatalf("row %d reopened: %+v, %v, %v", n, got, ok, err)
		}
	}
}

// BenchmarkRecord is the journal's cost per row of a run.
func BenchmarkRecord(b *testing.B) {
	j, err := Create(context.Background(), filepath.Join(b.TempDir(), "j"), testMeta)
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(4) // 8 workers on 2 cores, as an embedded run has
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			e := entry(int(next.Add(1)))
			if err := j.Record(e); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(next.Load())/float64(j.batch.Commits()), "rows/commit")
}

// BenchmarkResume is what --resume costs before and while it replays: Open
// checks every record, then Lookup hands each row back.
func BenchmarkResume(b *testing.B) {
	path := filepath.Join(b.TempDir(), "j")
	const rows = 20000
	write(b, path, shuffled(rows, 64, 1))
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	for b.Loop() {
		j, err := Open(context.Background(), path)
		if err != nil {
			b.Fatal(err)
		}
		for n := 1; n <= rows; n++ {
			if _, ok, err := j.Lookup(n, entry(n).Key); !ok || err != nil {
				b.Fatal(n, ok, err)
			}
		}
		if err := j.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
}

// BenchmarkOpen is the check of every page and record that Open makes
// before a resume.
func BenchmarkOpen(b *testing.B) {
	path := filepath.Join(b.TempDir(), "j")
	write(b, path, shuffled(20000, 64, 1))
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		j, err := Open(context.Background(), path)
		if err != nil {
			b.Fatal(err)
		}
		if j.Info().Rows != 20000 {
			b.Fatal(j.Info())
		}
		if err := j.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDamagedWhileOpen: a journal cut short, zeroed, deleted or replaced
// while a run records into it never crashes or waits: Record and Lookup go
// on or fail with ErrCorrupt naming the file (then Broken says so), Close
// returns, and Remove leaves a replacing file alone.
func TestDamagedWhileOpen(t *testing.T) {
	tests := map[string]func(p string) error{
		"cut to zero":  func(p string) error { return os.Truncate(p, 0) },
		"cut to half":  func(p string) error { fi, _ := os.Stat(p); return os.Truncate(p, fi.Size()/2) },
		"pages zeroed": func(p string) error { fi, _ := os.Stat(p); return os.WriteFile(p, make([]byte, fi.Size()), 0o600) },
		"deleted":      os.Remove,
		"replaced": func(p string) error {
			if err := os.WriteFile(p+".new", []byte("other"), 0o600); err != nil {
				return err
			}
			return os.Rename(p+".new", p)
		},
	}
	for name, damage := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "j")
			write(t, path, shuffled(600, 8, 6))
			j := reopen(t, path)
			if err := j.Continue(); err != nil {
				t.Fatal(err)
			}
			if err := damage(path); err != nil {
				t.Fatal(err)
			}
			var failed error
			for n := 1; n <= 1200 && failed == nil; n++ {
				e, ok, err := j.Lookup(n, entry(n).Key)
				if ok && !reflect.DeepEqual(e, entry(n)) {
					t.Fatalf("row %d: another record %+v", n, e)
				}
				if err == nil && n > 600 {
					err = j.Record(entry(n))
				}
				failed = err
			}
			if failed != nil && (!errors.Is(failed, ErrCorrupt) || !strings.Contains(failed.Error(), path) || j.Broken() == nil) {
				t.Fatalf("failed with %v (Broken %v), want ErrCorrupt naming the file", failed, j.Broken())
			}
			if got, want := j.Replaced(), name == "deleted" || name == "replaced"; got != want {
				t.Errorf("Replaced = %v, want %v", got, want)
			}
			_ = j.Remove()
			if name == "replaced" {
				if b, err := os.ReadFile(path); err != nil || string(b) != "other" {
					t.Errorf("Remove touched the file that replaced the journal: %q, %v", b, err)
				}
			}
		})
	}
}

// TestLookupRowsOfThisProcess: rows recorded by this process are found
// (Lookup asks the file only for rows up to the highest one it holds), and
// none after Start empties the journal.
func TestLookupRowsOfThisProcess(t *testing.T) {
	j, err := Create(context.Background(), filepath.Join(t.TempDir(), "j"), testMeta)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = j.Close() })
	rows := shuffled(300, 16, 4)
	for _, n := range rows {
		if err := j.Record(entry(n)); err != nil {
			t.Fatal(err)
		}
	}
	for n := 1; n <= 310; n++ {
		e, ok, err := j.Lookup(n, entry(n).Key)
		if err != nil || ok != (n <= 300) || (ok && !reflect.DeepEqual(e, entry(n))) {
			t.Fatalf("row %d: %+v, %v, %v", n, e, ok, err)
		}
	}
	if err := j.Start(testMeta); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := j.Lookup(5, entry(5).Key); ok || err != nil {
		t.Fatalf("after Start: %v, %v", ok, err)
	}
}

// TestPageCacheBounded: the journal's connection keeps SQLite's page cache
// at cacheKiB (its default, 2 MiB, was a tenth of a live run's memory).
func TestPageCacheBounded(t *testing.T) {
	j, err := Create(context.Background(), filepath.Join(t.TempDir(), "j"), testMeta)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var n int
	err = j.f.Do(context.Background(), func(c *sql.Conn) error {
		return c.QueryRowContext(context.Background(), "PRAGMA cache_size").Scan(&n)
	})
	if err != nil || n != -cacheKiB {
		t.Fatalf("cache_size %d (%v), want %d", n, err, -cacheKiB)
	}
}

// serviceAnswers are answers of the embedded service as a live run stores
// them (1.4 to 1.8 KB each), one per line of testdata/answers.jsonl.
func serviceAnswers(tb testing.TB) [][]byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "answers.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	return bytes.Split(bytes.TrimSpace(b), []byte("\n"))
}

// BenchmarkRecordAnswers is the journal's CPU per row of a live run: eight
// workers recording the service's answers as they finish (group commit),
// each Record returning once its row is committed. cpu-µs/row is the
// process's CPU time (user and system) per row; rows/commit how many rows
// shared a commit.
func BenchmarkRecordAnswers(b *testing.B) {
	answers := serviceAnswers(b)
	resps := make([]*api.VerifyResponse, len(answers))
	for i, a := range answers {
		var err error
		if resps[i], err = api.DecodeVerifyResponse(a); err != nil {
			b.Fatal(err)
		}
	}
	j, err := Create(context.Background(), filepath.Join(b.TempDir(), "j"), testMeta)
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	const workers = 8
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, cpuOK := cpuTime()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				n := int(next.Add(1))
				if n > b.N {
					return
				}
				i := n % len(answers)
				if err := j.Record(Entry{Row: n, Key: uint64(n), Response: resps[i], Answer: answers[i]}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if cpu1, ok := cpuTime(); ok && cpuOK {
		b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(b.N), "cpu-µs/row")
	}
	b.ReportMetric(float64(b.N)/float64(j.batch.Commits()), "rows/commit")
}

// TestInfoAfterFailedCommit: the rows queued (from the cache) that a
// failed commit lost are not counted in Info().Rows, which the run reports
// as the rows the journal keeps for --resume.
func TestInfoAfterFailedCommit(t *testing.T) {
	j, err := Create(context.Background(), filepath.Join(t.TempDir(), "j"), testMeta)
	if err != nil {
		t.Fatal(err)
	}
	paid := func(n int) Entry { e := entry(n); e.FromCache = false; return e }
	for n := 1; n <= 10; n++ {
		if err := j.Record(paid(n)); err != nil {
			t.Fatal(err)
		}
	}
	// The file full: no page can be added (a full disk, as SQLite sees it).
	err = j.f.Do(context.Background(), func(c *sql.Conn) error {
		_, err := c.ExecContext(context.Background(), "PRAGMA max_page_count = 1")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for n := 11; n <= 60; n++ {
		e := paid(n)
		e.FromCache = true
		if err := j.Record(e); err != nil {
			break // a queue filled, and its commit failed
		}
	}
	if err := j.Close(); err == nil {
		t.Fatal("Close committed rows into a full file")
	}
	for range 2 { // a second Close changes nothing
		if got := j.Info().Rows; got != 10 {
			t.Fatalf("Info().Rows = %d after the queued rows' commit failed, want the 10 committed", got)
		}
		_ = j.Close()
	}
}
