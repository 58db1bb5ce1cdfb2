package cache

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/addrclean/addrclean/api"
)

// largeEnv names the file of BenchmarkOpenLarge, built on first use with
// largeNEnv entries (default 100,000) of a real answer of the embedded
// service (testdata/answer.json, 1.5 KB of JSON).
const (
	largeEnv  = "ADDRCLEAN_CACHE_LARGE"
	largeNEnv = "ADDRCLEAN_CACHE_LARGE_N"
)

// realAnswer is testdata/answer.json.
func realAnswer(t testing.TB) *api.VerifyResponse {
	t.Helper()
	b, err := os.ReadFile("testdata/answer.json")
	if err != nil {
		t.Fatal(err)
	}
	var r api.VerifyResponse
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// buildLarge writes n entries into a new cache at path.
func buildLarge(b *testing.B, path string, n int) {
	d, err := Open(path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	s, err := d.Store(LiveNamespace("https://api.example.com", "k"), DefaultTTL)
	if err != nil {
		b.Fatal(err)
	}
	r := realAnswer(b)
	now := time.Now().UnixMilli()
	for i := range n {
		r.Address.ID = "GB" + strconv.Itoa(i)
		body, err := json.Marshal(r)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.batch.Add(entry{ns: s.ns, key: entryKey("address " + strconv.Itoa(i)), at: now, answer: body}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenLarge is Open (with its quick_check of every page) and
// Close of a large cache:
//
//	ADDRCLEAN_CACHE_LARGE=/tmp/large.db go test -run '^$' -bench OpenLarge -benchtime 3x ./cache
func BenchmarkOpenLarge(b *testing.B) {
	path := os.Getenv(largeEnv)
	if path == "" {
		b.Skip("set " + largeEnv + " to a file path (built on first use)")
	}
	if _, err := os.Stat(path); err != nil {
		n := 100000
		if s := os.Getenv(largeNEnv); s != "" {
			n, _ = strconv.Atoi(s)
		}
		buildLarge(b, path, n)
	}
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	for b.Loop() {
		d, err := Open(path, Options{MustExist: true})
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// openLarge opens the large cache (the file named by largeEnv, built
// once when missing) and its namespace of 100,000 answers.
func openLarge(b *testing.B) *Store {
	path := os.Getenv(largeEnv)
	if path == "" {
		path = filepath.Join(b.TempDir(), "large.db")
	}
	if _, err := os.Stat(path); err != nil {
		buildLarge(b, path, 100000)
	}
	d, err := Open(path, Options{MustExist: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = d.Close() })
	return store(b, d, LiveNamespace("https://api.example.com", "k"), DefaultTTL)
}

// BenchmarkGetLarge is Get from a cache of 100,000 real answers, in a
// scattered order, as a warm re-run reads it (the file far larger than
// SQLite's page cache).
func BenchmarkGetLarge(b *testing.B) {
	s := openLarge(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, ok, err := s.Get(ctx, "address "+strconv.Itoa(i*7919%100000)); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkCountAnsweredLarge is an estimate's question to a cache of
// 100,000 real answers: how many of all of them (or of 1,024) it answers,
// with its rows read ahead or not. ns/op is per question.
func BenchmarkCountAnsweredLarge(b *testing.B) {
	s := openLarge(b)
	ctx := context.Background()
	for _, bc := range []struct {
		name  string
		n     int
		ahead bool
	}{{"all", 100000, false}, {"all, read ahead", 100000, true}, {"1024", 1024, false}} {
		b.Run(bc.name, func(b *testing.B) {
			set := map[uint64]bool{}
			for i := range bc.n {
				dg, _ := keyDigest(entryKey("address " + strconv.Itoa(i*7919%100000)))
				set[dg] = true
			}
			for b.Loop() {
				stop := func() {}
				if bc.ahead {
					stop = s.ScanAhead(ctx)
				}
				found, err := s.CountAnswered(ctx, len(set), func(dg uint64) bool { return set[dg] }, maps.Keys(set))
				stop()
				if err != nil || found != int64(len(set)) {
					b.Fatal(found, err)
				}
			}
		})
	}
}
