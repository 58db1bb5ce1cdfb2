package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/addrclean/addrclean/api"
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
func write(t testing.TB, path string, window int, rows []int) {
	t.Helper()
	j, err := Create(path, testMeta, window)
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
	j, err := Open(path)
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
// recorded, with their results unchanged, and the reader never holds much
// more than a window of records.
func TestReplay(t *testing.T) {
	tests := []struct {
		name   string
		rows   []int
		asked  int // rows 1..asked are looked up
		window int
	}{
		{"in order", shuffled(500, 2, 1), 500, 8},
		{"out of order within the window", shuffled(3000, 64, 2), 3000, 64},
		{"gaps: rows never recorded", []int{1, 2, 4, 5, 9, 10, 11, 30}, 40, 8},
		{"empty", nil, 10, 8},
		{"more asked than recorded", shuffled(100, 16, 3), 300, 16},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "j")
			write(t, path, tc.window, tc.rows)
			j := reopen(t, path)
			if info := j.Info(); info.Rows != int64(len(tc.rows)) || info.Runs != 1 || info.Complete || info.Torn != 0 ||
				!reflect.DeepEqual(info.Meta, testMeta) {
				t.Fatalf("info = %+v", info)
			}
			if err := j.Continue(tc.window); err != nil {
				t.Fatal(err)
			}
			recorded := map[int]bool{}
			for _, n := range tc.rows {
				recorded[n] = true
			}
			peak := 0
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
				held := 0
				for _, sg := range j.segs {
					held += len(sg.pending)
				}
				peak = max(peak, held)
			}
			if limit := 3 * (tc.window + slack); peak > limit {
				t.Errorf("reader held %d records at once, want at most %d", peak, limit)
			}
			if j.Replayed() != int64(len(tc.rows)) {
				t.Errorf("Replayed = %d, want %d", j.Replayed(), len(tc.rows))
			}
		})
	}
}

// TestTornLastRecord cuts the file at every byte of its last record, and
// appends garbage or flips a bit in it: the record is dropped, every other
// one is read, and a resumed journal appends cleanly after the cut.
func TestTornLastRecord(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "j")
	write(t, path, 8, []int{1, 2, 3, 4})
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	last := bytes.LastIndexByte(whole[:len(whole)-1], '\n') + 1
	damage := map[string][]byte{}
	for cut := last + 1; cut < len(whole); cut++ {
		damage["cut at "+strconv.Itoa(cut)] = whole[:cut]
	}
	flipped := bytes.Clone(whole)
	flipped[len(flipped)-20] ^= 0x04
	damage["bit flip"] = flipped
	damage["zeros after a cut"] = append(bytes.Clone(whole[:last+30]), make([]byte, 4096)...)
	damage["line without checksum"] = append(bytes.Clone(whole[:last]), []byte(`{"row":4}`+"\n")...)
	for name, b := range damage {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "j")
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
			j, err := Open(p)
			if err != nil {
				t.Fatal(err)
			}
			info := j.Info()
			if info.Rows != 3 || info.Torn != int64(len(b)-last) || info.Damaged != 0 {
				t.Fatalf("rows %d torn %d damaged %d, want 3, %d and 0", info.Rows, info.Torn, info.Damaged, len(b)-last)
			}
			if err := j.Continue(8); err != nil {
				t.Fatal(err)
			}
			for n := 1; n <= 4; n++ {
				_, ok, err := j.Lookup(n, entry(n).Key)
				if err != nil || ok != (n < 4) {
					t.Fatalf("row %d: found %v, %v", n, ok, err)
				}
			}
			if err := j.Record(entry(4)); err != nil {
				t.Fatal(err)
			}
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			j2 := reopen(t, p)
			if info := j2.Info(); info.Rows != 4 || info.Torn != 0 || info.Runs != 2 {
				t.Fatalf("after the resumed run: %+v", info)
			}
		})
	}
}

func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	write(t, good, 8, []int{1})
	goodBytes, _ := os.ReadFile(good)
	firstLine := goodBytes[:bytes.IndexByte(goodBytes, '\n')+1]
	tests := []struct {
		name    string
		content []byte
		want    error
	}{
		{"not a journal", []byte("id,name\n1,x\n"), ErrCorrupt},
		{"row before the header", goodBytes[len(firstLine):], ErrCorrupt},
		{"newer format", []byte(checked(`{"t":"header","journal":"addrclean","version":99,"meta":{}}`)), ErrCorrupt},
		{"damaged header", slices.Concat(firstLine[:20], []byte("x"), goodBytes[21:]), ErrCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "j")
			if err := os.WriteFile(p, tc.content, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Open(p)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("Open = %v, want %v naming the file", err, tc.want)
			}
		})
	}
	if _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

// TestHeadless: a run killed while it created its journal leaves an empty
// file or a torn header. It holds no rows: Open reports it, and Start
// replaces it.
func TestHeadless(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	write(t, good, 8, []int{1})
	b, _ := os.ReadFile(good)
	header := b[:bytes.IndexByte(b, '\n')+1]
	for name, content := range map[string][]byte{
		"empty":       nil,
		"torn header": header[:len(header)-5],
		"zeros":       make([]byte, 300),
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "j")
			if err := os.WriteFile(p, content, 0o600); err != nil {
				t.Fatal(err)
			}
			j, err := Open(p)
			if err != nil {
				t.Fatal(err)
			}
			if info := j.Info(); !info.Headless || info.Rows != 0 {
				t.Fatalf("info %+v", info)
			}
			if err := j.Continue(8); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Continue of a headless journal: %v", err)
			}
			if err := j.Start(testMeta, 8); err != nil {
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

func checked(body string) string { return string(appendLine(nil, []byte(body))) }

// TestLocked: a second run cannot open or replace a journal in use.
func TestLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, err := Create(path, testMeta, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := j.Record(entry(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("Open while in use: %v", err)
	}
	if _, err := Create(path, testMeta, 8); !errors.Is(err, ErrLocked) {
		t.Fatalf("Create while in use: %v", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Fatalf("the journal in use was damaged: %v %v", fi, err)
	}
}

// TestChangedAddress: a record whose address key differs is not used.
func TestChangedAddress(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	write(t, path, 8, []int{1, 2, 3})
	j := reopen(t, path)
	if err := j.Continue(8); err != nil {
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
	if j.Changed() != 1 || j.Replayed() != 2 {
		t.Fatalf("changed %d replayed %d", j.Changed(), j.Replayed())
	}
}

// TestCompleteAndRestart: a done record marks the journal complete; Start
// empties it for a new run; another run's records make it incomplete again.
func TestCompleteAndRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, err := Create(path, testMeta, 8)
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
	other := testMeta
	other.Options = map[string]string{"country": "GB"}
	if err := j.Start(other, 8); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j = reopen(t, path)
	if info := j.Info(); info.Complete || info.Rows != 0 || info.Meta.Options["country"] != "GB" {
		t.Fatalf("after Start: %+v", info)
	}
}

func TestRemove(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, err := Create(path, testMeta, 8)
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

// FuzzOpen: whatever the file holds, Open and a replay neither panic nor
// return a row other than one recorded with exactly that result, and a
// resumed run appends after the last intact record: it keeps every one
// that Open found, damaged lines in between included.
func FuzzOpen(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "seed")
	j, err := Create(path, testMeta, 8)
	if err != nil {
		f.Fatal(err)
	}
	for _, n := range []int{2, 1, 3, 5, 4} {
		if err := j.Record(entry(n)); err != nil {
			f.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		f.Fatal(err)
	}
	seed, _ := os.ReadFile(path)
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Add([]byte(checked(`{"t":"header","journal":"addrclean","version":1,"meta":{}}`) + checked(`{"row":1,"key":"1"}`)))
	flipped := bytes.Clone(seed)
	flipped[len(seed)/2] ^= 0x20
	f.Add(flipped)
	merged := bytes.Clone(seed)
	merged[len(seed)/3+bytes.IndexByte(seed[len(seed)/3:], '\n')] = ' '
	f.Add(merged)
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "j")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		j, err := Open(p)
		if err != nil {
			return
		}
		defer j.Close()
		before := j.Info()
		if before.Headless {
			// Nothing to continue from; a run starts afresh.
			if err := j.Continue(8); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Continue of a headless journal: %v", err)
			}
			return
		}
		if before.Torn < 0 || before.Damaged < 0 || before.Torn > int64(len(b)) {
			t.Fatalf("info %+v of %d bytes", before, len(b))
		}
		if err := j.Continue(8); err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= 8; n++ {
			e, ok, err := j.Lookup(n, entry(n).Key)
			if err != nil || !ok {
				continue
			}
			// A record can only match if its checksum held, so it is one
			// written by Record: for the seed, entry(n) itself.
			if want := entry(n); e.Row != n || e.Key != want.Key {
				t.Fatalf("row %d: got %+v", n, e)
			}
		}
		if err := j.Record(entry(9)); err != nil {
			t.Fatal(err)
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		j2, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer j2.Close()
		after := j2.Info()
		if after.Rows != before.Rows+1 || after.Runs != before.Runs+1 || after.Damaged != before.Damaged || after.Torn != 0 {
			t.Fatalf("after a resumed run with one row: %+v, before it: %+v", after, before)
		}
	})
}

// TestRowRecordIsJSON: the hand-written row record decodes with
// encoding/json to what it holds, strings with quotes and controls included.
func TestRowRecordIsJSON(t *testing.T) {
	for _, e := range []Entry{
		entry(1), entry(7), entry(10),
		{Row: 3, Key: 1<<64 - 1, Err: "service answered 400: \"bad\"\n\x01 <b>é", Kind: "permanent"},
	} {
		b, err := appendRow(nil, e)
		if err != nil {
			t.Fatal(err)
		}
		var rec record
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if rec.Row != e.Row || rec.Key != keyText(e.Key) || rec.Err != e.Err || rec.Kind != e.Kind || rec.FromCache != e.FromCache {
			t.Fatalf("%s decoded to %+v", b, rec)
		}
		if e.Response != nil {
			got, err := decodeResponse(rec.Resp)
			if err != nil || !reflect.DeepEqual(got, e.Response) {
				t.Fatalf("answer: %v %+v", err, got)
			}
		}
	}
}

// BenchmarkRecord is the journal's cost per row of a run.
func BenchmarkRecord(b *testing.B) {
	j, err := Create(filepath.Join(b.TempDir(), "j"), testMeta, 256)
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	e := entry(1)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := j.Record(e); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkResume is what --resume costs before and while it replays: Open
// checks every record, then Lookup hands each row back.
func BenchmarkResume(b *testing.B) {
	path := filepath.Join(b.TempDir(), "j")
	j, err := Create(path, testMeta, 256)
	if err != nil {
		b.Fatal(err)
	}
	const rows = 20000
	for _, n := range shuffled(rows, 64, 1) {
		if err := j.Record(entry(n)); err != nil {
			b.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		b.Fatal(err)
	}
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	b.ResetTimer()
	for range b.N {
		j, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := j.Continue(256); err != nil {
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
		// Continue appended a run record: take it off for the next round.
		if err := os.Truncate(path, fi.Size()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
}

// BenchmarkOpen is the check of every record that Open makes before a
// resume: the part of BenchmarkResume that reads the whole file at once.
func BenchmarkOpen(b *testing.B) {
	path := filepath.Join(b.TempDir(), "j")
	write(b, path, 256, shuffled(20000, 64, 1))
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		j, err := Open(path)
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

// TestResumeOfResume: a row an earlier run left (it failed, or was in
// flight) is recorded by a later run after all of the earlier run's
// records; a third run must still find it, however far back it lies.
func TestResumeOfResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	var first []int
	for n := 1; n <= 300; n++ {
		if n != 5 && n != 150 {
			first = append(first, n)
		}
	}
	write(t, path, 8, first)
	j := reopen(t, path)
	if err := j.Continue(8); err != nil {
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
	if err := j.Continue(8); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 302; n++ {
		if _, ok, err := j.Lookup(n, entry(n).Key); !ok || err != nil {
			t.Fatalf("row %d not found (%v): a later run's record was missed", n, err)
		}
	}
}

// TestConcurrentRecords: rows recorded from many goroutines at once (group
// commit) all come back, each line intact.
func TestConcurrentRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	const goroutines, each = 16, 200
	// Unlike the pipeline's workers, nothing here keeps a goroutine from
	// falling far behind the others: the window covers the whole run, this
	// test is about whole lines.
	j, err := Create(path, testMeta, goroutines*each)
	if err != nil {
		t.Fatal(err)
	}
	// Rows are taken in order, as workers take them, and finish at most
	// the number of goroutines out of order.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if err := j.Record(entry(int(next.Add(1)))); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if j.Info().Rows != goroutines*each {
		t.Fatalf("%d rows counted", j.Info().Rows)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j = reopen(t, path)
	if info := j.Info(); info.Rows != goroutines*each || info.Torn != 0 {
		t.Fatalf("info %+v", info)
	}
	if err := j.Continue(256); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= goroutines*each; n++ {
		e, ok, err := j.Lookup(n, entry(n).Key)
		if err != nil || !ok || !reflect.DeepEqual(e, entry(n)) {
			t.Fatalf("row %d: %v %v", n, ok, err)
		}
	}
}

// twoRuns writes the journal of a run that finished rows 1..300 but for
// 5 and 150 (they failed), kept with a done record, and of a resumed run
// that recorded 5 and 150 and then rows 301..400. It returns the file's
// lines.
func twoRuns(t *testing.T, path string) [][]byte {
	t.Helper()
	j, err := Create(path, testMeta, 8)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range shuffled(300, 8, 4) {
		if n == 5 || n == 150 {
			continue
		}
		if err := j.Record(entry(n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Complete(300); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j = reopen(t, path)
	if err := j.Continue(8); err != nil {
		t.Fatal(err)
	}
	rows := []int{5, 150}
	for _, n := range shuffled(100, 8, 5) {
		rows = append(rows, 300+n)
	}
	for _, n := range rows {
		if err := j.Record(entry(n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(b, []byte("\n"))[:404]
}

// lineOf returns the index of the line holding what, among the first
// lines.
func lineOf(t *testing.T, lines [][]byte, what string) int {
	t.Helper()
	for i, l := range lines {
		if bytes.Contains(l, []byte(what)) {
			return i
		}
	}
	t.Fatalf("no line holds %s", what)
	return 0
}

// TestDamagedMiddle flips, adds and removes bytes in the middle of a
// journal: the records after the damage are kept, the damaged lines are
// counted, and Continue appends after the last intact record without
// cutting off those after the damage.
func TestDamagedMiddle(t *testing.T) {
	smallRecords(t)
	lines := twoRuns(t, filepath.Join(t.TempDir(), "j"))
	rowLine := func(n int) int { return lineOf(t, lines, `{"row":`+strconv.Itoa(n)+`,`) }
	flip := func(line, at int, x byte) func([][]byte) {
		return func(ls [][]byte) { ls[line][at] ^= x }
	}
	tests := []struct {
		name    string
		damage  func(ls [][]byte)
		damaged int64 // lines that fail their check
		lost    []int // rows whose record the damage took
	}{
		{"a row record", flip(rowLine(100), 40, 0x10), 1, []int{100}},
		{"a row's checksum", flip(rowLine(100), 3, 0x01), 1, []int{100}},
		{"a row's checksum in upper case", func(ls [][]byte) {
			l := ls[rowLine(100)]
			if i := bytes.IndexAny(l[:8], "abcdef"); i >= 0 {
				l[i] -= 'a' - 'A'
			} else {
				l[8] = 'x'
			}
		}, 1, []int{100}},
		{"the run record of the first run", flip(1, 20, 0x01), 1, nil},
		{"the run record of the resumed run", flip(lineOf(t, lines[2:], `"t":"run"`)+2, 20, 0x01), 1, nil},
		{"the done record", flip(lineOf(t, lines, `"t":"done"`), 12, 0x02), 1, nil},
		{"a newline: two records run together", func(ls [][]byte) {
			l := ls[rowLine(200)]
			l[len(l)-1] = ' '
		}, 1, []int{200, 0}}, // 0: the row of the next line, filled in below
		{"a newline inside a record", func(ls [][]byte) { ls[rowLine(200)][30] = '\n' }, 2, []int{200}},
		{"a record cut short", func(ls [][]byte) {
			i := rowLine(200)
			ls[i] = append(ls[i][:len(ls[i])/2:len(ls[i])/2], '\n')
		}, 1, []int{200}},
		{"an enormous line", func(ls [][]byte) {
			i := rowLine(200)
			ls[i] = append(bytes.Repeat([]byte("x"), maxRecord+maxRecord/2), ls[i]...)
		}, 1, []int{200}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ls := make([][]byte, len(lines))
			for i, l := range lines {
				ls[i] = bytes.Clone(l)
			}
			lost := slices.Clone(tc.lost)
			if i := slices.Index(lost, 0); i >= 0 {
				var rec record
				if err := json.Unmarshal(lines[rowLine(lost[0])+1][9:], &rec); err != nil {
					t.Fatal(err)
				}
				lost[i] = rec.Row
			}
			tc.damage(ls)
			checkDamaged(t, bytes.Join(ls, nil), tc.damaged, lost)
		})
	}
}

// TestDamagedSeeded flips bytes at seeded offsets anywhere between the
// header and the last record; which rows must survive is worked out from
// the lines alone: a line is intact exactly when it is one that was
// written.
func TestDamagedSeeded(t *testing.T) {
	lines := twoRuns(t, filepath.Join(t.TempDir(), "j"))
	written := map[string]int{} // line -> row (0: not a row)
	for _, l := range lines {
		var rec record
		if err := json.Unmarshal(l[9:], &rec); err != nil {
			t.Fatal(err)
		}
		written[string(l)] = rec.Row
	}
	whole := bytes.Join(lines, nil)
	from, to := len(lines[0]), len(whole)-len(lines[len(lines)-1])
	for seed := range uint64(20) {
		t.Run("seed "+strconv.FormatUint(seed, 10), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 11))
			b := bytes.Clone(whole)
			for range 1 + r.IntN(6) {
				b[from+r.IntN(to-from)] ^= byte(1 + r.IntN(255))
			}
			var damaged int64
			kept := map[int]bool{}
			for _, l := range bytes.SplitAfter(b, []byte("\n")) {
				if len(l) == 0 {
					continue // after the last LF
				}
				row, ok := written[string(l)]
				switch {
				case !ok:
					damaged++
				case row > 0:
					kept[row] = true
				}
			}
			var lost []int
			for n := 1; n <= 400; n++ {
				if !kept[n] {
					lost = append(lost, n)
				}
			}
			checkDamaged(t, b, damaged, lost)
		})
	}
}

// checkDamaged opens a damaged copy of twoRuns' journal, replays it,
// resumes it with one more row and replays it again.
func checkDamaged(t *testing.T, content []byte, damaged int64, lost []int) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "j")
	if err := os.WriteFile(p, content, 0o600); err != nil {
		t.Fatal(err)
	}
	rows := int64(400 - len(lost))
	for round := range 2 {
		j, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		info := j.Info()
		if info.Damaged != damaged || info.Rows != rows || info.Torn != 0 || info.Headless {
			j.Close()
			t.Fatalf("round %d: damaged %d rows %d torn %d, want damaged %d rows %d torn 0",
				round, info.Damaged, info.Rows, info.Torn, damaged, rows)
		}
		if err := j.Continue(8); err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= 400+round; n++ {
			e, ok, err := j.Lookup(n, entry(n).Key)
			if err != nil {
				t.Fatal(err)
			}
			if want := !slices.Contains(lost, n); ok != want {
				j.Close()
				t.Fatalf("round %d: row %d found %v, want %v", round, n, ok, want)
			}
			if ok && !reflect.DeepEqual(e, entry(n)) {
				t.Fatalf("row %d:\n got %+v\nwant %+v", n, e, entry(n))
			}
		}
		if round == 0 {
			if err := j.Record(entry(401)); err != nil {
				t.Fatal(err)
			}
			rows++
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEnormousLine: a line of damage far longer than any record is skipped
// by Open and by the replay without being read into memory.
func TestEnormousLine(t *testing.T) {
	smallRecords(t)
	lines := twoRuns(t, filepath.Join(t.TempDir(), "j"))
	long := 64 * maxRecord
	// resume opens the journal of lines with a line of long zeros after
	// the 200th (none when long is 0), and replays it; it returns the bytes
	// allocated.
	resume := func(long int) uint64 {
		p := filepath.Join(t.TempDir(), "j")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		for i, l := range lines {
			w.Write(l)
			if i == 200 && long > 0 {
				w.Write(make([]byte, long))
				w.WriteString("\n")
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		j := reopen(t, p)
		if info := j.Info(); info.Damaged != min(int64(long), 1) || info.Rows != 400 {
			t.Fatalf("info %+v", info)
		}
		if err := j.Continue(8); err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= 400; n++ {
			if _, ok, err := j.Lookup(n, entry(n).Key); !ok || err != nil {
				t.Fatalf("row %d: %v %v", n, ok, err)
			}
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	base := resume(0)
	// Open and the replay each read the line once: a reader that held it
	// whole would allocate at least twice its length more.
	if got := resume(long); got > base+uint64(long)/4 {
		t.Errorf("Open and the replay allocated %d KB more for a line of %d KB", (got-base)>>10, long>>10)
	}
}

// smallRecords lowers maxRecord for the test, so that enormous lines take
// less time to write and sync.
func smallRecords(t *testing.T) {
	old := maxRecord
	maxRecord = 64 << 10
	t.Cleanup(func() { maxRecord = old })
}

// TestManyDamagedStretches: damage in more places than readers are
// started for still leaves every intact record readable (a run's records
// need no more readers than its run record gives them), and the readers
// stay bounded.
func TestManyDamagedStretches(t *testing.T) {
	lines := twoRuns(t, filepath.Join(t.TempDir(), "j"))
	var lost []int
	for i, l := range lines {
		var rec record
		if err := json.Unmarshal(l[9:len(l)-1], &rec); err != nil {
			t.Fatal(err)
		}
		if rec.T == "" && i%3 == 0 && i < len(lines)-1 {
			l[len(l)/2] ^= 0x01
			lost = append(lost, rec.Row)
		}
	}
	if len(lost) <= 2*maxSplits {
		t.Fatalf("only %d damaged lines", len(lost))
	}
	b := bytes.Join(lines, nil)
	checkDamaged(t, b, int64(len(lost)), lost)
	p := filepath.Join(t.TempDir(), "j")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	j := reopen(t, p)
	if err := j.Continue(8); err != nil {
		t.Fatal(err)
	}
	if got, limit := len(j.segs), 2+maxSplits; got > limit {
		t.Fatalf("%d readers, want at most %d", got, limit)
	}
}

// TestDamagedDoneAtEnd: a damaged done record at the end cannot be told
// from a torn one: the journal looks unfinished (a plain run refuses to
// overwrite it rather than lose its rows), and every row is kept.
func TestDamagedDoneAtEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, err := Create(path, testMeta, 8)
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
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	last := bytes.LastIndexByte(b[:len(b)-1], '\n') + 1
	b[last+12] ^= 0x02
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if info := reopen(t, path).Info(); info.Complete || info.Rows != 3 || info.Damaged != 0 || info.Torn != int64(len(b)-last) {
		t.Fatalf("info %+v", info)
	}
}
