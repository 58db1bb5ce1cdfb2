package cache

import (
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/addrclean/addrclean/api"
)

// largeEnv names the file of BenchmarkOpenLarge, built on first use with
// largeNEnv entries (default 1,000,000) of a real answer of the embedded
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

// buildLarge writes n entries into a new cache at path, 20,000 a
// transaction.
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
	now := time.Now()
	for i := 0; i < n; {
		if err := d.b.Bolt.Update(func(tx *bolt.Tx) error {
			bk := tx.Bucket(s.bucket)
			for end := min(n, i+20000); i < end; i++ {
				r.Address.ID = "GB" + strconv.Itoa(i)
				body, err := json.Marshal(r)
				if err != nil {
					return err
				}
				k := entryKey("address " + strconv.Itoa(i))
				if err := bk.Put(k, encodeEntry(k, now, body)); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenLarge is Open and Close of a large cache with each check:
//
//	ADDRCLEAN_CACHE_LARGE=/tmp/large.db go test -run '^$' -bench OpenLarge -benchtime 3x ./cache
func BenchmarkOpenLarge(b *testing.B) {
	path := os.Getenv(largeEnv)
	if path == "" {
		b.Skip("set " + largeEnv + " to a file path")
	}
	if _, err := os.Stat(path); err != nil {
		n := 1_000_000
		if s := os.Getenv(largeNEnv); s != "" {
			n, _ = strconv.Atoi(s)
		}
		start := time.Now()
		buildLarge(b, path, n)
		fi, _ := os.Stat(path)
		b.Logf("built %s: %d entries, %d bytes, in %s", path, n, fi.Size(), time.Since(start).Round(time.Second))
	}
	for _, c := range []struct {
		name    string
		skip    bool
		txCheck bool // bbolt's Tx.Check after Open, for comparison
	}{{"meta and size", true, false}, {"full check", false, false}, {"meta and size, then bbolt Tx.Check", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				d, err := Open(path, Options{skipCheck: c.skip})
				if err != nil {
					b.Fatal(err)
				}
				if c.txCheck {
					if err := d.b.Bolt.View(func(tx *bolt.Tx) error {
						for err := range tx.Check() {
							return err
						}
						return nil
					}); err != nil {
						b.Fatal(err)
					}
				}
				if err := d.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
