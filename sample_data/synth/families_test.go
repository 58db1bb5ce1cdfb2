package synth

import (
	"slices"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/gazetteer"
)

// TestFamilyOps holds the ops of issue 24 to what they promise on records
// made by hand: what they change, when they refuse, and the verdict a
// correct matcher gives.
func TestFamilyOps(t *testing.T) {
	rec := func(id, sub, bname, num, street, city, pc, country string) gazetteer.Record {
		return gazetteer.Record{ID: id, SubBuilding: sub, BuildingName: bname, BuildingNumber: num,
			Street: street, City: city, Postcode: pc, Country: country}
	}
	recs := []gazetteer.Record{
		rec("IE1", "", "", "12", "Main Street", "Ennis", "V95 X2Y3", "IE"),
		rec("IE2", "", "", "14", "Main Street", "Ennis", "V95 X2Y4", "IE"),
		rec("IE3", "", "", "3", "Mill Road", "Ennis", "V95 X2Y5", "IE"),
		rec("IE4", "", "", "5", "Mill Road", "Ennis", "V95 X2Y5", "IE"), // a shared Eircode
		rec("GB1", "", "", "12", "Main Street", "Leeds", "LS1 1AA", "GB"),
		rec("GB2", "", "", "14", "Main Street", "Leeds", "LS1 1AA", "GB"),
		rec("GB3", "Room 4", "Block 1 Lakeside", "", "Strand Grove", "Leeds", "LS2 1AA", "GB"),
		rec("GB4", "Room 5", "Block 1 Lakeside", "", "Strand Grove", "Leeds", "LS2 1AA", "GB"),
		rec("GB5", "Flat 2", "", "9", "Canal Street", "Leeds", "LS3 1AA", "GB"), // the only flat
		rec("JE1", "", "", "7", "St. Patrick's Road", "St Helier", "JE2 1AA", "JE"),
	}
	p := NewPerturber(3, recs)
	byID := func(id string) *gazetteer.Record {
		i := slices.IndexFunc(recs, func(r gazetteer.Record) bool { return r.ID == id })
		return &recs[i]
	}
	for range 20 { // the ops draw at random: hold every draw
		for _, tc := range []struct {
			id    string
			op    Op
			apply bool
			want  gazetteer.Verdict
			check func(in Input) bool
		}{
			{"IE1", OpPostcodeNumber, true, gazetteer.VerdictSuggest, func(in Input) bool {
				n, _, _ := strings.Cut(in.Lines[0], " ")
				return in.Postcode == "V95 X2Y3" && n != "12" && n != "14" && strings.HasSuffix(in.Lines[0], " Main Street")
			}},
			{"IE3", OpPostcodeNumber, false, gazetteer.VerdictAccept, nil},
			{"GB1", OpPostcodeNumber, true, gazetteer.VerdictSuggest, func(in Input) bool {
				n, _, _ := strings.Cut(in.Lines[0], " ")
				// 13 would be as close to 14 as to 12.
				return in.Postcode == "LS1 1AA" && n != "12" && n != "13" && n != "14"
			}},
			{"GB3", OpSubAbbrev, true, gazetteer.VerdictAccept, func(in Input) bool {
				l := strings.Join(in.Lines, "|")
				return !strings.Contains(l, "Room 4") && strings.Contains(l, "4") && strings.Contains(l, "Lakeside")
			}},
			{"GB5", OpSubAbbrev, false, gazetteer.VerdictAccept, nil},
			{"JE1", OpSaintInitial, true, gazetteer.VerdictSuggest, func(in Input) bool {
				return in.City == "S. Helier" && slices.Contains(in.Lines, "7 S. Patrick's Road")
			}},
			{"JE1", OpSaintSpell, true, gazetteer.VerdictAccept, func(in Input) bool {
				return strings.HasSuffix(in.City, " Helier") && !strings.Contains(strings.Join(in.Lines, ""), "S. ")
			}},
			{"IE1", OpPhone, true, gazetteer.VerdictSuggest, func(in Input) bool { return len(in.Lines) == 2 }},
			{"IE1", OpEstateLine, true, gazetteer.VerdictSuggest, func(in Input) bool { return len(in.Lines) == 2 }},
			{"IE1", OpSuiteLine, true, gazetteer.VerdictSuggest, func(in Input) bool { return len(in.Lines) == 2 }},
			{"GB5", OpSuiteLine, false, gazetteer.VerdictAccept, nil},
		} {
			r := byID(tc.id)
			c := p.Mess(r, tc.op)
			if got := slices.Contains(c.Ops, tc.op); got != tc.apply {
				t.Fatalf("%s on %s applied %v, want %v: %+v", tc.op, tc.id, got, tc.apply, c.Input)
			}
			if c.Expect != tc.want {
				t.Errorf("%s on %s expects %s, want %s", tc.op, tc.id, c.Expect, tc.want)
			}
			if tc.check != nil && !tc.check(c.Input) {
				t.Errorf("%s on %s gave %+v", tc.op, tc.id, c.Input)
			}
		}
	}
}
