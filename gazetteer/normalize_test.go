package gazetteer

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/addrclean/addrclean/countries"
	"github.com/addrclean/addrclean/internal/golden"
)

// TestFoldGolden checks the matching key of many spellings against
// testdata/normalize.golden (go test -run FoldGolden -update rewrites it).
func TestFoldGolden(t *testing.T) {
	f, err := os.Open("testdata/normalize.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fmt.Fprintf(&b, "%-30s => %q\n", line, Fold(line))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "normalize.golden", []byte(b.String()))
}

func TestEquivalentSpellings(t *testing.T) {
	for _, pair := range [][2]string{
		{"12 Main Street", "12 MAIN ST."},
		{"St. Patrick's Road", "Saint Patricks Rd"},
		{"Dún Laoghaire", "DUN LAOGHAIRE"},
		{"Apt 4", "Apartment 4"},
		{"Flat 4", "Unit 4"},
		{"12A Harbour Court", "12 a Harbour Ct"},
		{"Co. Cork", "County Cork"},
		{"Co. Cork", "cork"},
		{"PO Box 1234", "P.O. Box 1234"},
		// Issue 24: rooms and flats as people abbreviate them.
		{"Room 4", "Rm 4"},
		{"Room 4", "Rm4"},
		{"Room 4", "RM. 4"},
		{"Flat 12B", "Flt12B"},
		{"Flat 2", "Flt. 2"},
		{"Apartment 3", "Apt.3"},
		{"Apartment 3", "APARTMENT3"},
		{"7 Church Lane", "No7 Church Lane"},
	} {
		if a, b := Fold(pair[0]), Fold(pair[1]); a != b {
			t.Errorf("Fold(%q) = %q but Fold(%q) = %q", pair[0], a, pair[1], b)
		}
	}
}

func TestDLDistance1(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"parnell", "parnell", true},
		{"parnell", "parnel", true},  // deletion
		{"parnel", "parnell", true},  // insertion
		{"parnell", "pxrnell", true}, // substitution
		{"parnell", "aprnell", true}, // transposition
		{"parnell", "pranelx", false},
		{"parnell", "par", false},
		{"", "a", true},
		{"ab", "ba", true},
		{"abc", "cab", false},
	} {
		if got := dlDistance1(tc.a, tc.b); got != tc.want {
			t.Errorf("dlDistance1(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestTidy(t *testing.T) {
	if got := Tidy("  12   Main\tSt \n"); got != "12 Main St" {
		t.Errorf("Tidy = %q", got)
	}
}

// FuzzNormalize feeds arbitrary text to the normaliser and the postcode
// parsers: they must not panic, must produce valid UTF-8, and canonical
// postcodes must parse to themselves.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"12 Main St", "D02 X285", "sw1a1aa", "Dún Laoghaire", "12-14", "c/o x", "\xff\xfe", "Ⅻ ß Ǆ", "Dublin 6W", "PO Box 9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k := Fold(s)
		if !utf8.ValidString(k) {
			t.Fatalf("Fold(%q) = %q is not UTF-8", s, k)
		}
		if k2 := Fold(k); k2 != k {
			// Folding a key again may only differ by abbreviation words
			// that were already canonical; it must still not panic.
			_ = k2
		}
		for _, parse := range []func(string) (string, bool){ParseEircode, ParseUKPostcode} {
			if c, ok := parse(s); ok {
				if c2, ok2 := parse(c); !ok2 || c2 != c {
					t.Fatalf("canonical %q of %q does not parse to itself: %q %v", c, s, c2, ok2)
				}
			}
		}
		if f, ok := findPostcode(s); ok {
			if f.start < 0 || f.end > len(s) || f.start > f.end {
				t.Fatalf("findPostcode(%q) span %d..%d", s, f.start, f.end)
			}
		}
		_, _ = districtKey(Tokens(s))
		_ = SplitParts(nil, []string{s})
	})
}

// The allocation-free helpers of Match, held to the simple forms they
// replace.

func oldTidy(s string) string { return strings.Join(strings.Fields(s), " ") }

func oldSplitParts(lines []string) []string {
	var parts []string
	for _, l := range lines {
		for _, p := range strings.FieldsFunc(l, func(r rune) bool { return r == '\n' || r == '\r' || r == ',' || r == ';' }) {
			if p = oldTidy(p); p != "" {
				parts = append(parts, p)
			}
		}
	}
	return parts
}

func checkHelpers(t *testing.T, s string) {
	t.Helper()
	rest, ok := contactLine(s)
	if wrest, wok := contactLineSlow(s); rest != wrest || ok != wok {
		t.Fatalf("contactLine(%q) = %q %v, want %q %v", s, rest, ok, wrest, wok)
	}
	if got, want := Tidy(s), oldTidy(s); got != want {
		t.Fatalf("Tidy(%q) = %q, want %q", s, got, want)
	}
	lines := []string{s, "x, " + s, s + ";\n\r,y"}
	if got, want := SplitParts(nil, lines), oldSplitParts(lines); strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
		t.Fatalf("SplitParts(%q) = %q, want %q", lines, got, want)
	}
	for _, pre := range append([]string{"co ", "co.", "county "}, contactPrefixes...) {
		if got, want := hasLowerPrefix(s, pre), strings.HasPrefix(strings.ToLower(s), pre); got != want {
			t.Fatalf("hasLowerPrefix(%q, %q) = %v, want %v", s, pre, got, want)
		}
	}
}

var helperCases = []string{
	"", " ", "a", " a", "a ", "a  b", "a b", "a\tb", "a\u00a0b", "a\u0085b", "a\u2028b", "\xff", "a \xff b",
	"12 Main St", "  12   Main\tSt \n", "Co. Clare", "CO CLARE", "County Cork", "İreland", "c/o Mary", "FAO x",
	"Attn: J", "For the attentİon of", "the Netherlands", "NETHERLANDS", "Nether-lands", "Ireland", "UK",
	"Northern Ireland", "Côte d'Ivoire", "Trinidad & Tobago", "thexyz", "the", strings.Repeat("a", 200),
	"a,b;c\nd\re", ",,;;", "Dún Laoghaire, Co. Dublin", "\u212Aelvin",
}

func TestHelpersMatchSimpleForms(t *testing.T) {
	for _, s := range helperCases {
		checkHelpers(t, s)
	}
	for _, s := range countryNames(t) {
		checkHelpers(t, s)
		checkHelpers(t, strings.ToUpper(s))
	}
}

// countryNames are the codes and names of the countries countries.Name
// knows.
func countryNames(t *testing.T) []string {
	t.Helper()
	var names []string
	for a := byte('A'); a <= 'Z'; a++ {
		for b := byte('A'); b <= 'Z'; b++ {
			if name := countries.Name(string([]byte{a, b})); name != "" {
				names = append(names, string([]byte{a, b}), name, "The "+name)
			}
		}
	}
	if len(names) == 0 {
		t.Fatal("countries.Name knows no country")
	}
	return names
}

func FuzzHelpersMatchSimpleForms(f *testing.F) {
	for _, s := range helperCases {
		f.Add(s)
	}
	f.Fuzz(checkHelpers)
}

// TestKeyPacking: the packed country and the postcode hash stand for the
// strings in score only if they are exact where used.
func TestKeyPacking(t *testing.T) {
	codes := []string{"IE", "GB", "ie", "I", "IEX", "", "\x00\x00", "\x00A", "A\x00", "\xff\xff", "ZZ"}
	for _, a := range codes {
		pa, oka := packCountry(a)
		if oka != (len(a) == 2 && a != "\x00\x00") || oka && pa == 0 {
			t.Errorf("packCountry(%q) = %d, %v", a, pa, oka)
		}
		for _, b := range codes {
			pb, okb := packCountry(b)
			if oka && okb && (pa == pb) != (a == b) {
				t.Errorf("packCountry(%q) = %d, packCountry(%q) = %d", a, pa, b, pb)
			}
		}
	}
	for _, pc := range []string{"", " ", "D02 X285", "SW1A 1AA", "\x00"} {
		if h := postcodeHash(pc); (h == 0) != (pc == "") {
			t.Errorf("postcodeHash(%q) = %d", pc, h)
		}
	}
}

func TestLowerType(t *testing.T) {
	for _, s := range []string{"", "Residential", "RESIDENTIAL", "residential", "Commercial", "POBox", "pobox", "PoBoX",
		"resİdential", "Reſidential", "reſidentia", "commercia", "x", "\u212Aommercial", "COMMERCIAL\xff"} {
		if got, want := lowerType(s), strings.ToLower(s); got != want {
			t.Errorf("lowerType(%q) = %q, want %q", s, got, want)
		}
	}
}

// FuzzDisplayCase: DisplayCase changes how a name looks, never what it
// matches, and a second pass changes nothing.
func FuzzDisplayCase(f *testing.F) {
	for _, s := range []string{"NEWCASTLE UPON TYNE", "KING'S LYNN", "DÚN LAOGHAIRE", "DUBLIN 6W", "İSTANBUL", "ǅ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d := DisplayCase(s)
		if Fold(d) != Fold(s) {
			t.Fatalf("DisplayCase(%q) = %q: key %q, was %q", s, d, Fold(d), Fold(s))
		}
		if DisplayCase(d) != d {
			t.Fatalf("DisplayCase not stable on %q", d)
		}
	})
}
