package synth

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/addrclean/addrclean/gazetteer"
)

// The kinds of mess of issue 24: ways people really write addresses that
// the matcher once missed. Like OpExtraSub they are only asked for by name,
// so that Random and the sample data stay as they were. They are written
// here from the records' fields and plain string edits, never through the
// matcher's normaliser, so that a mistake there cannot hide in both.
const (
	// OpPostcodeNumber writes a house number close to the record's ("71"
	// for "17", "15" for "17") that the street does not have, keeping a
	// postcode that names the building: an Eircode, which is unique, or a
	// UK postcode in which no other property of the street has a number
	// close to the one written (real: the number is corrected).
	OpPostcodeNumber Op = "postcode-number"
	// OpEstateLine adds the name of a business park or estate the
	// reference does not hold ("Kestrel Business Park") (real: dropped).
	OpEstateLine Op = "estate-line"
	// OpSuiteLine adds a unit or suite line ("Suite 4", "Unit 12B") to an
	// address without sub-buildings (real: dropped).
	OpSuiteLine Op = "suite-line"
	// OpPhone adds a telephone number line ("Tel: 087 123 4567") (real:
	// dropped).
	OpPhone Op = "phone"
	// OpSaintSpell writes each Saint of the street and town as "St",
	// "St." or "Saint", drawn anew for each (cosmetic).
	OpSaintSpell Op = "saint-spell"
	// OpSaintInitial writes each Saint as "S." ("S. Helier"), which may
	// also read as South (real: the spelling is corrected).
	OpSaintInitial Op = "saint-initial"
	// OpSubAbbrev writes the flat, apartment or room of a building of
	// several as people abbreviate it: "Rm 4", "Flt. 2", "Apt4", "No. 3",
	// "Flat4" (cosmetic).
	OpSubAbbrev Op = "sub-abbrev"
)

// familyOrder is where the ops of issue 24 run in Mess: after the
// structural ops, before spelling and case.
var familyOrder = []Op{OpPostcodeNumber, OpSubAbbrev, OpSaintSpell, OpSaintInitial, OpEstateLine, OpSuiteLine, OpPhone}

func (p *Perturber) applyFamily(in *Input, r *gazetteer.Record, op Op) bool {
	switch op {
	case OpPostcodeNumber:
		return p.postcodeNumber(in, r)
	case OpEstateLine:
		name := fmt.Sprintf("%s %s", estateNames[p.rng.IntN(len(estateNames))],
			[]string{"Business Park", "Industrial Estate", "Enterprise Park", "Technology Park", "Trading Estate", "Retail Park"}[p.rng.IntN(6)])
		in.Lines = insertLine(in.Lines, name, p.rng.IntN(len(in.Lines)+1))
	case OpSuiteLine:
		if r.SubBuilding != "" || r.Type == gazetteer.POBox || r.BuildingNumber == "" {
			return false
		}
		for _, o := range p.byCity[r.City] {
			if o.SubBuilding != "" && o.Street == r.Street && o.BuildingNumber == r.BuildingNumber {
				return false // the unit might exist after all
			}
		}
		n := fmt.Sprint(1 + p.rng.IntN(40))
		if p.rng.IntN(4) == 0 {
			n += "B"
		}
		line := []string{"Suite ", "Unit ", "Suite No. ", "Unit "}[p.rng.IntN(4)] + n
		in.Lines = insertLine(in.Lines, line, p.rng.IntN(2)*len(in.Lines))
	case OpPhone:
		var line string
		if r.Country == "IE" {
			line = fmt.Sprintf([]string{"Tel: 0%d %d %04d", "Ph 0%d-%d%04d", "+353 %d %d %04d", "Mob. 0%d %d %04d"}[p.rng.IntN(4)],
				[]int{1, 21, 61, 87, 86, 85}[p.rng.IntN(6)], 100+p.rng.IntN(900), p.rng.IntN(10000))
		} else {
			line = fmt.Sprintf([]string{"Tel: 0%d %d %04d", "Tel. 0%d%d %04d", "+44 %d %d %04d", "Phone: 0%d %d%04d"}[p.rng.IntN(4)],
				[]int{20, 121, 113, 131, 7700, 1632}[p.rng.IntN(6)], 100+p.rng.IntN(900), p.rng.IntN(10000))
		}
		in.Lines = insertLine(in.Lines, line, len(in.Lines)-p.rng.IntN(2)*len(in.Lines))
	case OpSaintSpell, OpSaintInitial:
		spell := func(was string) string {
			if op == OpSaintInitial {
				return "S."
			}
			// Another spelling than the one written, so the op changes
			// what it touches.
			for {
				if s := []string{"St", "St.", "Saint"}[p.rng.IntN(3)]; s != was {
					return s
				}
			}
		}
		changed := false
		for i, l := range in.Lines {
			if n := respellSaint(l, spell); n != l {
				in.Lines[i], changed = n, true
			}
		}
		if n := respellSaint(in.City, spell); n != in.City {
			in.City, changed = n, true
		}
		return changed
	case OpSubAbbrev:
		return p.subAbbrev(in, r)
	}
	return true
}

// estateNames name business parks and estates; none is a street, town or
// building name of the generated reference.
var estateNames = []string{"Kestrel", "Ravensworth", "Northgate", "Goldcrest", "Aspen", "Bluebell",
	"Cobalt", "Harrier", "Fernbank", "Quarry Lane", "Weavers", "Tannery", "Gasworks", "Ropewalk"}

// insertLine returns lines with l inserted at i, leaving lines unchanged.
func insertLine(lines []string, l string, i int) []string {
	out := make([]string, 0, len(lines)+1)
	out = append(out, lines[:i]...)
	out = append(out, l)
	return append(out, lines[i:]...)
}

// respellSaint writes every "St.", "St" or "Saint" of s followed by a
// capitalised name as spell(the word written).
func respellSaint(s string, spell func(string) string) string {
	words := strings.Split(s, " ")
	changed := false
	for i := 0; i+1 < len(words); i++ {
		w, next := words[i], words[i+1]
		if (w == "St." || w == "St" || w == "Saint") && next != "" && next[0] >= 'A' && next[0] <= 'Z' {
			words[i], changed = spell(w), true
		}
	}
	if !changed {
		return s
	}
	return strings.Join(words, " ")
}

// closeNumbers returns house numbers a person might write for n: its
// digits swapped, one more or less, two more or less, a digit dropped or
// doubled.
func closeNumbers(n int) []int {
	s := strconv.Itoa(n)
	var out []int
	add := func(m int) {
		if m > 0 && m != n && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	if len(s) == 2 && s[0] != s[1] && s[1] != '0' {
		add(int(s[1]-'0')*10 + int(s[0]-'0'))
	}
	add(n + 1)
	add(n - 1)
	add(n + 2)
	add(n - 2)
	if len(s) >= 2 {
		m, _ := strconv.Atoi(s[1:])
		add(m)
	}
	m, _ := strconv.Atoi(s + s[len(s)-1:])
	add(m)
	return out
}

// near reports whether a house number written as w may stand for n.
func near(w, n int) bool {
	return slices.Contains(closeNumbers(n), w) || w == n
}

func (p *Perturber) postcodeNumber(in *Input, r *gazetteer.Record) bool {
	num, err := strconv.Atoi(r.BuildingNumber)
	if err != nil || r.Postcode == "" || r.Street == "" || r.SubBuilding != "" || r.DependentStreet != "" || in.Postcode == "" {
		return false
	}
	onStreet := map[int]bool{}
	var samePC []int // numbers of the other records of the postcode and street
	pcShared := false
	for _, o := range p.byCity[r.City] {
		if o.ID == r.ID {
			continue
		}
		if o.Postcode == r.Postcode {
			pcShared = true
		}
		if o.Street != r.Street {
			continue
		}
		if n, err := strconv.Atoi(o.BuildingNumber); err == nil {
			onStreet[n] = true
			if o.Postcode == r.Postcode {
				samePC = append(samePC, n)
			}
		} else if o.BuildingNumber != "" {
			onStreet[-1] = true
		}
	}
	eircode := r.Country == "IE"
	if eircode && pcShared {
		return false // an Eircode of several addresses names no one building
	}
	var ws []int
	for _, w := range closeNumbers(num) {
		if onStreet[w] {
			continue // the number written names another real house
		}
		ok := true
		for _, o := range samePC {
			if !eircode && near(w, o) {
				ok = false // two properties of the postcode are close
			}
		}
		if ok {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		return false
	}
	w := strconv.Itoa(ws[p.rng.IntN(len(ws))])
	for i, l := range in.Lines {
		if strings.HasPrefix(l, r.BuildingNumber+" ") {
			in.Lines = slices.Clone(in.Lines)
			in.Lines[i] = w + l[len(r.BuildingNumber):]
			return true
		}
	}
	return false
}

// subAbbrev rewrites the sub-building line of a flat, apartment or room
// whose building holds others.
func (p *Perturber) subAbbrev(in *Input, r *gazetteer.Record) bool {
	word, id, ok := strings.Cut(r.SubBuilding, " ")
	if !ok || id == "" || id[0] < '0' || id[0] > '9' || strings.Contains(id, " ") {
		return false
	}
	siblings := false
	for _, o := range p.byCity[r.City] {
		if o.ID != r.ID && o.Street == r.Street && o.BuildingNumber == r.BuildingNumber && o.BuildingName == r.BuildingName && o.SubBuilding != "" {
			siblings = true
			break
		}
	}
	if !siblings {
		return false
	}
	var forms []string
	switch word {
	case "Room":
		forms = []string{"Rm %s", "Rm. %s", "Rm%s", "RM%s", "Room%s", "No. %s", "Rm.%s"}
	case "Flat", "Apartment":
		forms = []string{"Flt %s", "Flt. %s", "Flt%s", "Apt %s", "Apt. %s", "Apt%s", "Apt.%s", "No. %s", "No %s", "Flat%s", "Apartment%s", "FLAT%s"}
	default:
		return false
	}
	sub := fmt.Sprintf(forms[p.rng.IntN(len(forms))], id)
	for i, l := range in.Lines {
		if l == r.SubBuilding {
			in.Lines = slices.Clone(in.Lines)
			if p.rng.IntN(3) == 0 && i+1 < len(in.Lines) {
				// The flat and the building in one line.
				in.Lines[i] = sub + " " + in.Lines[i+1]
				in.Lines = slices.Delete(in.Lines, i+1, i+2)
			} else {
				in.Lines[i] = sub
			}
			return true
		}
	}
	return false
}
