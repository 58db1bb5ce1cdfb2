package pipeline

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/runstats"
)

func FuzzDedupKey(f *testing.F) {
	f.Add("1 Main Street\nApt 2", "Cork", "IE")
	f.Add("  Straße\t1 ", "", "de")
	f.Add("1:a", "b", "")
	f.Add("\xff\xfe", "\u00a0", "IE")
	f.Fuzz(func(t *testing.T, lines, city, country string) {
		a := api.Address{Lines: strings.Split(lines, "\n"), City: city, Country: country}
		k := dedupKey(a)
		if k != dedupKey(a) {
			t.Fatal("key is not deterministic")
		}
		// White space around and inside fields, and ASCII case, do not matter.
		b := api.Address{City: "  " + strings.ToUpper(city) + "\t", Country: " " + country}
		for _, l := range a.Lines {
			b.Lines = append(b.Lines, " "+strings.ReplaceAll(l, " ", "  ")+" ")
		}
		if isASCII(lines + city) {
			if dedupKey(b) != k {
				t.Fatalf("padded/upper-cased address has another key: %q vs %q", dedupKey(b), k)
			}
		}
		// Moving text from the city into a line is another address.
		if city != "" && strings.TrimSpace(city) != "" {
			c := api.Address{Lines: append(append([]string(nil), a.Lines...), city), Country: country}
			if dedupKey(c) == k {
				t.Fatal("different field layouts collide")
			}
		}
		n := normalise(lines)
		if !strings.ContainsAny(lines, "\x00\x01\x02") && normalise(n) != n {
			t.Fatalf("normalise is not idempotent on %q", lines)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func FuzzReasonText(f *testing.F) {
	f.Add("api: verify: HTTP 500")
	f.Add(strings.Repeat("é", 300))
	f.Add("\n\t ")
	f.Fuzz(func(t *testing.T, s string) {
		got := reasonText(s)
		if got == "" || strings.ContainsAny(got, "\n\r\t") {
			t.Fatalf("reasonText(%q) = %q", s, got)
		}
		if len(got) > maxReason+len("…") {
			t.Fatalf("reason of %d bytes", len(got))
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("reasonText broke UTF-8: %q", got)
		}
	})
}

// FuzzDecodeVerdict: no bytes make the spill's decoder panic, and what it
// accepts encodes back to something it decodes to the same verdict.
func FuzzDecodeVerdict(f *testing.F) {
	f.Add(appendVerdict(nil, verdict{reason: "service answered 400", kind: runstats.ErrKindPermanent}))
	f.Add(appendVerdict(nil, verdict{resp: &api.VerifyResponse{Action: api.ActionAccept}, fromCache: true}))
	f.Add(appendVerdict(nil, verdict{resp: &api.VerifyResponse{Action: api.ActionAccept}, at: time.Unix(1, 2)}))
	f.Add([]byte{flagResp, 0, 0, '{'})
	f.Add([]byte{0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeVerdict(b)
		if err != nil {
			return
		}
		w, err := decodeVerdict(appendVerdict(nil, v))
		if err != nil {
			t.Fatalf("re-encoded verdict does not decode: %v", err)
		}
		if w.reason != v.reason || w.kind != v.kind || w.fromCache != v.fromCache || (w.resp == nil) != (v.resp == nil) || !w.at.Equal(v.at) {
			t.Fatalf("round trip changed the verdict: %+v -> %+v", v, w)
		}
	})
}

// normalise lower-cases s and folds white space.
func normalise(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	appendNormal(&b, s)
	return b.String()
}
