package gazetteer

import "testing"

func TestRoutingKeys(t *testing.T) {
	if len(routingKeys) != 139 || len(routingKeySet) != 139 {
		t.Fatalf("%d routing keys, %d distinct, want 139", len(routingKeys), len(routingKeySet))
	}
	for _, k := range routingKeys {
		if len(k) != 3 || !routingKeySet[k] {
			t.Errorf("bad routing key %q", k)
		}
	}
}

func TestParseEircode(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"D02 X285", "D02 X285", true},
		{"d02x285", "D02 X285", true},
		{" d02  x285 ", "D02 X285", true},
		{"D6W 1234", "D6W 1234", true},
		{"A65 F4E2", "", false},  // A65 is not a routing key
		{"D02 X28B", "", false},  // B is not an Eircode letter
		{"D02 X28", "", false},   // too short
		{"D02 X2855", "", false}, // too long
		{"V95 AB12", "", false},  // B
		{"T12 1FYR", "T12 1FYR", true},
		{"", "", false},
		{"D02-X285", "", false},
	} {
		got, ok := ParseEircode(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseEircode(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseUKPostcode(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"SW1A 1AA", "SW1A 1AA", true},
		{"sw1a1aa", "SW1A 1AA", true},
		{"M1 1AE", "M1 1AE", true},
		{"B33 8TH", "B33 8TH", true},
		{"CR2 6XH", "CR2 6XH", true},
		{"DN55 1PT", "DN55 1PT", true},
		{"W1A 0AX", "W1A 0AX", true},
		{"EC1A 1BB", "EC1A 1BB", true},
		{"BT1 1AA", "BT1 1AA", true},
		{"GIR 0AA", "GIR 0AA", true},
		{"QA1 1AA", "", false},   // Q never starts a postcode
		{"AI1 1AA", "", false},   // I never second
		{"M1 1AC", "", false},    // C not in the inward code
		{"M1 AAA", "", false},    // inward starts with a digit
		{"12345", "", false},     // digits only
		{"SW1AA 1AA", "", false}, // outward too long
		{"D02 X285", "", false},  // an Eircode is not a UK postcode
		{"", "", false},
	} {
		got, ok := ParseUKPostcode(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseUKPostcode(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestPostcodeArea(t *testing.T) {
	for _, tc := range []struct{ pc, area string }{
		{"D02 X285", "D02"},
		{"SW1A 1AA", "SW1A"},
		{"M1 1AE", "M1"},
		{"", ""},
	} {
		if a := PostcodeArea(tc.pc); a != tc.area {
			t.Errorf("PostcodeArea(%q) = %q, want %q", tc.pc, a, tc.area)
		}
	}
}

func TestFindPostcode(t *testing.T) {
	for _, tc := range []struct {
		line, want, rest string
	}{
		{"12 Main St, Ennis, Co. Clare V95 X2Y3", "V95 X2Y3", "12 Main St, Ennis, Co. Clare "},
		{"v95x2y3", "V95 X2Y3", ""},
		{"London SW1A 1AA", "SW1A 1AA", "London "},
		{"sw1a1aa London", "SW1A 1AA", " London"},
		{"Dublin 2", "", ""},
		{"12 Main Street", "", ""},
		{"Flat 2B 14 High St", "", ""},
		{"PO Box 1234", "", ""},
	} {
		f, ok := findPostcode(tc.line)
		if tc.want == "" {
			if ok {
				t.Errorf("findPostcode(%q) found %q", tc.line, f.canonical)
			}
			continue
		}
		if !ok || f.canonical != tc.want {
			t.Errorf("findPostcode(%q) = %q, %v; want %q", tc.line, f.canonical, ok, tc.want)
			continue
		}
		if rest := tc.line[:f.start] + tc.line[f.end:]; rest != tc.rest {
			t.Errorf("findPostcode(%q) leaves %q, want %q", tc.line, rest, tc.rest)
		}
	}
}

func TestDistrictKey(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"Dublin 2", "dublin 2"},
		{"DUBLIN 02", "dublin 2"},
		{"D2", "dublin 2"},
		{"D02", "dublin 2"},
		{"Dublin 6W", "dublin 6w"},
		{"D6W", "dublin 6w"},
		{"Dublin6w", "dublin 6w"},
		{"Dublin 19", ""}, // no such district
		{"Dublin 24", "dublin 24"},
		{"Dublin", ""},
		{"D", ""},
	} {
		got, _ := districtKey(Tokens(tc.in))
		if got != tc.want {
			t.Errorf("districtKey(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
