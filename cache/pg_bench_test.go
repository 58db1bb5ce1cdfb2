package cache

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
)

// BenchmarkPGLookup is the shared cache's cost per row against the test
// server (Unix socket, same machine): a hit (one read), and a miss that is
// paid (read, claim, read again, then Put with the claim's end).
func BenchmarkPGLookup(b *testing.B) {
	_, open := pgCache(b)
	s := open(b)
	ctx := context.Background()
	resp := answerID("A1")
	const keys = 1000
	for i := range keys {
		if err := s.Put(ctx, "hit "+strconv.Itoa(i), resp); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("hit", func(b *testing.B) {
		for i := range b.N {
			if _, ok, err := s.Get(ctx, "hit "+strconv.Itoa(i%keys)); !ok || err != nil {
				b.Fatal("miss", err)
			}
		}
	})
	var fresh atomic.Int64 // a new key every time, whatever reruns the benchmark
	b.Run("miss+put", func(b *testing.B) {
		for range b.N {
			k := "miss " + strconv.FormatInt(fresh.Add(1), 10)
			if _, ok, err := s.Get(ctx, k); ok || err != nil {
				b.Fatal("hit", err)
			}
			if err := s.Put(ctx, k, resp); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hit-parallel-8", func(b *testing.B) {
		b.SetParallelism(4) // 2 cores × 4: the run's 8 workers
		var n atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, ok, err := s.Get(ctx, "hit "+strconv.FormatInt(n.Add(1)%keys, 10)); !ok || err != nil {
					b.Fatal("miss", err)
				}
			}
		})
	})
}
