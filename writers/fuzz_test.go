package writers

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzHighlight checks the highlight renderer on any label and pairs: it
// never panics, the segments reproduce the label exactly, spans stay sorted,
// disjoint and inside the line, and the bracketed form only adds brackets.
func FuzzHighlight(f *testing.F) {
	f.Add("12 Main Street", "Dún Laoghaire", 0, 2, 0, 3)
	f.Add("a🏠b", "", 1, 1, -5, 10)
	f.Add("", "x", 0, 0, 1, -1)
	f.Add("a\xffb", "東京", 2, 100, 1, 1)
	f.Fuzz(func(t *testing.T, l1, l2 string, s1, n1, s2, n2 int) {
		label := []string{l1, l2}
		hl := [][]int{{s1, n1, s2, n2}, {s2, n2}}
		var joined strings.Builder
		for _, seg := range labelSegments(label, hl) {
			joined.WriteString(seg.text)
		}
		if want := strings.Join(label, labelSeparator); joined.String() != want {
			t.Fatalf("segments join to %q, want %q", joined.String(), want)
		}
		n := utf8.RuneCountInString(l1)
		prev := -1
		for _, sp := range lineSpans(hl[0], n) {
			if sp.start < 0 || sp.end > n || sp.start >= sp.end || sp.start <= prev {
				t.Fatalf("bad span %v after %d in a line of %d", sp, prev, n)
			}
			prev = sp.end
		}
		b := MarkChanges(label, hl)
		if !strings.ContainsAny(l1+l2, "[]") {
			stripped := strings.NewReplacer("[", "", "]", "").Replace(b)
			if stripped != strings.Join(label, labelSeparator) {
				t.Fatalf("MarkChanges changed the text: %q", b)
			}
		}
	})
}

// FuzzNeutralise checks that a neutralised cell never reads as a formula and
// only ever gains a leading apostrophe.
func FuzzNeutralise(f *testing.F) {
	for _, s := range []string{"=1+1", "-5", "+353 1", "@x", "\tx", "\rx", "-Inf", "plain"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := neutralise(s)
		if got != s && got != "'"+s {
			t.Fatalf("neutralise(%q) = %q", s, got)
		}
		if formulaLike(got) {
			t.Fatalf("neutralise(%q) = %q still reads as a formula", s, got)
		}
	})
}
