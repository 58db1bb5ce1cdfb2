package countries

import (
	"strings"
	"testing"
)

func TestISO(t *testing.T) {
	tests := []struct {
		in     string
		want   string
		wantOK bool
	}{
		{"Ireland", "IE", true},
		{"ireland", "IE", true},
		{"  IRELAND ", "IE", true},
		{"Éire", "IE", true},
		{"Eire", "IE", true},
		{"éire", "IE", true},
		{"IRL", "IE", true},
		{"irl", "IE", true},
		{"IE", "IE", true},
		{"Republic of Ireland", "IE", true},
		{"Republic-of-Ireland", "IE", true},
		{"ROI", "IE", true},
		{"R.O.I.", "IE", true},
		{"UK", "GB", true},
		{"U.K.", "GB", true},
		{"u k", "GB", true},
		{"GB", "GB", true},
		{"GBR", "GB", true},
		{"Great Britain", "GB", true},
		{"United Kingdom", "GB", true},
		{"UNITED KINGDOM", "GB", true},
		{"England", "GB", true},
		{"Scotland", "GB", true},
		{"Wales", "GB", true},
		{"Northern Ireland", "GB", true},
		{"N. Ireland", "GB", true},
		{"NI", "GB", true},
		{"Britain", "GB", true},
		{"France", "FR", true},
		{"FRA", "FR", true},
		{"fr", "FR", true},
		{"Germany", "DE", true},
		{"Deutschland", "DE", true},
		{"United States", "US", true},
		{"USA", "US", true},
		{"U.S.A.", "US", true},
		{"the Netherlands", "NL", true},
		{"Netherlands", "NL", true},
		{"Côte d'Ivoire", "CI", true},
		{"Cote dIvoire", "CI", true},
		{"Åland Islands", "AX", true},
		{"Curacao", "CW", true},
		{"Trinidad & Tobago", "TT", true},
		{"Democratic Republic of the Congo", "CD", true},
		{"Congo, Democratic Republic of the", "CD", true},
		{"Turkey", "TR", true},
		{"Türkiye", "TR", true},
		{"Viet Nam", "VN", true},
		{"Vietnam", "VN", true},
		{"New Zealand", "NZ", true},
		{"Nicaragua", "NI", true},
		{"NIC", "NI", true},
		{"Thailand", "TH", true},
		{"", "", false},
		{"   ", "", false},
		{"...", "", false},
		{"Atlantis", "", false},
		{"XX", "", false},
		{"The", "", false},
		{"\xff\xfe", "", false},
		{strings.Repeat("Ireland", 100), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := ISO(tt.in)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("ISO(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"IE", "Ireland"},
		{"ie", "Ireland"},
		{"GB", "United Kingdom"},
		{"US", "United States"},
		{"FR", "France"},
		{"XX", ""},
		{"", ""},
		{"IRL", ""},
	}
	for _, tt := range tests {
		if got := Name(tt.in); got != tt.want {
			t.Errorf("Name(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

// TestCountryTableRoundTrip checks every code and name of the table resolves
// to its own code, so an alias can never shadow a real country.
func TestCountryTableRoundTrip(t *testing.T) {
	n := 0
	for line := range strings.SplitSeq(countryTable, "\n") {
		n++
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 || len(f[0]) != 2 || len(f[1]) != 3 {
			t.Fatalf("bad table line %q", line)
		}
		for _, in := range f {
			if in == "NI" {
				continue // deliberately Northern Ireland, see countryAliases
			}
			if got, ok := ISO(in); !ok || got != f[0] {
				t.Errorf("ISO(%q) = %q, %v; want %q", in, got, ok, f[0])
			}
		}
		if Name(f[0]) != f[2] {
			t.Errorf("Name(%q) = %q", f[0], Name(f[0]))
		}
	}
	if n != 249 {
		t.Errorf("table has %d countries, want 249", n)
	}
}

func FuzzISO(f *testing.F) {
	for _, s := range []string{"Ireland", "Éire", "U.K.", "", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		iso, ok := ISO(s)
		if ok && Name(iso) == "" {
			t.Errorf("ISO(%q) = %q, which has no name", s, iso)
		}
		checkISOByKey(t, s)
	})
}

// checkISOByKey holds ISO, which builds its key on the stack, to the
// plain map lookup of countryKey.
func checkISOByKey(t *testing.T, s string) {
	t.Helper()
	var want string
	var wok bool
	if k := countryKey(s); len(s) <= 128 && k != "" {
		want, wok = countryByKey[k]
	}
	if got, ok := ISO(s); got != want || ok != wok {
		t.Fatalf("ISO(%q) = %q %v, want %q %v", s, got, ok, want, wok)
	}
}

func TestISOMatchesKey(t *testing.T) {
	ins := []string{"", " ", "a", "\xff", "İreland", "the Netherlands", "Nether-lands", "Côte d'Ivoire",
		"Trinidad & Tobago", "thexyz", "the", "\u212Aelvin", strings.Repeat("a", 200)}
	for line := range strings.SplitSeq(countryTable, "\n") {
		ins = append(ins, strings.SplitN(line, " ", 3)...)
	}
	for alias := range countryAliases {
		ins = append(ins, alias)
	}
	for _, s := range ins {
		checkISOByKey(t, s)
		checkISOByKey(t, strings.ToUpper(s))
		checkISOByKey(t, "The "+s)
	}
}

func BenchmarkISO(b *testing.B) {
	for b.Loop() {
		ISO("Republic of Ireland")
	}
}
