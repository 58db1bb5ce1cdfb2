package gazetteer

import "testing"

func TestGluedUnit(t *testing.T) {
	for _, tc := range []struct {
		w    string
		want int
	}{
		{"rm4", 2}, {"flat12b", 4}, {"apt3", 3}, {"apartment3", 9}, {"no7", 2}, {"flt10", 3},
		{"unit4", 4}, {"suite210", 5},
		{"rm", 0}, {"flat", 0}, {"rm4ab", 0}, {"nob4", 0}, {"14elm", 0}, {"a98", 0}, {"no", 0},
		{"flata", 4}, {"rmb", 2}, {"flts", 0}, {"flats", 0}, {"noa", 0}, {"units", 0}, {"unite", 0}, {"roomy", 0},
		{"flat12bc", 0}, {"flatab", 0},
	} {
		if got := gluedUnit(tc.w); got != tc.want {
			t.Errorf("gluedUnit(%q) = %d, want %d", tc.w, got, tc.want)
		}
	}
}

func TestPhonePart(t *testing.T) {
	for _, tc := range []struct {
		part, rest string
		ok         bool
	}{
		{"Tel: 087 123 4567", "", true},
		{"+353 1 954 9785", "", true},
		{"0121 501 4440", "", true},
		{"Mob. 086-1234567", "", true},
		{"Phone: 07700 4790335", "", true},
		{"(01) 234 5678", "", true},
		{"21 Hawthorn Place Tel 087 1234567", "21 Hawthorn Place", true},
		{"21 Hawthorn Place +44 20 7946 0018", "21 Hawthorn Place", true},
		// Not telephone numbers: house numbers, ranges, PO boxes, short
		// runs and digits inside an address.
		{"12-14 Quay Street", "", false},
		{"PO Box 1234567", "", false},
		{"Unit 4 1234 Business Park", "", false},
		{"123 4567", "", false},
		{"1 234 5678 Main Street", "", false},
		{"Tel 12", "", false},
		{"Apartment 1201, 1250 Main Street", "", false},
		{"", "", false},
	} {
		rest, ok := phonePart(tc.part)
		if rest != tc.rest || ok != tc.ok {
			t.Errorf("phonePart(%q) = %q, %v, want %q, %v", tc.part, rest, ok, tc.rest, tc.ok)
		}
	}
}

func TestSaintInitial(t *testing.T) {
	for _, tc := range []struct {
		in, out string
		ok      bool
	}{
		{"S. Patrick's Road", "St Patrick's Road", true},
		{"9 S. Brigid's Crescent", "9 St Brigid's Crescent", true},
		{"s. helier", "St helier", true},
		{"S Patrick's Road", "S Patrick's Road", false}, // South as often
		{"J. S. A. Smith", "J. S. A. Smith", false},     // initials
		{"Main St.", "Main St.", false},
		{"12 Main S.", "12 Main S.", false},
	} {
		out, ok := saintInitial(tc.in)
		if out != tc.out || ok != tc.ok {
			t.Errorf("saintInitial(%q) = %q, %v, want %q, %v", tc.in, out, ok, tc.out, tc.ok)
		}
	}
}

func TestCloseNumber(t *testing.T) {
	for _, tc := range []struct {
		w, n string
		want bool
	}{
		{"71", "17", true}, {"15", "17", true}, {"18", "17", true}, {"7", "17", true}, {"177", "17", true},
		{"123", "132", true}, {"9", "10", true},
		{"47", "17", false}, {"17", "17", false}, {"20", "17", false}, {"17a", "17", false},
		{"321", "123", false}, {"", "1", false},
	} {
		if got := closeNumber(tc.w, tc.n); got != tc.want {
			t.Errorf("closeNumber(%q, %q) = %v, want %v", tc.w, tc.n, got, tc.want)
		}
	}
}
