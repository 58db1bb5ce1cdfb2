package service

import (
	"reflect"
	"testing"
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
		{"after an accented word", "Dún Laoghaire, Co. Dublin", []string{"Dún Laoghaire, Co. Dubln"}, []int{19, 6}},
		{"abbreviation expanded", "Main Street", []string{"Main St"}, []int{5, 6}},
		{"typo", "1 Main Street", []string{"1 Mian Street"}, []int{2, 4}},
		{"new line", "A96 X2Y3", []string{"1 Main Street", "Dún Laoghaire"}, []int{0, 8}},
		{"no input", "Cork", nil, []int{0, 4}},
		{"shortened", "Main St", []string{"Main Street"}, []int{}},
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
