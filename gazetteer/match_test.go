package gazetteer

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestMatch(t *testing.T) {
	ix := loadSmall(t)
	for _, tc := range []struct {
		name    string
		q       Query
		verdict Verdict
		level   Level
		id      string
		lines   []string
		city    string
		region  string
		pc      string
		check   func(t *testing.T, m Match)
	}{
		{
			name: "exact", q: Query{Lines: []string{"12 Main Street", "V95 X2Y3"}, City: "Ennis", Region: "Clare", Country: "IE"},
			verdict: VerdictAccept, level: LevelBuilding, id: "IE1",
			lines: []string{"12 Main Street"}, city: "Ennis", region: "Clare", pc: "V95 X2Y3",
			check: func(t *testing.T, m Match) {
				want := Details{ChangeNone, ChangeUnchanged, ChangeUnchanged, ChangeNone, ChangeUnchanged, ChangeUnchanged, ChangeUnchanged, ChangeUnchanged}
				if m.Details != want {
					t.Errorf("details %+v", m.Details)
				}
				if m.AddressLinesAmended || m.CityAmended || m.RegionAmended || m.PostcodeAmended {
					t.Errorf("amended flags set: %+v", m)
				}
				if m.Location == nil || m.Location.Latitude != 52.844 {
					t.Errorf("location %+v", m.Location)
				}
			},
		},
		{
			name: "cosmetic", q: Query{Lines: []string{"12 MAIN ST.", "ennis", "co clare", "v95x2y3"}},
			verdict: VerdictAccept, level: LevelBuilding, id: "IE1", lines: []string{"12 Main Street"},
			check: func(t *testing.T, m Match) {
				// Only cosmetic: the flags follow the details (Unchanged).
				if m.AddressLinesAmended || m.PostcodeAmended || m.CityAmended || m.RegionAmended || !m.Tidied {
					t.Errorf("amended flags set or not tidied: %+v", m)
				}
				if m.Details.Postcode != ChangeUnchanged || m.Details.Street != ChangeUnchanged {
					t.Errorf("details %+v", m.Details)
				}
			},
		},
		{
			name: "postcode and county added", q: Query{Lines: []string{"14 Main Street"}, City: "Ennis", Country: "IE"},
			verdict: VerdictAccept, level: LevelBuilding, id: "IE2", pc: "V95 X2Y4", region: "Clare",
			check: func(t *testing.T, m Match) {
				if m.Details.Postcode != ChangeAdded || m.Details.Region != ChangeAdded || !m.PostcodeAmended {
					t.Errorf("details %+v", m.Details)
				}
			},
		},
		{
			name: "street typo", q: Query{Lines: []string{"12 Mian Street", "Ennis"}, Country: "IE"},
			verdict: VerdictSuggest, level: LevelBuilding, id: "IE1",
			check: func(t *testing.T, m Match) {
				if m.Details.Street != ChangeChanged {
					t.Errorf("street %q", m.Details.Street)
				}
			},
		},
		{
			name: "eircode alone names the house", q: Query{Lines: []string{"D02 X286"}, Country: "IE"},
			verdict: VerdictSuggest, level: LevelSubBuilding, id: "IE5",
			lines: []string{"Apartment 2", "The Maltings", "3 Quay Road"}, city: "Dublin 2",
		},
		{
			name: "flat", q: Query{Lines: []string{"Apt 1", "3 Quay Rd", "Dublin 2"}},
			verdict: VerdictAccept, level: LevelSubBuilding, id: "IE4",
		},
		{
			name: "flat the reference lacks is not accepted", q: Query{Lines: []string{"Apt 5, 12 Main Street"}, City: "Ennis", Country: "IE"},
			verdict: VerdictSuggest, level: LevelBuilding, id: "IE1", lines: []string{"12 Main Street"},
			check: func(t *testing.T, m Match) {
				if m.Details.SubBuildingNumber != ChangeIgnored {
					t.Errorf("subBuildingNumber %q", m.Details.SubBuildingNumber)
				}
			},
		},
		{
			name: "unit the reference lacks, own line", q: Query{Lines: []string{"Unit 5", "12 Main Street", "V95 X2Y3"}, City: "Ennis", Country: "IE"},
			verdict: VerdictSuggest, level: LevelBuilding, id: "IE1",
			check: func(t *testing.T, m Match) {
				if m.Details.SubBuildingNumber != ChangeIgnored {
					t.Errorf("subBuildingNumber %q", m.Details.SubBuildingNumber)
				}
			},
		},
		{
			name: "second number the reference lacks", q: Query{Lines: []string{"5, 12 Main Street"}, City: "Ennis", Country: "IE"},
			verdict: VerdictSuggest, level: LevelBuilding, id: "IE1",
			check: func(t *testing.T, m Match) {
				if m.Details.SubBuildingNumber != ChangeIgnored {
					t.Errorf("subBuildingNumber %q", m.Details.SubBuildingNumber)
				}
			},
		},
		{
			name: "flat missing is ambiguous", q: Query{Lines: []string{"The Maltings", "3 Quay Road"}, City: "Dublin 2"},
			verdict: VerdictConfirm, level: LevelStreet, lines: []string{"3 Quay Road"}, city: "Dublin 2",
		},
		{
			name: "district as D2", q: Query{Lines: []string{"Apartment 2, The Maltings, 3 Quay Road", "D2"}},
			verdict: VerdictAccept, level: LevelSubBuilding, id: "IE5",
		},
		{
			name: "organisation added", q: Query{Lines: []string{"16 Main St"}, City: "Ennis"},
			verdict: VerdictAccept, level: LevelBuilding, id: "IE3", lines: []string{"Murphy's Pharmacy", "16 Main Street"},
			check: func(t *testing.T, m Match) {
				if m.Details.Organization != ChangeAdded {
					t.Errorf("organization %q", m.Details.Organization)
				}
			},
		},
		{
			name: "number not in reference", q: Query{Lines: []string{"99 Main Street"}, City: "Ennis"},
			verdict: VerdictConfirm, level: LevelStreet, lines: []string{"99 Main Street"}, city: "Ennis", region: "Clare",
			check: func(t *testing.T, m Match) {
				if m.Record != nil || m.Details.BuildingNumber != ChangeIgnored {
					t.Errorf("record %v, number %q", m.Record, m.Details.BuildingNumber)
				}
			},
		},
		{
			// Issue 24: the Eircode names 12 Main Street, and no house of
			// the street is 13: the Eircode's address, the number corrected.
			name: "wrong number, Eircode names the house", q: Query{Lines: []string{"13 Main Street", "V95 X2Y3"}, City: "Ennis"},
			verdict: VerdictSuggest, level: LevelBuilding, id: "IE1",
		},
		{
			// 14 Main Street exists with another Eircode: the number names
			// a real house, so the Eircode does not overrule it.
			name: "number of another house, Eircode of this one", q: Query{Lines: []string{"14 Main Street", "V95 X2Y3"}, City: "Ennis"},
			verdict: VerdictSuggest, level: LevelBuilding, id: "IE2",
		},
		{
			name: "wrong number, no postcode", q: Query{Lines: []string{"13 Main Street"}, City: "Ennis"},
			verdict: VerdictConfirm,
		},
		{
			name: "named house in townland", q: Query{Lines: []string{"Rose Cottage", "Ballyard", "Tullamore", "Co. Offaly"}},
			verdict: VerdictAccept, level: LevelBuilding, id: "IE6", lines: []string{"Rose Cottage", "Ballyard"},
		},
		{
			name: "po box", q: Query{Lines: []string{"P.O. Box 1234", "Tullamore"}},
			verdict: VerdictAccept, level: LevelBuilding, id: "IE7",
		},
		{
			name: "po box not in reference", q: Query{Lines: []string{"PO Box 9999", "Tullamore"}, Country: "IE"},
			verdict: VerdictConfirm,
			check: func(t *testing.T, m Match) {
				if !m.POBox || m.Record != nil {
					t.Errorf("POBox %v, record %v", m.POBox, m.Record)
				}
			},
		},
		{
			name: "an ordinary address is not a po box", q: Query{Lines: []string{"12 Main Street"}, City: "Ennis", Country: "IE"},
			verdict: VerdictAccept, id: "IE1",
			check: func(t *testing.T, m Match) {
				if m.POBox {
					t.Error("POBox set")
				}
			},
		},
		{
			name: "diacritics kept in output", q: Query{Lines: []string{"5 Dun Emer Drive", "Dun Laoghaire"}},
			verdict: VerdictAccept, id: "IE8", lines: []string{"5 Dún Emer Drive"}, city: "Dún Laoghaire",
		},
		{
			name: "uk", q: Query{Lines: []string{"10 Downing St", "London", "sw1a2aa"}, Country: "GB"},
			verdict: VerdictAccept, id: "GB1", pc: "SW1A 2AA",
		},
		{
			name: "uk flat", q: Query{Lines: []string{"Flat 2b", "11 Downing Street"}, City: "London"},
			verdict: VerdictAccept, level: LevelSubBuilding, id: "GB2",
		},
		{
			name: "postcode changed", q: Query{Lines: []string{"10 Downing Street", "London", "SW1A 2AB"}},
			verdict: VerdictSuggest, id: "GB1", pc: "SW1A 2AA",
			check: func(t *testing.T, m Match) {
				if m.Details.Postcode != ChangeChanged || !m.PostcodeAmended {
					t.Errorf("postcode details %q %v", m.Details.Postcode, m.PostcodeAmended)
				}
			},
		},
		{
			name: "town only", q: Query{Lines: []string{"Somewhere unknown"}, City: "Tullamore"},
			verdict: VerdictConfirm, level: LevelLocality, city: "Tullamore", region: "Offaly",
			lines: []string{"Somewhere unknown"},
			check: func(t *testing.T, m Match) {
				if m.Location == nil {
					t.Error("no locality location")
				}
			},
		},
		{
			name: "county only", q: Query{Lines: []string{"Nowhere House"}, Region: "Co. Clare"},
			verdict: VerdictConfirm, level: LevelRegion, region: "Clare",
		},
		{
			name: "foreign", q: Query{Lines: []string{"12 Rue des Lilas", "Lyon", "69003"}, Country: "FR"},
			verdict: VerdictConfirm, level: LevelNone, lines: []string{"12 Rue des Lilas", "Lyon", "69003"},
		},
		{
			name: "nothing", q: Query{},
			verdict: VerdictConfirm, level: LevelNone,
		},
		{
			name: "contact line is set aside", q: Query{Lines: []string{"c/o Jane Doe", "12 Main Street", "Ennis", "V95 X2Y3"}},
			verdict: VerdictAccept, id: "IE1", lines: []string{"12 Main Street"},
			check: func(t *testing.T, m Match) {
				if m.Details.Organization != ChangeIgnored || m.UnusedInput || !m.Tidied || m.AddressLinesAmended {
					t.Errorf("%+v", m)
				}
			},
		},
		{
			name: "FAO line is set aside", q: Query{Lines: []string{"FAO Accounts Dept", "12 Main Street", "V95 X2Y3"}, City: "Ennis"},
			verdict: VerdictAccept, id: "IE1",
		},
		{
			name: "ATTN: line is set aside", q: Query{Lines: []string{"ATTN: J. Doe", "12 Main Street", "V95 X2Y3"}, City: "Ennis"},
			verdict: VerdictAccept, id: "IE1",
		},
		{
			name: "for the attention of, then the address in the same line", q: Query{Lines: []string{"For the attention of Jane Doe 12 Main Street", "V95 X2Y3"}, City: "Ennis"},
			verdict: VerdictAccept, id: "IE1",
		},
		{
			name: "care of", q: Query{Lines: []string{"Care of Jane Doe", "12 Main Street", "V95 X2Y3"}, City: "Ennis"},
			verdict: VerdictAccept, id: "IE1",
		},
		{
			name: "other unexplained line is a real change", q: Query{Lines: []string{"Ring bell twice", "12 Main Street", "Ennis", "V95 X2Y3"}},
			verdict: VerdictSuggest, id: "IE1",
			check: func(t *testing.T, m Match) {
				if !m.UnusedInput || m.Details.Organization != ChangeNone {
					t.Errorf("%+v", m)
				}
			},
		},
		{
			name: "town typo", q: Query{Lines: []string{"Rose Cottage", "Ballyard"}, City: "Tullamor"},
			verdict: VerdictSuggest, id: "IE6", city: "Tullamore",
			check: func(t *testing.T, m Match) {
				if m.Details.City != ChangeChanged || !m.CityAmended {
					t.Errorf("city %q %v", m.Details.City, m.CityAmended)
				}
			},
		},
		{
			name: "town typo in a line", q: Query{Lines: []string{"Rose Cottage", "Ballyard", "Tullamroe"}},
			verdict: VerdictSuggest, id: "IE6", city: "Tullamore",
		},
		{
			name: "county typo", q: Query{Lines: []string{"Nowhere House"}, Region: "Co. Ofaly"},
			verdict: VerdictConfirm, level: LevelRegion, region: "Offaly",
		},
		{
			name: "country in a line", q: Query{Lines: []string{"1 High Street", "Belfast", "Northern Ireland", "BT1 1AA"}},
			verdict: VerdictAccept, id: "GB3",
			check: func(t *testing.T, m Match) {
				if m.Location != nil {
					t.Errorf("location without coordinates: %v", m.Location)
				}
			},
		},
		{
			name: "wrong county", q: Query{Lines: []string{"12 Main Street", "Ennis", "Co. Kerry", "V95 X2Y3"}},
			verdict: VerdictSuggest, id: "IE1", region: "Clare",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := ix.Match(tc.q)
			if m.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s (%+v)", m.Verdict, tc.verdict, m)
			}
			if tc.level != "" && m.Level != tc.level {
				t.Errorf("level %s, want %s", m.Level, tc.level)
			}
			switch {
			case tc.id == "" && m.Record != nil && m.Verdict == VerdictConfirm:
				t.Errorf("Confirm with a record %s", m.Record.ID)
			case tc.id != "" && (m.Record == nil || m.Record.ID != tc.id):
				t.Errorf("record %v, want %s", m.Record, tc.id)
			}
			if tc.lines != nil && strings.Join(m.Lines, "|") != strings.Join(tc.lines, "|") {
				t.Errorf("lines %q, want %q", m.Lines, tc.lines)
			}
			if tc.city != "" && m.City != tc.city {
				t.Errorf("city %q, want %q", m.City, tc.city)
			}
			if tc.region != "" && m.Region != tc.region {
				t.Errorf("region %q, want %q", m.Region, tc.region)
			}
			if tc.pc != "" && m.Postcode != tc.pc {
				t.Errorf("postcode %q, want %q", m.Postcode, tc.pc)
			}
			if m.Score < 0 || m.Score > 1 || m.RunnerUp > m.Score {
				t.Errorf("scores %v %v", m.Score, m.RunnerUp)
			}
			if tc.check != nil {
				tc.check(t, m)
			}
		})
	}
}

// TestMatchConcurrent runs Match from many goroutines (meant for -race) and
// checks every answer equals the sequential one.
func TestMatchConcurrent(t *testing.T) {
	ix := loadSmall(t)
	qs := []Query{
		{Lines: []string{"12 Main Street", "Ennis"}},
		{Lines: []string{"Apt 1", "3 Quay Rd", "Dublin 2"}},
		{Lines: []string{"10 Downing St", "London"}},
		{Lines: []string{"Rose Cottage", "Tullamore"}},
	}
	want := make([]string, len(qs))
	for i, q := range qs {
		want[i] = describe(ix.Match(q))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				j := (g + i) % len(qs)
				if got := describe(ix.Match(qs[j])); got != want[j] {
					t.Errorf("concurrent Match(%v) = %s, want %s", qs[j], got, want[j])
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestMatchHugeInput checks that a very long input costs little: one huge
// word (no typo search) and very many words (only the first are used).
func TestMatchHugeInput(t *testing.T) {
	ix := loadSmall(t)
	long := strings.Repeat("abcdefghij", 10000)
	many := strings.Repeat("lorem ipsum 12 ", 5000)
	for _, q := range []Query{{Lines: []string{long}}, {Lines: []string{many, "Ennis"}}} {
		m := ix.Match(q)
		if m.Verdict == VerdictAccept {
			t.Errorf("accepted %.40q...", q.Lines[0])
		}
	}
}

// describe prints a Match with its pointers followed.
func describe(m Match) string {
	id, loc := "", ""
	if m.Record != nil {
		id = m.Record.ID
	}
	if m.Location != nil {
		loc = fmt.Sprint(*m.Location)
	}
	m.Record, m.Location = nil, nil
	return fmt.Sprintf("%s %s %+v", id, loc, m)
}

// FuzzMatch sends arbitrary lines to Match: it must not panic, and what it
// returns must hold together.
func FuzzMatch(f *testing.F) {
	ix := loadSmall(f)
	for _, s := range []string{"12 Main St|Ennis|V95 X2Y3", "Flat 2b|11 Downing Street", "d2", "c/o|,,,|\n\n", "Dublin 6W|D6W 1234", "PO Box|12-14|12/14", "14Elm Terrace|Room 4, Block 1 Hall|1AMain St", "Unit 4 Business Park|12 Main", "Inis|Contae an Chláir"} {
		f.Add(s, "Ennis", "Clare", "IE")
	}
	f.Fuzz(func(t *testing.T, lines, city, region, country string) {
		q := Query{Lines: strings.Split(lines, "|"), City: city, Region: region, Country: country}
		m := ix.Match(q)
		switch m.Verdict {
		case VerdictAccept, VerdictSuggest:
			if m.Record == nil {
				t.Fatalf("%s without a record", m.Verdict)
			}
		case VerdictConfirm:
		default:
			t.Fatalf("verdict %q", m.Verdict)
		}
		if m.Score < 0 || m.Score > 1 {
			t.Fatalf("score %v", m.Score)
		}
	})
}

// TestAmendedFollowsDetails holds the amended flags to the details: an
// element is amended exactly when its details are Changed or Added.
func TestAmendedFollowsDetails(t *testing.T) {
	ix := loadSmall(t)
	for _, q := range []Query{
		{Lines: []string{"12 Main Street", "V95 X2Y3"}, City: "Ennis", Region: "Clare", Country: "IE"},
		{Lines: []string{"12 MAIN ST.", "ennis", "co clare", "v95x2y3"}},
		{Lines: []string{"12 Main Street"}, City: "ENNIS", Region: "Co. Clare", Country: "IE"},
		{Lines: []string{"14 Main Street"}, City: "Ennis", Country: "IE"},
		{Lines: []string{"12 Mian Street", "Ennis"}, Country: "IE"},
		{Lines: []string{"12 Main Street", "V95 X2Y4"}, City: "Ennis", Region: "Co. Cork", Country: "IE"},
		{Lines: []string{"99 Main Street"}, City: "Ennis"},
		{Lines: []string{"Atlantis"}, City: "Nowhere", Region: "Sligo", Country: "IE"},
	} {
		m := ix.Match(q)
		d := m.Details
		for _, f := range []struct {
			name string
			flag bool
			c    Change
		}{{"addressLines", m.AddressLinesAmended, d.AddressLines}, {"city", m.CityAmended, d.City},
			{"region", m.RegionAmended, d.Region}, {"postcode", m.PostcodeAmended, d.Postcode}} {
			if want := f.c == ChangeChanged || f.c == ChangeAdded; f.flag != want {
				t.Errorf("%+v: %s amended %v but details %s", q, f.name, f.flag, f.c)
			}
		}
	}
}

// TestStreetTypes: a street type left out or given wrong still finds the
// street when the town has one street of that name, as a Suggest; when
// the town has the street the input names, a sibling of another type
// does not make it doubtful; and when two streets differ from the input
// only in type, neither is chosen.
func TestStreetTypes(t *testing.T) {
	csv := "id,building_number,street,city,region,postcode,country\n" +
		"A13,13,Parkside View,London,Greater London,N1 1AA,GB\n" +
		"B13,13,Parkside Lane,London,Greater London,N1 2BB,GB\n" +
		"C13,13,Kickham Lane,London,Greater London,N1 3DD,GB\n" +
		"D4,4,Chestnut Park,London,Greater London,N1 4EE,GB\n" +
		"E4,4,Chestnut Road,London,Greater London,N1 5FF,GB\n"
	// Many streets of each type make the types common words and the
	// names rare ones, as in a large reference.
	for i := 0; i < 400; i++ {
		csv += fmt.Sprintf("F%d,%d,Filler%c%c %s,London,Greater London,N1 6GG,GB\n", i, i+1, 'a'+i%26, 'a'+i/26,
			[]string{"Lane", "View", "Road", "Park", "Avenue"}[i%5])
	}
	ix, err := Load(t.Context(), strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		lines   []string
		id      string
		verdict Verdict
	}{
		{[]string{"13 Parkside View", "N1 2BB"}, "A13", VerdictSuggest}, // the Lane's postcode; the Lane is no rival
		{[]string{"13 Parkside View"}, "A13", VerdictAccept},
		{[]string{"13 Kickham Road"}, "C13", VerdictSuggest},
		{[]string{"13 Kickham"}, "C13", VerdictSuggest},
		{[]string{"4 Chestnut"}, "", VerdictConfirm},
		{[]string{"4 Chestnut Avenue"}, "", VerdictConfirm},
	} {
		m := ix.Match(Query{Lines: tc.lines, City: "London", Country: "GB"})
		id := ""
		if m.Record != nil {
			id = m.Record.ID
		}
		if id != tc.id || m.Verdict != tc.verdict {
			t.Errorf("%q: %s %q (%.2f/%.2f), want %s %q", tc.lines, m.Verdict, id, m.Score, m.RunnerUp, tc.verdict, tc.id)
		}
	}
}

// TestFlatsByLetterAndFloor: flats PAF names by a letter or a floor, and
// an organisation given without its department, are found as written.
func TestFlatsByLetterAndFloor(t *testing.T) {
	csv := "id,organisation,department,sub_building,building_name,building_number,street,city,postcode,country\n" +
		"1,,,Flat A,,12,Main Street,Leeds,LS1 1AA,GB\n" +
		"2,,,Flat B,,12,Main Street,Leeds,LS1 1AA,GB\n" +
		"3,,,Ground Floor Flat,,14,Main Street,Leeds,LS1 1AA,GB\n" +
		"4,,,First Floor Flat,,14,Main Street,Leeds,LS1 1AA,GB\n" +
		"5,Acme Ltd,Accounts,,,16,Main Street,Leeds,LS1 1AA,GB\n" +
		"6,,,Basement,,18,Main Street,Leeds,LS1 1AA,GB\n" +
		"7,,,Top Floor,,18,Main Street,Leeds,LS1 1AA,GB\n" +
		"8,,,Flat 4,Riverside House,11,Hanover Way,Leeds,LS1 1AB,GB\n" +
		"9,,,Flat 11,Riverside House,11,Hanover Way,Leeds,LS1 1AB,GB\n"
	ix, err := Load(t.Context(), strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		lines   []string
		id      string
		verdict Verdict
	}{
		{[]string{"Flat A", "12 Main Street"}, "1", VerdictAccept},
		{[]string{"Flat B, 12 Main St"}, "2", VerdictAccept},
		// Issue 24: the flat abbreviated, or run into its letter.
		{[]string{"FlatA", "12 Main Street"}, "1", VerdictAccept},
		{[]string{"Flt. B, 12 Main St"}, "2", VerdictAccept},
		{[]string{"Apt B 12 Main Street"}, "2", VerdictAccept},
		// Two bare numbers: the flat is written first.
		{[]string{"No. 4", "Riverside House", "11 Hanover Way"}, "8", VerdictAccept},
		{[]string{"No 11 Riverside House 11 Hanover Way"}, "9", VerdictAccept},
		{[]string{"Rm4, Riverside House, 11 Hanover Way"}, "8", VerdictAccept},
		{[]string{"Ground Floor Flat", "14 Main Street"}, "3", VerdictAccept},
		{[]string{"First Floor Flat, 14 Main Street"}, "4", VerdictAccept},
		{[]string{"Basement", "18 Main Street"}, "6", VerdictAccept},
		{[]string{"Acme Ltd", "16 Main Street"}, "5", VerdictAccept},
		{[]string{"Acme Ltd", "Accounts", "16 Main Street"}, "5", VerdictAccept},
		{[]string{"Acme Ltd", "Payroll", "16 Main Street"}, "5", VerdictSuggest}, // a word unexplained
		{[]string{"Flat C", "12 Main Street"}, "", VerdictConfirm},
		{[]string{"Second Floor Flat", "14 Main Street"}, "", VerdictConfirm},
	} {
		m := ix.Match(Query{Lines: tc.lines, City: "Leeds", Country: "GB"})
		id := ""
		if m.Record != nil {
			id = m.Record.ID
		}
		if id != tc.id || m.Verdict != tc.verdict {
			t.Errorf("%q: %s %q (%.2f/%.2f) %+v, want %s %q", tc.lines, m.Verdict, id, m.Score, m.RunnerUp, m.Details, tc.verdict, tc.id)
		}
	}
}
