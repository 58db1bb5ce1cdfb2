package gazetteer_test

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"

	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/sample_data/synth"
)

// familyCategories are the cases of issue 24: the families of real
// writing the matcher once missed, each from synth's own ops over recs,
// every record of the index (so that "the street has no such number" and
// "the building holds other flats" are facts of the reference). The
// floors are set a little under what the matcher reaches; the figures
// before issue 24 are in BENCHMARKS.md.
func familyCategories(recs []gazetteer.Record) []evalCategory {
	p := synth.NewPerturber(24, recs)
	rng := rand.New(rand.NewPCG(24, 1))
	// draw makes n cases of records of pool with all of ops and any of
	// some (at least one of them, each drawn with even odds); dropPC 1
	// leaves every postcode out, 2 half of them.
	draw := func(pool []gazetteer.Record, n, dropPC int, ops, some []synth.Op) []synth.Case {
		var cs []synth.Case
		for try := 0; len(cs) < n && try < 50*n; try++ {
			o := slices.Clone(ops)
			for len(some) > 0 && len(o) == len(ops) {
				for _, op := range some {
					if rng.IntN(2) == 0 {
						o = append(o, op)
					}
				}
			}
			if dropPC == 1 || dropPC == 2 && rng.IntN(2) == 0 {
				o = append(o, synth.OpDropPC)
			}
			c := p.Mess(&pool[rng.IntN(len(pool))], o...)
			ok := true
			for _, op := range o {
				ok = ok && (op == synth.OpDropPC || slices.Contains(c.Ops, op))
			}
			if ok {
				cs = append(cs, c)
			}
		}
		return cs
	}
	filter := func(f func(*gazetteer.Record) bool) []gazetteer.Record {
		var out []gazetteer.Record
		for i := range recs {
			if f(&recs[i]) && recs[i].Type != gazetteer.POBox {
				out = append(out, recs[i])
			}
		}
		return out
	}
	ie := filter(func(r *gazetteer.Record) bool { return r.Country == "IE" })
	uk := filter(func(r *gazetteer.Record) bool { return r.Country != "IE" })
	all := filter(func(r *gazetteer.Record) bool { return true })
	saints := filter(func(r *gazetteer.Record) bool {
		return strings.Contains(r.Street, "St. ") || strings.HasPrefix(r.City, "St ")
	})
	unit := regexp.MustCompile(`^(Room|Flat|Apartment) [0-9]`)
	flats := filter(func(r *gazetteer.Record) bool { return unit.MatchString(r.SubBuilding) })
	noise := []synth.Op{synth.OpEstateLine, synth.OpSuiteLine, synth.OpPhone, synth.OpNoise}
	return []evalCategory{
		{"24: Eircode, house number disagrees", draw(ie, 300, 0, []synth.Op{synth.OpPostcodeNumber}, nil), 0.99},
		{"24: UK postcode, house number disagrees", draw(uk, 300, 0, []synth.Op{synth.OpPostcodeNumber}, nil), 0.88},
		{"24: estate or business park line", draw(all, 300, 2, []synth.Op{synth.OpEstateLine}, nil), 0.99},
		{"24: unit or suite line", draw(all, 300, 2, []synth.Op{synth.OpSuiteLine}, nil), 0.99},
		{"24: phone number line", draw(all, 300, 2, []synth.Op{synth.OpPhone}, nil), 0.99},
		{"24: several noise lines", draw(all, 300, 2, nil, noise), 0.99},
		{"24: Saint as St/St./Saint, no postcode", draw(saints, 300, 1, []synth.Op{synth.OpSaintSpell}, nil), 0.99},
		{"24: Saint as S., no postcode", draw(saints, 300, 1, []synth.Op{synth.OpSaintInitial}, nil), 0.99},
		{"24: Rm/Flt/Apt/No./Flat4 in a building of several", draw(flats, 300, 2, []synth.Op{synth.OpSubAbbrev}, nil), 0.99},
	}
}
