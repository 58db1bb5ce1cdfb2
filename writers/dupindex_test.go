package writers

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/api"
)

// checkDupIndex adds ids (row rows[i] for ids[i]) to an index capped at
// limit and checks it against a map after every add, and at the end the
// counts in memory (those since the last spill) and, through lookup, the
// merged ones. It returns how many times the index spilled.
func checkDupIndex(t *testing.T, limit int, ids []string, rows []int) int {
	t.Helper()
	x := newDupIndex(t.TempDir(), "p", limit)
	defer x.close()
	all := map[string]dupCount{}   // every row
	inMem := map[string]dupCount{} // rows since the last spill
	count := func(m map[string]dupCount, id string, row int) {
		c := m[id]
		if c.n == 0 {
			c.first = int64(row)
		}
		c.n++
		m[id] = c
	}
	spills, longest := 0, 0
	for i, id := range ids {
		fresh, before := x.get(id).n == 0, x.ids
		if err := x.add(id, rows[i]); err != nil {
			t.Fatal(err)
		}
		// A fresh id either joins the records or, past the cap, is the
		// first record after a spill.
		if fresh && x.ids != before+1 {
			if x.ids != 1 || x.f == nil {
				t.Fatalf("add %d (%d bytes): %d ids in memory after %d", i, len(id), x.ids, before)
			}
			spills++
			clear(inMem)
		}
		count(all, id, rows[i])
		count(inMem, id, rows[i])
		longest = max(longest, len(id))
		if len(x.arena) > limit && x.ids != 1 {
			t.Fatalf("add %d: the arena holds %d bytes and %d ids, past its cap of %d", i, len(x.arena), x.ids, limit)
		}
		if c := cap(x.arena); c > max(limit, dupHead+binary.MaxVarintLen64+longest) {
			t.Fatalf("add %d: the arena's capacity is %d, past its cap of %d", i, c, limit)
		}
		if 4*x.ids > 3*len(x.slots) || len(x.slots)&(len(x.slots)-1) != 0 {
			t.Fatalf("add %d: %d ids in a table of %d", i, x.ids, len(x.slots))
		}
	}
	if x.ids != len(inMem) {
		t.Fatalf("%d ids in memory, want %d", x.ids, len(inMem))
	}
	for id, want := range inMem {
		if got := x.get(id); got != want {
			t.Fatalf("in memory %q: %+v, want %+v", id, got, want)
		}
	}
	err := x.lookup(func(get func(string) (dupCount, error)) error {
		check := func(id string, want dupCount) error {
			got, err := get(id)
			if err != nil {
				return err
			}
			if got != want {
				return fmt.Errorf("%q (%d bytes): %+v, want %+v", id[:min(len(id), 40)], len(id), got, want)
			}
			return nil
		}
		for id, want := range all {
			if err := check(id, want); err != nil {
				return err
			}
			// One byte more or less is another id.
			for _, other := range []string{id + "\x00", id[:max(0, len(id)-1)]} {
				if _, ok := all[other]; !ok {
					if err := check(other, dupCount{}); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return spills
}

// dupStream makes n ids with rows rising by 1 to 3: a fresh id of up to
// maxLen bytes from alphabet, the start of a shared base (ids that are
// prefixes of one another), a repeat of one of the last 8 ids, or of any
// id seen.
func dupStream(rnd *rand.Rand, n, maxLen int, alphabet string) (ids []string, rows []int) {
	base := make([]byte, maxLen)
	for i := range base {
		base[i] = alphabet[rnd.IntN(len(alphabet))]
	}
	row := 0
	for range n {
		var id string
		switch k := rnd.IntN(10); {
		case k < 3 || len(ids) == 0:
			b := make([]byte, rnd.IntN(maxLen+1))
			for i := range b {
				b[i] = alphabet[rnd.IntN(len(alphabet))]
			}
			id = string(b)
		case k < 5:
			id = string(base[:rnd.IntN(maxLen+1)])
		case k < 8:
			id = ids[len(ids)-1-rnd.IntN(min(8, len(ids)))]
		default:
			id = ids[rnd.IntN(len(ids))]
		}
		row += 1 + rnd.IntN(3)
		ids, rows = append(ids, id), append(rows, row)
	}
	return ids, rows
}

// TestDupIndexProperty checks random streams of ids (empty, short, long,
// sharing prefixes, repeated near and far) against a map, with caps small
// enough to spill many times and one that never spills.
func TestDupIndexProperty(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 11))
	for _, tc := range []struct {
		name      string
		maxLen    int
		alphabet  string
		limit     int
		minSpills int
	}{
		{"short", 3, "ab\x00", 64, 10},
		{"short/memory", 3, "ab\x00", dupMemBytes, 0},
		{"medium", 40, "AB\xff", 300, 50},
		{"long", 2000, "xy", 4 << 10, 50},
		{"mixed", 300, "0123456789", 1 << 10, 50},
		{"mixed/memory", 300, "0123456789", dupMemBytes, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids, rows := dupStream(rnd, 1500, tc.maxLen, tc.alphabet)
			spills := checkDupIndex(t, tc.limit, ids, rows)
			if spills < tc.minSpills || (tc.minSpills == 0) != (spills == 0) {
				t.Fatalf("%d spills, want at least %d", spills, tc.minSpills)
			}
		})
	}
}

// TestDupIndexCap: a fresh id spills the records when its record, with room
// for the longest length prefix, would take the arena past the cap; at the
// cap or under it, it joins them. A single id longer than the cap is kept
// alone, and a repeat costs nothing.
func TestDupIndexCap(t *testing.T) {
	reserve := dupHead + binary.MaxVarintLen64 // a record's bytes besides its id, at most
	rec := func(n int) int { return dupHead + len(binary.AppendUvarint(nil, uint64(n))) + n }
	for _, tc := range []struct {
		name         string
		limit, first int // the cap, the first id's length
		over         int // how far past the cap the second id's record would go
		spill        bool
	}{
		{"under", 200, 1, -1, false},
		{"at", 200, 1, 0, false},
		{"over", 200, 1, 1, true},
		{"at/long prefix", 400, 130, 0, false},
		{"over/long prefix", 400, 130, 1, true},
		{"at/grown", 10_000, 1, 0, false},
		{"over/grown", 10_000, 1, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := strings.Repeat("a", tc.first)
			b := strings.Repeat("b", tc.limit-rec(tc.first)-reserve+tc.over)
			x := newDupIndex(t.TempDir(), "p", tc.limit)
			defer x.close()
			for i, id := range []string{a, b, a, b} {
				if err := x.add(id, i+1); err != nil {
					t.Fatal(err)
				}
			}
			if spilled := x.f != nil; spilled != tc.spill {
				t.Fatalf("spilled: %v, want %v", spilled, tc.spill)
			}
			if !tc.spill && cap(x.arena) > tc.limit {
				t.Fatalf("the arena's capacity is %d, past its cap of %d", cap(x.arena), tc.limit)
			}
			err := x.lookup(func(get func(string) (dupCount, error)) error {
				for id, want := range map[string]dupCount{a: {2, 1}, b: {2, 2}} {
					if got, err := get(id); err != nil || got != want {
						t.Errorf("%d bytes: %+v %v, want %+v", len(id), got, err, want)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("larger than the cap", func(t *testing.T) {
		big := strings.Repeat("L", 1000)
		x := newDupIndex(t.TempDir(), "p", 100)
		defer x.close()
		for i, id := range []string{big, big, "s", big, "s"} {
			if err := x.add(id, i+1); err != nil {
				t.Fatal(err)
			}
			if i == 1 && (x.f != nil || x.get(big) != dupCount{2, 1}) {
				t.Fatalf("a lone id past the cap: spilled %v, counts %+v", x.f != nil, x.get(big))
			}
		}
		if cap(x.arena) > reserve+len(big) {
			t.Fatalf("the arena's capacity is %d, more than its longest record", cap(x.arena))
		}
		err := x.lookup(func(get func(string) (dupCount, error)) error {
			for id, want := range map[string]dupCount{big: {3, 1}, "s": {2, 3}} {
				if got, err := get(id); err != nil || got != want {
					t.Errorf("%d bytes: %+v %v, want %+v", len(id), got, err, want)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// TestDupIndexGrowth: the table doubles when a fresh id would fill more
// than three quarters of it, not before, and not for repeats.
func TestDupIndexGrowth(t *testing.T) {
	x := newDupIndex(t.TempDir(), "p", dupMemBytes)
	defer x.close()
	id := func(i int) string { return fmt.Sprintf("ID-%d", i) }
	n := 0
	for _, tc := range []struct{ ids, slots int }{
		{dupSlots * 3 / 4, dupSlots},
		{dupSlots*3/4 + 1, 2 * dupSlots},
		{dupSlots * 3 / 2, 2 * dupSlots},
		{dupSlots*3/2 + 1, 4 * dupSlots},
	} {
		for ; n < tc.ids; n++ {
			if err := x.add(id(n), n+1); err != nil {
				t.Fatal(err)
			}
		}
		if err := x.add(id(0), n+1); err != nil { // a repeat
			t.Fatal(err)
		}
		if len(x.slots) != tc.slots {
			t.Fatalf("%d ids: a table of %d, want %d", tc.ids, len(x.slots), tc.slots)
		}
	}
	for i := range n {
		want := dupCount{1, int64(i + 1)}
		if i == 0 {
			want.n = 5
		}
		if got := x.get(id(i)); got != want {
			t.Fatalf("%s: %+v, want %+v", id(i), got, want)
		}
	}
}

// FuzzDupIndex checks the index against a map on ids split from data at
// newlines (so some are empty), capped at 1 to 1024 bytes.
func FuzzDupIndex(f *testing.F) {
	f.Add([]byte("a\nb\na\n\n\nab\na\nb"), uint16(0))
	f.Add([]byte("ID-1\nID-2\nID-1\nID-10\nID-1\n\xff\x00\n\xff"), uint16(40))
	f.Add([]byte(strings.Repeat("x", 700)+"\n"+strings.Repeat("x", 699)+"\nx\n"+strings.Repeat("x", 700)), uint16(200))
	f.Add(bytes.Repeat([]byte("p\npq\npqr\n"), 50), uint16(1023))
	f.Fuzz(func(t *testing.T, data []byte, limit uint16) {
		var ids []string
		var rows []int
		for i, id := range bytes.Split(data, []byte("\n")) {
			ids, rows = append(ids, string(id)), append(rows, i+1)
		}
		checkDupIndex(t, 1+int(limit)%1024, ids, rows)
	})
}

// TestDupPassHugeID writes an enriched CSV whose address ids are 1 MiB
// (two of them alike but for the last byte) and one of whose rows has a
// 1 MiB cell, with the counts in memory and with a cap below one id.
func TestDupPassHugeID(t *testing.T) {
	huge := strings.Repeat("I", 1<<20)
	h1, h2, long := huge+"1", huge+"2", strings.Repeat("c", 1<<20)
	ids := []string{h1, "S", h2, h1, "", "S", h1}
	want := map[string][2]string{h1: {"3", "1"}, h2: {"1", "3"}, "S": {"2", "2"}, "": {"", ""}}
	rs := make([]Result, len(ids))
	for i, id := range ids {
		rs[i] = Result{Row: i + 1, Cells: []string{fmt.Sprint(i + 1), "addr"}}
		if i == 1 {
			rs[i].Cells[1] = long
		}
		if id == "" {
			rs[i].Err = "no address"
			continue
		}
		rs[i].Response = response(api.ActionAccept, []string{"1 Main St"}, []string{"1 Main St"}, nil)
		rs[i].Response.Address.ID = id
	}
	for _, limit := range []int{dupMemBytes, 64 << 10} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			dupMemLimit = limit
			defer func() { dupMemLimit = dupMemBytes }()
			dir := t.TempDir()
			path := filepath.Join(dir, "out.csv")
			d := writeDups(t, path, rs)
			if d.Groups != 2 || d.Rows != 5 || d.Largest != 3 || d.LargestID != h1 {
				t.Errorf("Duplicates: %d groups of %d rows, largest %d (id of %d bytes)", d.Groups, d.Rows, d.Largest, len(d.LargestID))
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			recs, err := csv.NewReader(f).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			idCol, dupCol := 2+4, 2+len(EnrichedColumns)
			if len(recs) != 1+len(ids) || recs[0][idCol] != "av_address_id" || recs[0][dupCol] != "av_duplicates" {
				t.Fatalf("%d records, header %q", len(recs), recs[0])
			}
			for i, rec := range recs[1:] {
				got := [2]string{rec[dupCol], rec[dupCol+1]}
				if rec[idCol] != ids[i] || got != want[ids[i]] || rec[1] != rs[i].Cells[1] {
					t.Errorf("row %d: id of %d bytes, duplicates %q, want %q", i+1, len(rec[idCol]), got, want[ids[i]])
				}
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("directory holds %d files, want the output and no scratch file", len(ents))
			}
		})
	}
}
