package api

import (
	"context"
	"net/http"
	"os"
	"testing"
)

// BenchmarkVerify measures one Verify against a local httptest server: the
// client's own cost (encoding, HTTP exchange, decoding the full sample
// answer) plus loopback HTTP.
func BenchmarkVerify(b *testing.B) {
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		b.Run(method, func(b *testing.B) {
			f := newFakeService(b)
			c := f.client(b, WithMethod(method))
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Verify(ctx, testAddress); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("parallel", func(b *testing.B) {
		f := newFakeService(b)
		c := f.client(b)
		ctx := context.Background()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := c.Verify(ctx, testAddress); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkDecodeVerifyResponse measures decoding the sample answer alone,
// as the journal, the cache and the spill files decode answers.
func BenchmarkDecodeVerifyResponse(b *testing.B) {
	in, err := os.ReadFile("testdata/verify_response.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeVerifyResponse(in); err != nil {
			b.Fatal(err)
		}
	}
}
