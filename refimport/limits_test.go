package refimport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/internal/hostile"
)

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
		{"PAF CSV, 30,000-letter street", strings.NewReader(pafHead + "2,LEEDS," + hostile.Word(rng, 30000) + ",2,LS1 4AB\n"),
			pafC, "value over 1024 bytes", "", 0},
		{"PAF JSON, 60 KB word", strings.NewReader(`[{"udprn":1,"post_town":"LEEDS","thoroughfare":"Main Street"},{"udprn":2,"post_town":"LEEDS","thoroughfare":"` + hostile.Word(rng, 60000) + `"}]`),
			pafC, "value over 1024 bytes", "", 0},
		{"PAF CSV, word over 256 bytes", strings.NewReader(pafHead + "2,LEEDS," + hostile.Word(rng, 300) + " Road,2,LS1 4AB\n"),
			pafC, "word over 256 bytes", "", 0},
		{"OpenAddresses CSV, one repeated character", strings.NewReader(oaHead + "-8.9,52.8,2," + strings.Repeat("c", 60000) + ",Ennis,,h2\n"),
			oaC, "value over 1024 bytes", "", 0},
		{"OpenAddresses CSV, a line of 300 MB", hostile.NewStream(oaHead+"-8.9,52.8,2,", "street ", 300<<20),
			oaC, "", "refimport: line 3: a record over 65536 bytes, the limit", 3},
		{"OpenAddresses GeoJSON, a feature of 300 MB", hostile.NewStream(oaJSON+`{"type":"Feature","properties":{"street":"`, "street ", 300<<20),
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
			if hs, ok := tc.in.(*hostile.Stream); ok && hs.Done > gazetteer.MaxRowBytes+2*inputBuffer {
				t.Errorf("read %d bytes of the long record", hs.Done)
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

// cancelOnSecondRead cancels a context when it is read a second time:
// a signal arriving while a conversion reads its source.
type cancelOnSecondRead struct {
	io.Reader
	cancel context.CancelFunc
	reads  int
}

func (r *cancelOnSecondRead) Read(p []byte) (int, error) {
	if r.reads++; r.reads == 2 {
		r.cancel()
	}
	return r.Reader.Read(p)
}

// TestCancelledWhileConverting interrupts a conversion of 2,000 records
// once its first 64 KB are read: it stops with context.Canceled rather
// than converting the rest. Before, the context was looked at every
// 4,096 records.
func TestCancelledWhileConverting(t *testing.T) {
	var b strings.Builder
	b.WriteString("LON,LAT,NUMBER,STREET,CITY,HASH\n")
	for i := range 2000 {
		fmt.Fprintf(&b, "-8.9,52.8,%d,Main Street,Ennis,h%d\n", i, i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := OpenAddresses(ctx, &cancelOnSecondRead{Reader: strings.NewReader(b.String()), cancel: cancel}, io.Discard, "IE")
	if !errors.Is(err, context.Canceled) || st.Written >= 2000 {
		t.Fatalf("err = %v after %d records, want context.Canceled", err, st.Written)
	}
}
