package cache

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/addrclean/addrclean/api"
)

// damageEnv makes the test binary run the damage matrix as a child: a
// SIGBUS or SIGSEGV inside bbolt kills the process, which a test cannot
// recover from, so the parent asserts the child's exit status instead.
const damageEnv = "ADDRCLEAN_CACHE_DAMAGE_CHILD"

// damageSeedEnv overrides the seed of the byte flips (default 1).
const damageSeedEnv = "ADDRCLEAN_CACHE_DAMAGE_SEED"

// fixtureNS are the namespaces of the damage fixture.
var fixtureNS = []Namespace{
	LiveNamespace("https://api.example.com", "k"),
	{ID: "embedded-fixture", Label: "embedded fixture"},
}

// fixture is a closed cache file of about 30 pages: 160 entries in two
// namespaces, a few larger than a page (overflow pages), so that damage can
// land in meta, branch, leaf, overflow and freelist pages. want holds every
// entry's answer as JSON, by namespace and key.
func fixture(t testing.TB, dir string, c *clock) (path string, want map[string]map[string]string) {
	t.Helper()
	path = filepath.Join(dir, "fixture.db")
	d, err := Open(path, Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]map[string]string{}
	for n, ns := range fixtureNS {
		s, err := d.Store(ns, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		want[ns.ID] = map[string]string{}
		for i := range 120 - 80*n {
			key := fmt.Sprintf("%d main street\x00cork %d", i, n)
			r := answer(strconv.Itoa(i))
			r.Address.Label = append(r.Address.Label, fmt.Sprintf("T%02d XY%02d", i, n))
			r.Data.Location = &api.Location{Latitude: 51.89 + float64(i)/1000, Longitude: -8.47}
			if i%40 == 7 {
				r.Form.Message.Value = strings.Repeat("a long message ", 400) // > one page
			}
			if err := s.Put(context.Background(), key, r); err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(r)
			want[ns.ID][key] = string(b)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return path, want
}

// exercise opens a damaged file and uses every operation on it. Each must
// either work or fail with ErrCorrupt naming the file; an answer read back
// must be the one stored (a damaged entry is a miss, never another answer).
// whole says the file's pages in use are intact: then nothing may fail and
// every answer must be there.
func exercise(t *testing.T, path string, opts Options, want map[string]map[string]string, whole bool) {
	t.Helper()
	opts.MustExist = true
	fail := func(op string, err error) {
		t.Helper()
		if whole {
			t.Errorf("%s of a file with its pages intact: %v", op, err)
			return
		}
		wantCorrupt(t, op, path, err)
	}
	d, err := Open(path, opts)
	if err != nil {
		fail("Open", err)
		return
	}
	use(t, d, path, want, fail, whole)
	if err := d.Close(); err != nil {
		fail("Close", err)
	}
}

// use calls every operation of d, handing errors to fail. A Put that
// succeeded must be read back when the file passed Open's check (checked).
func use(t *testing.T, d *DB, path string, want map[string]map[string]string, fail func(string, error), whole bool) {
	t.Helper()
	if _, err := d.Stats(time.Hour); err != nil {
		fail("Stats", err)
	}
	ctx := context.Background()
	for _, ns := range fixtureNS {
		s, err := d.Store(ns, time.Hour)
		if err != nil {
			fail("Store", err)
			continue
		}
		for key, w := range want[ns.ID] {
			r, ok, err := s.Get(ctx, key)
			switch {
			case err != nil:
				fail("Get", err)
			case ok:
				if b, _ := json.Marshal(r); string(b) != w {
					t.Errorf("Get(%q) = %s, want %s (a damaged entry read as an answer)", key, b, w)
				}
			case whole:
				t.Errorf("Get(%q): a miss in a file with its pages intact", key)
			}
		}
		if err := s.Put(ctx, "a new address", answer("new")); err != nil {
			fail("Put", err)
		} else if r, ok, err := s.Get(ctx, "a new address"); err != nil {
			fail("Get after Put", err)
		} else if !ok || r.Address.ID != "new" {
			t.Errorf("Get after Put = %v, %v", r, ok)
		}
	}
	if _, err := d.Prune(30 * time.Minute); err != nil {
		fail("Prune", err)
	}
}

func wantCorrupt(t *testing.T, op, path string, err error) {
	t.Helper()
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
		t.Errorf("%s: %v; want an error wrapping ErrCorrupt naming %s", op, err, path)
	}
}

// damage is one way of breaking the fixture.
type damage struct {
	name string
	fn   func(b []byte) []byte
}

// damages lists the damage matrix for a file whose pages in use end at
// used: truncation at every page boundary up to used and beyond, and to
// half; every page in use zeroed; seeded byte flips in every page header
// and element array, and at random offsets in the pages in use.
func damages(size, used, pageSize int, seed uint64) []damage {
	var ds []damage
	for at := 0; at <= used; at += pageSize {
		ds = append(ds, damage{fmt.Sprintf("truncate to %d", at), func(b []byte) []byte { return b[:at] }})
	}
	ds = append(ds,
		damage{fmt.Sprintf("truncate to %d", size-pageSize), func(b []byte) []byte { return b[:size-pageSize] }},
		damage{"truncate to half", func(b []byte) []byte { return b[:len(b)/2] }})
	for p := 0; p*pageSize < used; p++ {
		ds = append(ds, damage{fmt.Sprintf("zero page %d", p), func(b []byte) []byte {
			clear(b[p*pageSize : (p+1)*pageSize])
			return b
		}})
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	flip := func(name string, off int) {
		x := byte(1 + rng.IntN(255))
		ds = append(ds, damage{fmt.Sprintf("%s: byte %d ^= %#x", name, off, x), func(b []byte) []byte {
			b[off] ^= x
			return b
		}})
	}
	for p := 0; p*pageSize < used; p++ {
		// The page header (id, flags, count, overflow) and the start of the
		// element array.
		flip(fmt.Sprintf("page %d header", p), p*pageSize+rng.IntN(16))
		flip(fmt.Sprintf("page %d elements", p), p*pageSize+16+rng.IntN(64))
	}
	for range 40 { // most land in entries; the headers are covered above
		flip("random", rng.IntN(used))
	}
	return ds
}

// TestDamagedFile: every damage of the matrix gives ErrCorrupt or a clean
// miss from every operation, never a crash and never a wrong answer; a file
// cut after its pages in use loses nothing; what Open accepts, bbolt's own
// Tx.Check finds consistent. Before the fix this crashed at the first
// truncation: SIGBUS in bbolt.Open reading the freelist.
func TestDamagedFile(t *testing.T) {
	if os.Getenv(damageEnv) == "" {
		runDamageChild(t, "^TestDamagedFile$")
		return
	}
	seed := uint64(1)
	if s := os.Getenv(damageSeedEnv); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	c := newClock()
	path, want := fixture(t, t.TempDir(), c)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const pageSize = 4096
	used := usedBytes(t, orig)
	t.Logf("fixture: %d bytes, %d in use; seed %d (%s)", len(orig), used, seed, damageSeedEnv)
	for _, dm := range damages(len(orig), used, pageSize, seed) {
		t.Run(dm.name, func(t *testing.T) {
			b := dm.fn(bytes.Clone(orig))
			p := filepath.Join(t.TempDir(), "damaged.db")
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
			whole := len(b) >= used && bytes.Equal(b[:used], orig[:used])
			exercise(t, p, Options{Now: c.Now, noSync: true}, want, whole)
			boltAgrees(t, p)
		})
	}
}

// TestDamagedWhileOpen: damage done to the file after Open checked it (by
// another program) is met by bbolt as a fault or a panic on the caller's
// goroutine, and is ErrCorrupt, never a crash; after it every call fails
// with it, so nothing is written on top of the damage.
func TestDamagedWhileOpen(t *testing.T) {
	if os.Getenv(damageEnv) == "" {
		runDamageChild(t, "^TestDamagedWhileOpen$")
		return
	}
	c := newClock()
	path, want := fixture(t, t.TempDir(), c)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const pageSize = 4096
	used := usedBytes(t, orig)
	var ds []damage
	for _, at := range []int{used / 2, 2 * pageSize} {
		ds = append(ds, damage{fmt.Sprintf("truncate to %d", at), func(b []byte) []byte { return b[:at] }})
	}
	for p := 2; p*pageSize < used; p++ {
		ds = append(ds, damage{fmt.Sprintf("zero page %d", p), func(b []byte) []byte {
			clear(b[p*pageSize : (p+1)*pageSize])
			return b
		}})
	}
	met := 0
	defer func() { t.Logf("%d of %d damages met as ErrCorrupt (the others hit free pages)", met, len(ds)) }()
	for _, dm := range ds {
		t.Run(dm.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "c.db")
			if err := os.WriteFile(p, orig, 0o600); err != nil {
				t.Fatal(err)
			}
			d, err := Open(p, Options{Now: c.Now, noSync: true})
			if err != nil {
				t.Fatal(err)
			}
			// Written in place, as another program would: the memory map
			// sees it at once.
			b := dm.fn(bytes.Clone(orig))
			if err := os.Truncate(p, int64(len(b))); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.WriteAt(b, 0)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			var broken error
			use(t, d, p, want, func(op string, err error) {
				t.Helper()
				wantCorrupt(t, op, p, err)
				if broken == nil {
					broken = err
				}
			}, false)
			if broken != nil {
				met++
				if _, err := d.Stats(0); err == nil || err.Error() != broken.Error() {
					t.Errorf("after %v, Stats = %v; want the same error", broken, err)
				}
			} else if strings.HasPrefix(dm.name, "truncate") {
				t.Error("no error from a file cut short under it")
			}
			if err := d.Close(); err != nil {
				t.Logf("Close: %v", err)
			}
		})
	}
}

// usedBytes is the size of the pages in use of the bbolt file b.
func usedBytes(t *testing.T, b []byte) int {
	t.Helper()
	// The high-water mark is at byte 40 of a meta page's fields, after
	// the page header's 16 bytes.
	hwm := func(page []byte) uint64 { return binary.NativeEndian.Uint64(page[16+40:]) }
	return int(max(hwm(b), hwm(b[4096:]))) * 4096
}

// boltAgrees fails if Open's full check accepts the file at path and
// bbolt's Tx.Check finds it inconsistent. Once Open has checked the pages,
// Tx.Check cannot fault or loop on them.
func boltAgrees(t *testing.T, path string) {
	t.Helper()
	d, err := Open(path, Options{MustExist: true, noSync: true})
	if err != nil {
		return
	}
	defer d.Close()
	if err := d.b.Bolt.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	}); err != nil {
		t.Errorf("Open's check accepted a file that bbolt's Tx.Check refuses: %v", err)
	}
}

// runDamageChild runs the test named by run in a child process and fails
// unless the child passed: a fault in bbolt is a fatal error of the runtime
// (or a signal), which only a parent can observe.
func runDamageChild(t *testing.T, run string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	cmd := exec.Command(os.Args[0], "-test.run="+run, "-test.count=1")
	cmd.Env = append(os.Environ(), damageEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		return
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("the child was killed by %v:\n%s", ws.Signal(), excerpt(out))
		}
	}
	t.Fatalf("the child failed (%v):\n%s", err, excerpt(out))
}

// excerpt is the part of a child's output that explains its failure: around
// a runtime crash or panic if there is one, else the end.
func excerpt(b []byte) string {
	const n = 3000
	for _, mark := range []string{"\nfatal error: ", "\npanic: ", "\nunexpected fault address"} {
		if i := bytes.Index(b, []byte(mark)); i >= 0 {
			return string(b[max(0, i-n/2):min(len(b), i+n/2)])
		}
	}
	return string(b[max(0, len(b)-n):])
}

// TestRecreate: 'cache clear' on a damaged file replaces it with an empty
// cache that works; it leaves alone a file that is not a cache, and waits
// for the lock of a file in use.
func TestRecreate(t *testing.T) {
	c := newClock()
	dir := t.TempDir()
	path, _ := fixture(t, dir, c)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "foreign.db")
	fb, err := bolt.Open(foreign, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := fb.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("theirs")); return err }); err != nil {
		t.Fatal(err)
	}
	fb.Close()
	foreignBytes, err := os.ReadFile(foreign)
	if err != nil {
		t.Fatal(err)
	}
	zeroMetas := bytes.Clone(orig)
	clear(zeroMetas[:2*4096])
	tests := []struct {
		name    string
		content []byte // nil: no file
		want    error  // nil: recreated
	}{
		{"cut to half", orig[:len(orig)/2], nil},
		{"cut inside the first page", orig[:100], nil},
		{"both meta pages zeroed", zeroMetas, ErrNotCache}, // no magic left: not recognisably a cache
		{"intact", orig, nil},
		{"missing", nil, nil},
		{"a CSV file", bytes.Repeat([]byte("name,address\n"), 1000), ErrNotCache},
		{"another program's bbolt file", foreignBytes, ErrNotCache},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "c.db")
			if tt.content != nil {
				if err := os.WriteFile(p, tt.content, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			d, err := Recreate(p, Options{Now: c.Now})
			if tt.want != nil {
				if err == nil {
					d.Close()
					t.Fatal("recreated")
				}
				if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), p) {
					t.Fatalf("err = %v, want %v naming the path", err, tt.want)
				}
				if b, _ := os.ReadFile(p); !bytes.Equal(b, tt.content) {
					t.Fatal("the file was changed")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s := store(t, d, fixtureNS[0], time.Hour)
			mustPut(t, s, "k", answer("1"))
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			d = open(t, p, c)
			if st, err := d.Stats(0); err != nil || st.Entries != 1 {
				t.Fatalf("after Recreate: %+v, %v", st, err)
			}
		})
	}

	t.Run("locked", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "c.db")
		open(t, p, c) // holds the lock until the test ends
		if _, err := Recreate(p, Options{Timeout: 100 * time.Millisecond}); !errors.Is(err, ErrLocked) {
			t.Fatalf("err = %v, want ErrLocked", err)
		}
	})
}

// FuzzOpen opens a cache file of any bytes and uses it: every call gives
// an answer that was stored, a miss or an error; none crashes, hangs or
// panics. The seeds are a small cache (10 entries, 8 pages), cut short and
// with a byte flipped.
func FuzzOpen(f *testing.F) {
	c := newClock()
	dir := f.TempDir()
	path := filepath.Join(dir, "seed.db")
	d, err := Open(path, Options{Now: c.Now})
	if err != nil {
		f.Fatal(err)
	}
	s, err := d.Store(fixtureNS[0], time.Hour)
	if err != nil {
		f.Fatal(err)
	}
	for i := range 10 {
		if err := s.Put(context.Background(), strconv.Itoa(i), answer(strconv.Itoa(i))); err != nil {
			f.Fatal(err)
		}
	}
	if err := d.Close(); err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	flipped := bytes.Clone(seed)
	flipped[2*4096+20] ^= 0x10
	f.Add(flipped)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "c.db")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		d, err := Open(p, Options{Now: c.Now, MustExist: true, noSync: true})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open: %v, want ErrCorrupt", err)
			}
			return
		}
		defer d.Close()
		check := func(op string, err error) {
			if err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: %v, want nil or ErrCorrupt", op, err)
			}
		}
		_, err = d.Stats(time.Hour)
		check("Stats", err)
		s, err := d.Store(fixtureNS[0], time.Hour)
		check("Store", err)
		if err != nil {
			return
		}
		for i := range 10 {
			r, ok, err := s.Get(context.Background(), strconv.Itoa(i))
			check("Get", err)
			if ok && r.Address.ID != strconv.Itoa(i) {
				t.Fatalf("Get(%d) = answer %s", i, r.Address.ID)
			}
		}
		check("Put", s.Put(context.Background(), "new", answer("new")))
		_, err = d.Prune(time.Minute)
		check("Prune", err)
	})
}

// TestCheckAcceptsWhatBboltWrites: Open's check passes every state bbolt
// leaves a file in through this package's use of it: page splits, values
// over a page, entries and namespaces deleted (free pages, merged pages),
// pages reused; and bbolt's Tx.Check agrees at each step.
func TestCheckAcceptsWhatBboltWrites(t *testing.T) {
	c := newClock()
	path := filepath.Join(t.TempDir(), "c.db")
	opts := Options{Now: c.Now, noSync: true}
	reopen := func(step string) *DB {
		t.Helper()
		d, err := Open(path, opts)
		if err != nil {
			t.Fatalf("after %s: %v", step, err)
		}
		if err := d.b.Bolt.View(func(tx *bolt.Tx) error {
			for err := range tx.Check() {
				return err
			}
			return nil
		}); err != nil {
			t.Fatalf("after %s, bbolt's Tx.Check: %v", step, err)
		}
		return d
	}
	big := answer("big")
	big.Form.Message.Value = strings.Repeat("x", 9000) // three pages
	steps := []struct {
		name string
		do   func(d *DB) error
	}{
		{"5,000 entries in two namespaces", func(d *DB) error {
			for n, ns := range fixtureNS {
				s, err := d.Store(ns, time.Hour)
				if err != nil {
					return err
				}
				for i := range 2500 {
					r := answer(strconv.Itoa(i))
					if i%97 == 0 {
						r = big
					}
					if err := s.Put(context.Background(), fmt.Sprint(n, i), r); err != nil {
						return err
					}
				}
				c.add(time.Minute)
			}
			return nil
		}},
		{"pruning the first namespace", func(d *DB) error {
			_, err := d.Prune(90 * time.Second)
			return err
		}},
		{"clearing", func(d *DB) error { _, err := d.Clear(); return err }},
		{"filling again", func(d *DB) error {
			s, err := d.Store(fixtureNS[1], time.Hour)
			if err != nil {
				return err
			}
			for i := range 1500 {
				if err := s.Put(context.Background(), strconv.Itoa(i), big); err != nil {
					return err
				}
			}
			return nil
		}},
	}
	d := reopen("creating")
	for _, st := range steps {
		if err := st.do(d); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		d = reopen(st.name)
	}
	d.Close()
}
