package service

import (
	"reflect"
	"testing"

	"github.com/addrclean/addrclean/gazetteer"
)

func TestHighlights(t *testing.T) {
	tests := []struct {
		name  string
		label string
		input []string
		want  []int
	}{
		{"same", "1 Main Street", []string{"1 Main Street"}, []int{}},
		{"case only", "1 Main Street", []string{"x", "1 MAIN STREET"}, []int{}},
		{"fada added", "Dún Laoghaire", []string{"Dun Laoghaire"}, []int{0, 3}},
		{"offsets in characters", "Dún Laoghaire Road", []string{"Dún Laoghaire Rd"}, []int{14, 4}},
		{"after an accented word", "Dún Laoghaire Co. Dublin", []string{"Dún Laoghaire Co. Dubln"}, []int{18, 6}},
		{"abbreviation expanded", "Main Street", []string{"Main St"}, []int{5, 6}},
		{"typo", "1 Main Street", []string{"1 Mian Street"}, []int{2, 4}},
		{"new line", "A96 X2Y3", []string{"1 Main Street", "Dún Laoghaire"}, []int{0, 8}},
		{"no input", "Cork", nil, []int{0, 4}},
		{"shortened: the word where the cut was", "Main St", []string{"Main Street"}, []int{5, 2}},
		{"deletion inside a word", "Bristol", []string{"Briestol"}, []int{0, 7}},
		{"deletion at the start of a line", "17 Foxglove Way", []string{"Apt 5 17 Foxglove Way"}, []int{0, 2}},
		{"number added before a word", "23 Wolfe Tone Court", []string{"Wolfe Tone Court"}, []int{0, 2}},
		{"word added after a space", "Wolfe Tone Court", []string{"Wolfe Court"}, []int{6, 4}},
		{"trailing comma in the cell", "1 Market Road", []string{"1 Markt Road,"}, []int{2, 6}},
		{"unchanged trailing comma", "1 Market Road", []string{"1 Market Road,"}, []int{}},
		{"one cell of several parts", "Mill Court", []string{"Flat 2, Mill Court, 18 Cnoc na Greine Lawns, Lucan, K78V5YH"}, []int{}},
		{"part of a cell corrected", "18 Cnoc na Gréine Lawns", []string{"Flat 2, Mill Court, 18 Cnoc na Grene Lawns, Lucan"}, []int{11, 6}},
		{"postcode spacing", "K78 V5YH", []string{"Lucan, K78V5YH"}, []int{0, 8}},
		{"empty line", "", []string{"x"}, []int{}},
		{"closest line wins", "Ballsbridge", []string{"1 Main Street", "Balsbridge"}, []int{0, 11}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := highlights([]string{tc.label}, tc.input)
			if len(got) != 1 || !reflect.DeepEqual(got[0], tc.want) {
				t.Errorf("highlights(%q, %q) = %v, want %v", tc.label, tc.input, got, tc.want)
			}
		})
	}
}

func TestHighlightsOneCell(t *testing.T) {
	label := []string{"Flat 2", "Mill Court", "18 Cnoc na Greine Lawns"}
	got := highlights(label, []string{"Flat 2, Mill Court, 18 Cnoc na Greine Lawns, Lucan, K78V5YH"})
	want := [][]int{{}, {}, {}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("highlights = %v, want %v", got, want)
	}
}

func TestHighlightElement(t *testing.T) {
	parts := runesOf(inputParts([]string{"12 High Street", "Greater London", "Dublin 11", "Galway"}))
	tests := []struct {
		name, v, own string
		c            gazetteer.Change
		want         []int
	}{
		{"typo corrected", "London", "Loxdon", gazetteer.ChangeChanged, []int{0, 6}},
		{"letter deleted", "Bristol", "Briestol", gazetteer.ChangeChanged, []int{0, 7}},
		{"changed, text inside another line", "London", "", gazetteer.ChangeChanged, []int{0, 6}},
		{"region replaced, its name is the input city", "Galway", "Co. Tipperary", gazetteer.ChangeChanged, []int{0, 6}},
		{"changed, a prefix of the input", "Dublin", "Dublin 11", gazetteer.ChangeChanged, []int{0, 6}},
		{"added, inside an input line", "Dublin", "", gazetteer.ChangeAdded, []int{0, 6}},
		{"unchanged, Co. dropped", "Sligo", "Co. Sligo", gazetteer.ChangeUnchanged, []int{}},
		{"unchanged, case", "Sligo", "SLIGO", gazetteer.ChangeUnchanged, []int{}},
		{"unchanged, district refined", "Dublin 6", "Dublin", gazetteer.ChangeUnchanged, []int{7, 1}},
		{"empty", "", "x", gazetteer.ChangeChanged, []int{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := highlightElement(tc.v, tc.own, tc.c, parts).ints(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("highlightElement(%q, %q, %s) = %v, want %v", tc.v, tc.own, tc.c, got, tc.want)
			}
		})
	}
}

// ints is the span as the interface writes it.
func (s span) ints() []int {
	if !s.set {
		return []int{}
	}
	return []int{s.start, s.n}
}

// highlights returns, for every label line, the [start, length] span (in
// Unicode characters) of what differs from the closest input part, or an
// empty span when the line is there already (ignoring case). The interface
// allows one pair per line, so several changes in a line become one span;
// the span is widened to whole words, which is what a reader looks at.
func highlights(label, input []string) [][]int {
	out := make([][]int, len(label))
	in := runesOf(inputParts(input))
	for i, l := range label {
		out[i] = highlightLine([]rune(l), in, true).ints()
	}
	return out
}

func runesOf(ss []string) [][]rune {
	out := make([][]rune, len(ss))
	for i, s := range ss {
		out[i] = []rune(s)
	}
	return out
}

// inputParts splits input lines as inputRunes does.
func inputParts(lines []string) []string { return gazetteer.SplitParts(nil, lines) }
