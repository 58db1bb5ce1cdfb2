package cache

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/internal/pgtest"
	"github.com/addrclean/addrclean/internal/sqlitefile/filetest"
)

const secretKey = "pub_cache-test-key-must-never-be-stored"

func answer(id string) *api.VerifyResponse {
	return &api.VerifyResponse{Type: "verify", Action: api.ActionAccept,
		Address: api.MatchedAddress{ID: id, Label: []string{"1 Main Street " + id, "Cork"}}}
}

// open opens the cache at path for the test. Tests that move the clock run
// in a synctest bubble, where time.Sleep moves it at once; the cache must
// then be opened (and is closed) inside the bubble.
func open(t testing.TB, path string) *DB {
	t.Helper()
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func store(t testing.TB, d *DB, ns Namespace, ttl time.Duration) *Store {
	t.Helper()
	s, err := d.Store(ns, ttl)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustGet(t *testing.T, s *Store, key string) (*api.VerifyResponse, bool) {
	t.Helper()
	r, ok, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return r, ok
}

func mustPut(t testing.TB, s *Store, key string, r *api.VerifyResponse) {
	t.Helper()
	if err := s.Put(context.Background(), key, r); err != nil {
		t.Fatal(err)
	}
}

func TestGetPutExpiry(t *testing.T) { synctest.Test(t, testGetPutExpiry) }

func testGetPutExpiry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	d := open(t, path)
	live := LiveNamespace("https://api.example.com/", api.Secret(secretKey))
	s := store(t, d, live, time.Hour)

	if _, ok := mustGet(t, s, "1 main st\x00"); ok {
		t.Fatal("hit in an empty cache")
	}
	mustPut(t, s, "1 main st\x00", answer("A1"))
	r, ok := mustGet(t, s, "1 main st\x00")
	if !ok || r.Address.ID != "A1" || r.Address.Label[0] != "1 Main Street A1" {
		t.Fatalf("Get = %+v, %v", r, ok)
	}
	// GetAt says when it was stored, from the queue and from the file.
	for range 2 {
		if _, at, ok, err := s.GetAt(context.Background(), "1 main st\x00"); !ok || err != nil || !at.Equal(time.Now()) {
			t.Fatalf("GetAt = %v, %v, %v; want stored at %v", at, ok, err, time.Now())
		}
		if err := d.batch.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	// Exactly the TTL old is still a hit; older is a miss, and a new Put
	// replaces the entry.
	time.Sleep(time.Hour) // in the bubble: the clock moves, nothing waits
	if _, ok := mustGet(t, s, "1 main st\x00"); !ok {
		t.Fatal("miss at exactly the TTL")
	}
	time.Sleep(time.Millisecond) // answers are stamped to the millisecond
	if _, ok := mustGet(t, s, "1 main st\x00"); ok {
		t.Fatal("hit after the TTL")
	}
	mustPut(t, s, "1 main st\x00", answer("A2"))
	if r, ok := mustGet(t, s, "1 main st\x00"); !ok || r.Address.ID != "A2" {
		t.Fatalf("after a re-Put: %+v, %v", r, ok)
	}

	// Another key, base URL or reference is another namespace.
	for _, ns := range []Namespace{
		LiveNamespace("https://api.example.com", "pub_other"),
		LiveNamespace("https://api2.example.com", api.Secret(secretKey)),
		mustEmbedded(t, "ref.csv", "v1", "id,street\n1,Main\n"),
	} {
		if ns.ID == live.ID {
			t.Fatalf("namespace %s equals the live one", ns.Label)
		}
		if _, ok := mustGet(t, store(t, d, ns, time.Hour), "1 main st\x00"); ok {
			t.Errorf("namespace %s sees another's entries", ns.Label)
		}
	}
	// A trailing slash does not make a new namespace; the same reference
	// bytes under another name do not either.
	if LiveNamespace("https://api.example.com", api.Secret(secretKey)).ID != live.ID {
		t.Error("a trailing slash changes the namespace")
	}
	a, b := mustEmbedded(t, "a.csv", "v1", "x"), mustEmbedded(t, "b.csv", "v1", "x")
	if a.ID != b.ID || a.ID == mustEmbedded(t, "a.csv", "v2", "x").ID || a.ID == mustEmbedded(t, "a.csv", "v1", "y").ID {
		t.Error("the embedded namespace does not follow the reference bytes and the build")
	}

	// Entries survive closing and reopening.
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d2 := open(t, path)
	if r, ok := mustGet(t, store(t, d2, live, time.Hour), "1 main st\x00"); !ok || r.Address.ID != "A2" {
		t.Fatalf("after reopening: %+v, %v", r, ok)
	}
}

func mustEmbedded(t *testing.T, name, build, ref string) Namespace {
	t.Helper()
	ns, err := EmbeddedNamespace(name, build, strings.NewReader(ref))
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// TestNoSecretsInFile: neither the API key nor the address keys are in the
// file's bytes.
func TestNoSecretsInFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	d := open(t, path)
	s := store(t, d, LiveNamespace("https://user:pw@api.example.com", api.Secret(secretKey)), time.Hour)
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() { mustPut(t, s, fmt.Sprintf("address-key-%d\x00dublin", i), answer(strconv.Itoa(i))) })
	}
	wg.Wait()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{secretKey, "address-key-", "pw@"} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the cache file contains %q", secret)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	d := open(t, good)
	mustPut(t, store(t, d, LiveNamespace("https://x", "k"), time.Hour), "k", answer("1"))

	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, bytes.Repeat([]byte("name,address\n"), 2000), 0o600); err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(dir, "small.db")
	if err := os.WriteFile(small, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "foreign.db")
	filetest.Exec(t, foreign, "CREATE TABLE theirs (a text)")
	journal := filepath.Join(dir, "journal.db")
	filetest.Exec(t, journal, "CREATE TABLE addrclean_meta (name text PRIMARY KEY, value text NOT NULL)",
		"INSERT INTO addrclean_meta VALUES ('format', 'addrclean-journal/3')")
	old := filepath.Join(dir, "bbolt.db")
	if err := os.WriteFile(old, filetest.Bbolt(), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, path string
		opts       Options
		want       error
		text       string
	}{
		{"locked", good, Options{Timeout: 50 * time.Millisecond}, ErrLocked, "is locked by another addrclean process"},
		{"not SQLite", garbage, Options{}, ErrNotCache, "not a readable addrclean cache"},
		{"too small", small, Options{}, ErrNotCache, "not a readable addrclean cache"},
		{"another program's SQLite", foreign, Options{}, ErrNotCache, "another program"},
		{"a journal", journal, Options{}, ErrNotCache, "another kind"},
		{"another program's SQLite, Rebuild", foreign, Options{Rebuild: true}, ErrNotCache, "another program"},
		{"a bbolt cache of an older addrclean", old, Options{}, ErrCorrupt, "a bbolt file of an older addrclean"},
		{"missing", filepath.Join(dir, "none.db"), Options{MustExist: true}, ErrNotExist, "does not exist"},
		{"directory", dir, Options{}, nil, "is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Open(tt.path, tt.opts)
			if err == nil {
				d.Close()
				t.Fatal("opened")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), tt.text) {
				t.Errorf("err = %q, want the path and %q", err, tt.text)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "none.db")); err == nil {
		t.Error("MustExist created the file")
	}
}

// TestDamagedEntryIsAMiss: an entry whose bytes changed is a miss, counted
// in Damaged, never an answer: not with a town name changed in place, not
// when a damaged page hands one address's answer to another key. A Put
// replaces it.
func TestDamagedEntryIsAMiss(t *testing.T) {
	k1, k2 := entryKey("1 main street"), entryKey("2 main street")
	tests := []struct {
		name   string
		damage string // SQL run on the closed file; ? is the damaged entry's key
	}{
		{"a town name changed", "UPDATE cache_answers SET answer = replace(answer, 'Cork', 'York') WHERE key = ?"},
		{"the time changed", "UPDATE cache_answers SET obtained_ms = obtained_ms + 1 WHERE key = ?"},
		{"the checksum changed", "UPDATE cache_answers SET crc = (crc | 128) - (crc & 128) WHERE key = ?"},
		{"the checksum out of range", "UPDATE cache_answers SET crc = crc + 4294967296 WHERE key = ?"},
		{"cut short", "UPDATE cache_answers SET answer = substr(answer, 1, length(answer) - 1) WHERE key = ?"},
		{"empty", "UPDATE cache_answers SET answer = '' WHERE key = ?"},
		{"another key's answer", "UPDATE cache_answers SET (answer, crc) = (SELECT answer, crc FROM cache_answers WHERE key = '" + k2 + "') WHERE key = ?"},
		{"another namespace's", "DELETE FROM cache_answers WHERE namespace = 'NS' AND key = ?; UPDATE cache_answers SET namespace = 'NS' WHERE key = ?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.db")
			ns := LiveNamespace("https://x", "k")
			d := open(t, path)
			s := store(t, d, ns, time.Hour)
			mustPut(t, s, "1 main street", answer("A"))
			mustPut(t, s, "2 main street", answer("B"))
			// The same address under another key: its answer, moved, is not ns's.
			mustPut(t, store(t, d, LiveNamespace("https://x", "k2"), time.Hour), "1 main street", answer("Z"))
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			sql := strings.ReplaceAll(strings.ReplaceAll(tt.damage, "?", "'"+k1+"'"), "NS", ns.ID)
			filetest.Exec(t, path, strings.Split(sql, "; ")...)
			d = open(t, path)
			s = store(t, d, ns, time.Hour)
			if r, ok := mustGet(t, s, "1 main street"); ok {
				t.Fatalf("Get of a damaged entry = %+v, want a miss", r)
			}
			if s.Damaged() != 1 {
				t.Errorf("Damaged = %d, want 1", s.Damaged())
			}
			if r, ok := mustGet(t, s, "2 main street"); !ok || r.Address.ID != "B" {
				t.Fatalf("the other entry: %+v, %v", r, ok)
			}
			st, err := d.Stats(context.Background(), 0)
			if err != nil || st.Damaged < 1 {
				t.Errorf("Stats = %+v, %v", st, err)
			}
			if p, err := d.Prune(context.Background(), time.Hour); err != nil || p.Unusable != st.Damaged {
				t.Errorf("Prune = %+v, %v; want the damaged entries removed", p, err)
			}
			mustPut(t, s, "1 main street", answer("A2"))
			if r, ok := mustGet(t, s, "1 main street"); !ok || r.Address.ID != "A2" {
				t.Fatalf("after a new Put: %+v, %v", r, ok)
			}
		})
	}
}

func TestStatsPruneClear(t *testing.T) { synctest.Test(t, testStatsPruneClear) }

// testStatsPruneClear runs in a bubble (no t.Run there): the cases run in
// turn, each Prune on what the one before left.
func testStatsPruneClear(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "c.db"))
	live := store(t, d, LiveNamespace("https://api.example.com", "k"), 24*time.Hour)
	emb := store(t, d, mustEmbedded(t, "ref.csv", "v1", "ref"), 24*time.Hour)
	start := time.Now()
	for i := range 30 { // 30 entries, one an hour
		mustPut(t, live, "live"+strconv.Itoa(i), answer("L"))
		if i%3 == 0 {
			mustPut(t, emb, "emb"+strconv.Itoa(i), answer("E"))
		}
		time.Sleep(time.Hour)
	}
	// Now is start+30h: entries stored before start+6h are over 24h old.
	tests := []struct {
		name      string
		ttl       time.Duration
		wantLive  [2]int64 // entries, expired
		wantEmb   [2]int64
		pruneLeft int64 // left after Prune(ttl)
	}{
		{"ttl 24h", 24 * time.Hour, [2]int64{30, 6}, [2]int64{10, 2}, 32},
		{"ttl 1h", time.Hour, [2]int64{24, 23}, [2]int64{8, 8}, 1},
		{"ttl 0 counts none expired", 0, [2]int64{1, 0}, [2]int64{0, 0}, -1},
	}
	for _, tt := range tests {
		func() {
			st, err := d.Stats(context.Background(), tt.ttl)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if len(st.Namespaces) != 2 || st.Size == 0 {
				t.Fatalf("%s: stats %+v", tt.name, st)
			}
			for _, ns := range st.Namespaces {
				want := tt.wantLive
				if strings.HasPrefix(ns.Label, "embedded") {
					want = tt.wantEmb
				}
				if ns.Entries != want[0] || ns.Expired != want[1] {
					t.Errorf("%s: %s: entries %d expired %d, want %v", tt.name, ns.Label, ns.Entries, ns.Expired, want)
				}
				if ns.Entries > 0 && (ns.Oldest.Before(start) || ns.Newest.After(time.Now()) || ns.Newest.Before(ns.Oldest)) {
					t.Errorf("%s: %s: oldest %v newest %v", tt.name, ns.Label, ns.Oldest, ns.Newest)
				}
			}
			if tt.pruneLeft < 0 {
				return
			}
			n, err := d.Prune(context.Background(), tt.ttl)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if n != (Pruned{Expired: tt.wantLive[1] + tt.wantEmb[1]}) {
				t.Errorf("%s: pruned %+v, want %d expired", tt.name, n, tt.wantLive[1]+tt.wantEmb[1])
			}
			if st, _ := d.Stats(context.Background(), 0); st.Entries != tt.pruneLeft {
				t.Errorf("%s: %d entries left after prune, want %d", tt.name, st.Entries, tt.pruneLeft)
			}
		}()
	}
	n, err := d.Clear(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("Clear = %d, %v; want 1", n, err)
	}
	if st, err := d.Stats(context.Background(), 0); err != nil || st.Entries != 0 || len(st.Namespaces) != 0 {
		t.Fatalf("after Clear: %+v, %v", st, err)
	}
	if _, err := d.Prune(context.Background(), 0); err == nil {
		t.Error("Prune(0) accepted")
	}
}

// TestPruneChunks: pruning more than one chunk removes exactly the expired
// entries, whichever chunk they fall in.
func TestPruneChunks(t *testing.T) {
	defer func(n int) { pruneChunk = n }(pruneChunk)
	pruneChunk = 100
	d := open(t, filepath.Join(t.TempDir(), "c.db"))
	s := store(t, d, LiveNamespace("https://x", "k"), time.Hour)
	n := 2*pruneChunk + 50
	for i := range n {
		at := time.Now()
		if i%2 == 0 {
			at = at.Add(-2 * time.Hour)
		}
		if err := d.batch.Add(entry{ns: s.ns, key: entryKey(strconv.Itoa(i)), at: at.UnixMilli(), answer: []byte("{}")}); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := d.Prune(context.Background(), time.Hour)
	if err != nil || removed != (Pruned{Expired: int64(n / 2)}) {
		t.Fatalf("Prune = %+v, %v; want %d expired", removed, err, n/2)
	}
	if st, _ := d.Stats(context.Background(), time.Hour); st.Entries != int64(n/2) || st.Namespaces[0].Expired != 0 {
		t.Fatalf("after prune: %d entries, %d expired", st.Entries, st.Namespaces[0].Expired)
	}
}

// TestAdminCancelled: stats, prune and clear stop at a cancelled ctx with
// its error (Ctrl-C on 'addrclean cache'), and clear then removes nothing.
func TestAdminCancelled(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "c.db"))
	s := store(t, d, LiveNamespace("https://x", "k"), time.Hour)
	mustPut(t, s, "k1", answer("A1"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Stats(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Stats: %v, want context.Canceled", err)
	}
	if _, err := d.Prune(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Prune: %v, want context.Canceled", err)
	}
	if n, err := d.Clear(ctx); !errors.Is(err, context.Canceled) || n != 0 {
		t.Errorf("Clear: %d, %v, want context.Canceled", n, err)
	}
	if _, ok := mustGet(t, s, "k1"); !ok {
		t.Error("a cancelled Clear removed the entry")
	}
}

// TestConcurrentPuts: Puts from many goroutines share batches and all land.
func TestConcurrentPuts(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "c.db"))
	s := store(t, d, LiveNamespace("https://x", "k"), time.Hour)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 20 {
				mustPut(t, s, fmt.Sprintf("%d-%d", w, i), answer("x"))
			}
		})
	}
	wg.Wait()
	for w := range 8 {
		for i := range 20 {
			if _, ok := mustGet(t, s, fmt.Sprintf("%d-%d", w, i)); !ok {
				t.Fatalf("entry %d-%d missing", w, i)
			}
		}
	}
}

// killEnv makes the test binary a writer that TestSurvivesKill kills.
const killEnv = "ADDRCLEAN_CACHE_KILL_WRITER"

// TestMain runs the writer child when asked to.
func TestMain(m *testing.M) {
	if path := os.Getenv(killEnv); path != "" {
		killWriter(path)
		return
	}
	os.Exit(pgtest.Main(m))
}

// killWriter puts entries from four goroutines until it is killed, and
// prints n on stdout after every entry up to n is committed.
func killWriter(path string) {
	d, err := Open(path, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s, err := d.Store(LiveNamespace("https://x", "k"), time.Hour)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var next atomic.Int64
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	for w := range 4 {
		go func() {
			for {
				mu.Lock()
				n := next.Add(1)
				err := s.Put(context.Background(), strconv.FormatInt(n, 10), answer(strconv.FormatInt(n, 10)))
				mu.Unlock()
				if err == nil && w == 0 && n%50 == 0 {
					err = d.batch.Flush()
					fmt.Fprintln(out, n)
					out.Flush()
				}
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
			}
		}()
	}
	select {}
}

// TestSurvivesKill: entries committed before a SIGKILL are there after it,
// and the file opens cleanly (its check passes).
func TestSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	path := filepath.Join(t.TempDir(), "c.db")
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), killEnv+"="+path)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill it after a different number of commits each round.
		target, commits := 2+3*round, 0
		var committed int64
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			committed, _ = strconv.ParseInt(sc.Text(), 10, 64)
			if commits++; commits == target {
				_ = cmd.Process.Kill()
				break
			}
		}
		_ = cmd.Wait()
		if commits < target {
			t.Fatalf("writer stopped after %d commits: %s", commits, stderr.String())
		}
		d, err := Open(path, Options{MustExist: true})
		if err != nil {
			t.Fatalf("round %d: reopening after the kill: %v", round, err)
		}
		s := store(t, d, LiveNamespace("https://x", "k"), time.Hour)
		for n := range committed {
			r, ok, err := s.Get(context.Background(), strconv.FormatInt(n+1, 10))
			if err != nil || !ok || r.Address.ID != strconv.FormatInt(n+1, 10) {
				t.Fatalf("round %d: entry %d committed before the kill: %v, %v, %v", round, n+1, r, ok, err)
			}
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func BenchmarkGetHit(b *testing.B) {
	d := open(b, filepath.Join(b.TempDir(), "c.db"))
	s := store(b, d, LiveNamespace("https://x", "k"), time.Hour)
	const n = 1000
	for i := range n {
		mustPut(b, s, strconv.Itoa(i), answer(strconv.Itoa(i)))
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, ok, err := s.Get(ctx, strconv.Itoa(i%n)); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkGetHitReal is GetHit with a real answer of the embedded
// service (1.5 KB of JSON).
func BenchmarkGetHitReal(b *testing.B) {
	d := open(b, filepath.Join(b.TempDir(), "c.db"))
	s := store(b, d, LiveNamespace("https://x", "k"), time.Hour)
	const n = 1000
	r := realAnswer(b)
	for i := range n {
		mustPut(b, s, strconv.Itoa(i), r)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, ok, err := s.Get(ctx, strconv.Itoa(i%n)); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

func BenchmarkGetMiss(b *testing.B) {
	d := open(b, filepath.Join(b.TempDir(), "c.db"))
	s := store(b, d, LiveNamespace("https://x", "k"), time.Hour)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, ok, err := s.Get(ctx, strconv.Itoa(i)); ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkPut is one goroutine: Puts are queued, a commit per batch.
func BenchmarkPut(b *testing.B) {
	d := open(b, filepath.Join(b.TempDir(), "c.db"))
	s := store(b, d, LiveNamespace("https://x", "k"), time.Hour)
	r := answer("x")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		mustPut(b, s, strconv.Itoa(i), r)
	}
}

// BenchmarkPut8Workers is Puts from 8 goroutines, as from the default 8
// workers of a run.
func BenchmarkPut8Workers(b *testing.B) {
	d := open(b, filepath.Join(b.TempDir(), "c.db"))
	s := store(b, d, LiveNamespace("https://x", "k"), time.Hour)
	r := answer("x")
	var n atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	for range 8 {
		wg.Go(func() {
			for i := n.Add(1); i <= int64(b.N); i = n.Add(1) {
				mustPut(b, s, strconv.FormatInt(i, 10), r)
			}
		})
	}
	wg.Wait()
}

// BenchmarkPutParallel is Puts from GOMAXPROCS×8 goroutines.
func BenchmarkPutParallel(b *testing.B) {
	d := open(b, filepath.Join(b.TempDir(), "c.db"))
	s := store(b, d, LiveNamespace("https://x", "k"), time.Hour)
	r := answer("x")
	var n atomic.Int64
	b.SetParallelism(8)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			mustPut(b, s, strconv.FormatInt(n.Add(1), 10), r)
		}
	})
}
