package hostile

import (
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestStream(t *testing.T) {
	for _, tc := range []struct {
		head, fill string
		n          int64
		want       string
	}{
		{"ab", "xyz", 9, "abxyzxyzx"},
		{"abc", "x", 2, "ab"},
		{"", "xy", 3, "xyx"},
	} {
		s := NewStream(tc.head, tc.fill, tc.n)
		b, err := io.ReadAll(s)
		if err != nil || string(b) != tc.want || s.Done != tc.n {
			t.Errorf("%+v: read %q, %v, done %d", tc, b, err, s.Done)
		}
	}
}

func TestWord(t *testing.T) {
	w := Word(rand.New(rand.NewPCG(1, 2)), 100)
	if len(w) != 100 || strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") != "" || strings.Count(w, w[:1]) == 100 {
		t.Errorf("Word = %q", w)
	}
}
