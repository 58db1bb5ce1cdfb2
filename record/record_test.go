package record

import "testing"

// TestNormaliseEncoding: the names of --encoding and --out-encoding (the
// writers take the same ones).
func TestNormaliseEncoding(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", EncodingUTF8}, {" UTF-8 ", EncodingUTF8}, {"utf8", EncodingUTF8},
		{"windows-1252", EncodingWindows1252}, {"Windows1252", EncodingWindows1252},
		{"CP1252", EncodingWindows1252}, {"cp-1252", EncodingWindows1252}, {"1252", EncodingWindows1252},
		{"latin1", ""}, {"utf-16", ""},
	} {
		got, err := NormaliseEncoding(tt.in)
		if got != tt.want || (err != nil) != (tt.want == "") {
			t.Errorf("NormaliseEncoding(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}
