package refimport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/gazetteer"
)

// endless is a source of head then fill repeated up to n bytes in all,
// generated as it is read, never held whole.
type endless struct {
	head, fill string
	n, read    int64
}

func (r *endless) Read(p []byte) (int, error) {
	if r.read >= r.n {
		return 0, io.EOF
	}
	i := 0
	for ; i < len(p) && r.read < r.n; i++ {
		if r.read < int64(len(r.head)) {
			p[i] = r.head[r.read]
		} else {
			p[i] = r.fill[(r.read-int64(len(r.head)))%int64(len(r.fill))]
		}
		r.read++
	}
	return i, nil
}

func randomWord(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + rng.IntN(26))
	}
	return string(b)
}

// TestLimits converts sources with the hostile shapes of issue 25: a
// record with a value over the reference's limits is left out and
// counted, and the rest is written and loads; a record over the row
// limit stops the conversion naming where it is, after reading a bounded
// part of it. Before, the long values were written (a 60 MB OpenAddresses
// street then took 12 minutes and 1.6 GB to load) and the long records
// read whole.
func TestLimits(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 6))
	const pafHead = "udprn,post_town,thoroughfare,building_number,postcode\n1,LEEDS,Main Street,1,LS1 4AB\n"
	const oaHead = "LON,LAT,NUMBER,STREET,CITY,POSTCODE,HASH\n-8.9,52.8,1,Main Street,Ennis,,h1\n"
	const oaJSON = `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"number":"1","street":"Main Street","city":"Ennis","hash":"h1"}},`
	pafC := func(ctx context.Context, r io.Reader, w io.Writer) (Stats, error) { return PAF(ctx, r, w) }
	oaC := func(ctx context.Context, r io.Reader, w io.Writer) (Stats, error) {
		return OpenAddresses(ctx, r, w, "IE")
	}
	for _, tc := range []struct {
		name    string
		in      io.Reader
		conv    func(context.Context, io.Reader, io.Writer) (Stats, error)
		skipped string // the reason the hostile record is left out
		err     string // or the error that stops the conversion
		line    int
	}{
		{"PAF CSV, 30,000-letter street", strings.NewReader(pafHead + "2,LEEDS," + randomWord(rng, 30000) + ",2,LS1 4AB\n"),
			pafC, "value over 1024 bytes", "", 0},
		{"PAF JSON, 60 KB word", strings.NewReader(`[{"udprn":1,"post_town":"LEEDS","thoroughfare":"Main Street"},{"udprn":2,"post_town":"LEEDS","thoroughfare":"` + randomWord(rng, 60000) + `"}]`),
			pafC, "value over 1024 bytes", "", 0},
		{"PAF CSV, word over 256 bytes", strings.NewReader(pafHead + "2,LEEDS," + randomWord(rng, 300) + " Road,2,LS1 4AB\n"),
			pafC, "word over 256 bytes", "", 0},
		{"OpenAddresses CSV, one repeated character", strings.NewReader(oaHead + "-8.9,52.8,2," + strings.Repeat("c", 60000) + ",Ennis,,h2\n"),
			oaC, "value over 1024 bytes", "", 0},
		{"OpenAddresses CSV, a line of 300 MB", &endless{head: oaHead + "-8.9,52.8,2,", fill: "street ", n: 300 << 20},
			oaC, "", "refimport: line 3: a record over 65536 bytes, the limit", 3},
		{"OpenAddresses GeoJSON, a feature of 300 MB", &endless{head: oaJSON + `{"type":"Feature","properties":{"street":"`, fill: "street ", n: 300 << 20},
			oaC, "", "refimport: JSON at byte 137: a record over 65536 bytes, the limit", 0},
		{"PAF CSV, a record over the limit in a column not read", strings.NewReader("udprn,post_town,thoroughfare,notes\n1,LEEDS,Main Street," + strings.Repeat("x", 70000) + "\n"),
			pafC, "", "refimport: line 2: a record over 65536 bytes, the limit", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			var st Stats
			var err error
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			before := ms.TotalAlloc
			st, err = tc.conv(context.Background(), tc.in, &out)
			runtime.ReadMemStats(&ms)
			if alloc := ms.TotalAlloc - before; alloc > 4<<20 {
				t.Errorf("the conversion allocated %d bytes", alloc)
			}
			if e, ok := tc.in.(*endless); ok && e.read > gazetteer.MaxRowBytes+2*inputBuffer {
				t.Errorf("read %d bytes of the long record", e.read)
			}
			if tc.err != "" {
				var se *SourceError
				if err == nil || err.Error() != tc.err || !errors.As(err, &se) || se.Line != tc.line {
					t.Fatalf("err = %.300v, want %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%.300v", err)
			}
			if st.Written != 1 || st.Skipped[tc.skipped] != 1 {
				t.Fatalf("stats %v, want 1 written and 1 skipped for %q", st, tc.skipped)
			}
			if _, err := gazetteer.Load(context.Background(), &out); err != nil {
				t.Fatalf("the output does not load: %.300v", err)
			}
		})
	}
}
