package synth

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/countries"
	"github.com/addrclean/addrclean/gazetteer"
)

func generate(seed uint64, n int) []gazetteer.Record {
	return slices.Collect(Generate(seed, n))
}

func TestGenerateDeterministicAndLoadable(t *testing.T) {
	a, b := generate(1, 3000), generate(1, 3000)
	if !slices.Equal(a, b) {
		t.Fatal("same seed, different records")
	}
	if len(a) != 3000 {
		t.Fatalf("%d records", len(a))
	}
	var sb strings.Builder
	if err := gazetteer.WriteCSVColumns(&sb, gazetteer.Columns, slices.Values(a)); err != nil {
		t.Fatal(err)
	}
	ix, err := gazetteer.Load(context.Background(), strings.NewReader(sb.String()))
	if err != nil {
		t.Fatal(err)
	}
	if ix.Len() != 3000 {
		t.Fatalf("loaded %d", ix.Len())
	}
}

// TestSampleCoverage checks the sample reference covers what the issue asks:
// all 26 counties, Dublin postal districts, the four UK nations, PO Boxes.
func TestSampleCoverage(t *testing.T) {
	recs := generate(SampleSeed, 6000)
	regions := map[string]bool{}
	types := map[gazetteer.AddressType]int{}
	districts, eircodes, uk := 0, map[string]bool{}, map[string]bool{}
	for _, r := range recs {
		regions[r.Region] = true
		types[r.Type]++
		if strings.HasPrefix(r.City, "Dublin ") {
			districts++
		}
		if r.Country == "IE" && r.Type != gazetteer.POBox {
			if eircodes[r.Postcode] {
				t.Errorf("Eircode %s used twice", r.Postcode)
			}
			eircodes[r.Postcode] = true
		}
		if r.Country == "GB" {
			uk[r.Postcode[:2]] = true
		}
	}
	for _, c := range []string{"Carlow", "Cavan", "Clare", "Cork", "Donegal", "Dublin", "Galway", "Kerry",
		"Kildare", "Kilkenny", "Laois", "Leitrim", "Limerick", "Longford", "Louth", "Mayo", "Meath",
		"Monaghan", "Offaly", "Roscommon", "Sligo", "Tipperary", "Waterford", "Westmeath", "Wexford", "Wicklow",
		"Greater London", "City of Edinburgh", "Cardiff", "Antrim"} {
		if !regions[c] {
			t.Errorf("no address in %s", c)
		}
	}
	if districts < 100 || types[gazetteer.POBox] < 10 || types[gazetteer.Commercial] < 50 || !uk["BT"] {
		t.Errorf("districts %d, types %v, uk %v", districts, types, uk)
	}
}

func TestPerturbExpectations(t *testing.T) {
	recs := generate(3, 2000)
	p := NewPerturber(1, recs)
	var street *gazetteer.Record
	for i := range recs {
		if recs[i].Country == "IE" && recs[i].BuildingNumber != "" && recs[i].SubBuilding == "" && len(recs[i].Street) > 12 {
			street = &recs[i]
			break
		}
	}
	if street == nil {
		t.Fatal("no plain street address generated")
	}
	for _, tc := range []struct {
		ops  []Op
		want gazetteer.Verdict
	}{
		{nil, gazetteer.VerdictAccept},
		{[]Op{OpCase, OpAbbrev, OpSpacing}, gazetteer.VerdictAccept},
		{[]Op{OpDropPC, OpDropCounty}, gazetteer.VerdictAccept},
		{[]Op{OpDropPC, OpDropTown}, gazetteer.VerdictSuggest},
		{[]Op{OpWrongCounty}, gazetteer.VerdictSuggest},
		{[]Op{OpNoise, OpCase}, gazetteer.VerdictAccept}, // a contact line is set aside
		{[]Op{OpNote, OpCase}, gazetteer.VerdictSuggest},
		{[]Op{OpDropNumber}, gazetteer.VerdictSuggest}, // the Eircode still names the house
		{[]Op{OpDropNumber, OpDropPC}, gazetteer.VerdictConfirm},
	} {
		c := p.Mess(street, tc.ops...)
		if c.Expect != tc.want || c.TrueID != street.ID {
			t.Errorf("Mess(%v) expects %s (ops %v), want %s", tc.ops, c.Expect, c.Ops, tc.want)
		}
		in := c.Input
		if iso, _ := countries.ISO(in.Country); iso != "IE" || strings.TrimSpace(strings.Join(in.Lines, "")+in.Postcode) == "" {
			t.Errorf("input %+v", in)
		}
	}
	c := p.Mess(street, OpTypo)
	if len(c.Ops) == 1 && strings.Join(c.Input.Lines, " ") == strings.Join(street.Lines(), " ") {
		t.Errorf("typo changed nothing: %+v", c.Input)
	}
}
