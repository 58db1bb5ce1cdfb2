package api_test

import (
	"context"
	"net/http"
	"os"
	"testing"

	"github.com/addrclean/addrclean/api"
)

// BenchmarkVerify measures one Verify against the real service on a local
// httptest server: the client's own cost (encoding, HTTP exchange, decoding
// an answer with every member) plus loopback HTTP plus the service's
// (matching against the sample reference, encoding the answer).
func BenchmarkVerify(b *testing.B) {
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		b.Run(method, func(b *testing.B) {
			c, _ := serve(b, newService(b, 0), api.WithMethod(method))
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Verify(ctx, matchedAddress); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("parallel", func(b *testing.B) {
		c, _ := serve(b, newService(b, 0))
		ctx := context.Background()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := c.Verify(ctx, matchedAddress); err != nil {
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
		if _, err := api.DecodeVerifyResponse(in); err != nil {
			b.Fatal(err)
		}
	}
}
