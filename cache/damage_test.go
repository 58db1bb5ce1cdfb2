package cache

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/internal/sqlitefile/filetest"
)

var fixtureNS = []Namespace{
	LiveNamespace("https://api.example.com", "k"),
	{ID: "embedded-fixture", Label: "embedded fixture"},
}

// fixture writes a cache of two namespaces (160 answers, some over a page)
// and returns its path and every answer's JSON by namespace and key.
func fixture(t testing.TB, dir string) (path string, want map[string]map[string]string) {
	t.Helper()
	path = filepath.Join(dir, "fixture.db")
	d, err := Open(path, Options{})
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

// use reads every answer of want from d and stores a new one: every Get is
// an answer stored under its key or a miss, never another answer, and no
// call fails but with ErrCorrupt naming the file. whole says the file is
// intact: then every Get is a hit.
func use(t *testing.T, d *DB, path string, want map[string]map[string]string, whole bool) {
	t.Helper()
	ctx := context.Background()
	fail := func(op string, err error) {
		t.Helper()
		if err != nil && (whole || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path)) {
			t.Errorf("%s: %v (want nil, or ErrCorrupt naming %s)", op, err, path)
		}
	}
	_, err := d.Stats(context.Background(), time.Hour)
	fail("Stats", err)
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
				t.Errorf("Get: %v (a broken cache is a miss)", err)
			case ok:
				if b, _ := json.Marshal(r); string(b) != w {
					t.Errorf("Get(%q) = %s, want %s (a damaged entry read as an answer)", key, b, w)
				}
			case whole:
				t.Errorf("Get(%q): a miss in an intact file", key)
			}
		}
		if err := s.Put(ctx, "a new address", answer("new")); err != nil {
			t.Errorf("Put: %v (a broken cache takes nothing, without an error)", err)
		}
	}
	_, err = d.Prune(context.Background(), time.Hour)
	fail("Prune", err)
}

// damages are the ways a file is damaged before or under a run: cut short
// inside SQLite's 16-byte magic, at page boundaries and inside pages,
// pages zeroed, bytes flipped.
func damages(orig []byte, seeds int) map[string][]byte {
	out := map[string][]byte{}
	pages := len(orig) / 4096
	for _, cut := range []int{0, 5, 15, 50, 100, 4096, 4096 + 1000, len(orig) / 2, len(orig) - 4096, len(orig) - 1} {
		out[fmt.Sprintf("cut to %d bytes", cut)] = orig[:cut]
	}
	for p := 1; p <= pages; p++ {
		out[fmt.Sprintf("page %d zeroed", p)] = filetest.ZeroPages(orig, p)
	}
	for seed := range seeds {
		b := bytes.Clone(orig)
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		for range 1 + seed%8 {
			b[r.IntN(len(b))] ^= byte(1 + r.IntN(255))
		}
		out[fmt.Sprintf("bytes flipped, seed %d", seed)] = b
	}
	return out
}

// TestDamagedFile: a cache damaged before a run (cut short, pages zeroed,
// bytes flipped) never crashes the process or changes an answer. Opened
// for housekeeping (MustExist), it is ErrCorrupt naming the file and
// saying what to do, or it opens and its answers are exact or misses.
// Opened by a run (Rebuild), it is moved aside, with a warning naming
// both files, and a new cache is used, never refused.
func TestDamagedFile(t *testing.T) {
	path, want := fixture(t, t.TempDir())
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(orig) < 8*4096 {
		t.Fatalf("fixture of %d bytes: too small to damage page by page", len(orig))
	}
	refused := 0
	for name, content := range damages(orig, 40) {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "c.db")
			if err := os.WriteFile(p, content, 0o600); err != nil {
				t.Fatal(err)
			}
			d, err := Open(p, Options{MustExist: true})
			if err != nil && len(content) == 0 {
				// No bytes: no tables, as a file made by touch; a look
				// leaves it as it is (TestOpenMustExistEmptyFile).
				if !errors.Is(err, ErrNotExist) {
					t.Fatalf("Open of an empty file: %v, want ErrNotExist", err)
				}
			} else if err != nil {
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "addrclean cache clear --cache") {
					t.Fatalf("Open: %v, want ErrCorrupt naming the file and what to do", err)
				}
				refused++
			} else {
				use(t, d, p, want, false)
				if err := d.Close(); err != nil && !errors.Is(err, ErrCorrupt) {
					t.Errorf("Close: %v", err)
				}
			}

			// A run moves it aside (if Open refused it) and goes on.
			if err := os.WriteFile(p, content, 0o600); err != nil {
				t.Fatal(err)
			}
			var log bytes.Buffer
			d, err = Open(p, Options{Rebuild: true, Logger: zerolog.New(&log)})
			if err != nil {
				t.Fatalf("Open with Rebuild: %v", err)
			}
			use(t, d, p, want, false)
			if err := d.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if moved, _ := filepath.Glob(p + ".damaged-*"); len(moved) > 0 {
				if b, _ := os.ReadFile(moved[0]); !bytes.Equal(b, content) || !strings.Contains(log.String(), moved[0]) {
					t.Errorf("moved aside to %s, changed or not named in %s", moved[0], log.String())
				}
			}
		})
	}
	if refused == 0 {
		t.Error("no damage was refused: the check is not looking")
	}
}

// TestDamagedWhileOpen: a cache cut short, zeroed, deleted or replaced
// while a run uses it never crashes, never waits, never gives another
// answer: reads or writes that fail make the cache a miss from then on,
// said once, and Close returns.
func TestDamagedWhileOpen(t *testing.T) {
	path, want := fixture(t, t.TempDir())
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]func(p string) error{
		"cut to zero":  func(p string) error { return os.Truncate(p, 0) },
		"cut to half":  func(p string) error { return os.Truncate(p, int64(len(orig)/2)) },
		"cut to 5,000": func(p string) error { return os.Truncate(p, 5000) },
		"pages zeroed": func(p string) error { return os.WriteFile(p, make([]byte, len(orig)), 0o600) },
		"deleted":      os.Remove,
		"replaced":     func(p string) error { return os.WriteFile(p+".new", []byte("other"), 0o600) },
		"overwritten with text": func(p string) error {
			return os.WriteFile(p, bytes.Repeat([]byte("name,address\n"), len(orig)/13), 0o600)
		},
	}
	for name, damage := range tests {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "c.db")
			if err := os.WriteFile(p, orig, 0o600); err != nil {
				t.Fatal(err)
			}
			var log bytes.Buffer
			d, err := Open(p, Options{Logger: zerolog.New(&log)})
			if err != nil {
				t.Fatal(err)
			}
			if err := damage(p); err != nil {
				t.Fatal(err)
			}
			if name == "replaced" {
				if err := os.Rename(p+".new", p); err != nil {
					t.Fatal(err)
				}
			}
			for range 2 {
				for _, ns := range fixtureNS {
					s := &Store{d: d, ns: ns.ID, ttl: time.Hour}
					for key, w := range want[ns.ID] {
						r, ok, err := s.Get(context.Background(), key)
						if err != nil {
							t.Fatalf("Get: %v", err)
						}
						if b, _ := json.Marshal(r); ok && string(b) != w {
							t.Fatalf("Get(%q) = %s, want %s", key, b, w)
						}
						if err := s.Put(context.Background(), key+"x", answer("x")); err != nil {
							t.Fatalf("Put: %v", err)
						}
					}
				}
			}
			if err := d.Close(); err != nil && !errors.Is(err, ErrCorrupt) {
				t.Errorf("Close: %v", err)
			}
			if strings.HasPrefix(name, "cut") && (d.Failed() == nil || !errors.Is(d.Failed(), ErrCorrupt)) {
				// The fixture is larger than what the writes keep in
				// memory: a cut file is met, and must be said.
				t.Errorf("a cut cache did not fail: %v", d.Failed())
			}
			if d.Failed() != nil && strings.Count(log.String(), "failed during the run") != 1 {
				t.Errorf("the failure was not said exactly once:\n%s", log.String())
			}
		})
	}
}

// TestOldBbolt: a bbolt cache of an older addrclean is refused by the
// housekeeping commands with a message that says what it is, and moved
// aside by a run, which starts a new cache and says where the old one went.
func TestOldBbolt(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.db")
	old := filetest.Bbolt()
	if err := os.WriteFile(p, old, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(p, Options{MustExist: true}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "bbolt") {
		t.Fatalf("Open: %v", err)
	}
	var log bytes.Buffer
	d, err := Open(p, Options{Rebuild: true, Logger: zerolog.New(&log)})
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, store(t, d, fixtureNS[0], time.Hour), "k", answer("1"))
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	moved, _ := filepath.Glob(p + ".bbolt-*")
	if len(moved) != 1 || !strings.Contains(log.String(), moved[0]) || !strings.Contains(log.String(), "older addrclean (bbolt)") {
		t.Fatalf("moved %v, log %s", moved, log.String())
	}
	if b, _ := os.ReadFile(moved[0]); !bytes.Equal(b, old) {
		t.Error("the bbolt file was changed")
	}
}

// TestRecreate: 'cache clear' on a damaged file replaces it with an empty
// cache that works; it leaves alone a file that is not a cache, and waits
// for the lock of a file in use.
func TestRecreate(t *testing.T) {
	dir := t.TempDir()
	path, _ := fixture(t, dir)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "foreign.db")
	filetest.Exec(t, foreign, "CREATE TABLE theirs (a text)")
	foreignBytes, err := os.ReadFile(foreign)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		content []byte // nil: no file
		want    error  // nil: recreated
	}{
		{"cut to half", orig[:len(orig)/2], nil},
		{"cut inside the first page", orig[:100], nil},
		{"first page zeroed", filetest.ZeroPages(orig, 1), nil},
		{"a bbolt cache", filetest.Bbolt(), nil},
		{"intact", orig, nil},
		{"missing", nil, nil},
		{"a CSV file", bytes.Repeat([]byte("name,address\n"), 1000), ErrNotCache},
		{"another program's SQLite file", foreignBytes, ErrNotCache},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "c.db")
			if tt.content != nil {
				if err := os.WriteFile(p, tt.content, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			d, err := Recreate(p, Options{})
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
			d = open(t, p)
			if st, err := d.Stats(context.Background(), 0); err != nil || st.Entries != 1 {
				t.Fatalf("after Recreate: %+v, %v", st, err)
			}
		})
	}

	t.Run("locked", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "c.db")
		open(t, p) // holds the lock until the test ends
		if _, err := Recreate(p, Options{Timeout: 100 * time.Millisecond}); !errors.Is(err, ErrLocked) {
			t.Fatalf("err = %v, want ErrLocked", err)
		}
	})
}

// FuzzOpen opens a cache file of any bytes and uses it: every call gives
// an answer that was stored, a miss or an error; none crashes, hangs or
// panics. The seeds are a small cache, cut short and with a byte flipped.
func FuzzOpen(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed.db")
	d, err := Open(path, Options{})
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
	flipped[len(seed)-200] ^= 0x10
	f.Add(flipped)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "c.db")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		d, err := Open(p, Options{MustExist: true})
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
		_, err = d.Stats(context.Background(), time.Hour)
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
		_, err = d.Prune(context.Background(), time.Minute)
		check("Prune", err)
	})
}
