//go:build !race

package service

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// maxLocalAllocs bounds the allocations of one verify through NewLocal's
// transport, from the client's request to its read of the answer, with a
// matcher that allocates nothing. Served through Transport with the form
// read by ParseForm it took 66; 38 since (issue 22).
const maxLocalAllocs = 42

// TestLocalAllocs holds the embedded path's own allocations per request,
// which a run pays for every distinct address (the race detector, which
// allocates, leaves it out).
func TestLocalAllocs(t *testing.T) {
	hc, tok := localClient(t)
	body := query([]string{"1 Mian Street", "Dun Laoghaire"}, "country", "IE", "token", tok).Encode()
	var buf [8 << 10]byte
	n := testing.AllocsPerRun(200, func() {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, LocalBaseURL+"/3.0/verify", strings.NewReader(body))
		req.Header["Content-Type"] = []string{"application/x-www-form-urlencoded"}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadFull(resp.Body, buf[:])
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || err != io.ErrUnexpectedEOF {
			t.Fatalf("status %d, read %v", resp.StatusCode, err)
		}
	})
	t.Logf("%.0f allocations per verify", n)
	if n > maxLocalAllocs {
		t.Errorf("%.0f allocations per verify, want at most %d", n, maxLocalAllocs)
	}
}
