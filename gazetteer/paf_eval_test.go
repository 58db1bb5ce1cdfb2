package gazetteer_test

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/refimport"
	"github.com/addrclean/addrclean/sample_data/synth"
)

// pafRecords are the records of the PAF-style sample of refimport, as
// its converter writes them and Load reads them.
func pafRecords(t testing.TB) []gazetteer.Record {
	t.Helper()
	f, err := os.Open("../refimport/testdata/paf.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	if _, err := refimport.PAF(context.Background(), f, &out); err != nil {
		t.Fatal(err)
	}
	return loadRecords(t, &out)
}

// loadRecords returns the records of a reference CSV as Load reads them.
func loadRecords(t testing.TB, r io.Reader) []gazetteer.Record {
	t.Helper()
	ix, err := gazetteer.Load(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	var recs []gazetteer.Record
	ix.Records(func(r *gazetteer.Record) bool {
		recs = append(recs, *r)
		return true
	})
	return recs
}

// pafCounties are the counties of the post towns of the PAF-style sample.
var pafCounties = map[string]string{
	"Coventry": "West Midlands", "Leeds": "West Yorkshire", "Newcastle upon Tyne": "Tyne and Wear",
	"Stratford-upon-Avon": "Warwickshire", "Warwick": "Warwickshire", "Edinburgh": "Midlothian",
	"Aberdeen": "Aberdeenshire", "Llandudno": "Gwynedd", "Colwyn Bay": "Clwyd", "Belfast": "County Antrim",
}

// pafCases are inputs written from the PAF-style records the way people
// write them: as printed, without the postcode, in other case with the
// country as "United Kingdom" or "Channel Islands", with the number
// glued to the street, with the county PAF lacks, the organisation
// without its department, and with random mess.
func pafCases(rng *rand.Rand, recs []gazetteer.Record) []synth.Case {
	p := synth.NewPerturber(rng.Uint64(), recs)
	var cs []synth.Case
	for i := range recs {
		r := &recs[i]
		cs = append(cs, p.Mess(r), p.Mess(r, synth.OpDropPC), p.Mess(r, synth.OpCase, synth.OpCrownCountry), p.Random(r), p.Random(r))
		if c := p.Mess(r, synth.OpGlueNumber); len(c.Ops) > 0 {
			cs = append(cs, c)
		}
		if county, ok := pafCounties[r.City]; ok {
			// The county the reference (PAF) lacks, in its own cell or
			// as a line: kept as written.
			c := p.Mess(r)
			if rng.IntN(2) == 0 {
				c.Input.Region = county
			} else {
				c.Input.Lines = append(slices.Clone(c.Input.Lines), county)
			}
			cs = append(cs, c)
		}
		if r.Department != "" && !slices.ContainsFunc(recs, func(o gazetteer.Record) bool {
			return o.ID != r.ID && o.Organisation == r.Organisation && o.BuildingNumber == r.BuildingNumber && o.Street == r.Street
		}) {
			// The organisation without its department, where it has one
			// department only: the same addressee, as written.
			c := p.Mess(r)
			c.Input.Lines = slices.DeleteFunc(slices.Clone(c.Input.Lines), func(l string) bool { return l == r.Department })
			cs = append(cs, c)
		}
	}
	return cs
}
