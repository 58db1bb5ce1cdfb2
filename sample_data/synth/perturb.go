package synth

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode"

	"github.com/addrclean/addrclean/countries"
	"github.com/addrclean/addrclean/gazetteer"
)

// Input is an address as a CRM export holds it: free lines and separate
// town, county, postcode and country cells.
type Input struct {
	Lines    []string
	City     string
	Region   string
	Postcode string
	Country  string
}

// Op is one kind of mess.
type Op string

// The kinds of mess. Cosmetic ones leave the address the same; the others
// change what it says.
const (
	OpCase        Op = "case"          // upper or lower case throughout (cosmetic)
	OpAbbrev      Op = "abbrev"        // Road → Rd, Apartment → Apt, Co. (cosmetic)
	OpPunct       Op = "punct"         // apostrophes and dots dropped or added (cosmetic)
	OpSpacing     Op = "spacing"       // postcode spacing and case (cosmetic)
	OpDropPC      Op = "drop-postcode" // postcode left out (cosmetic)
	OpDropCounty  Op = "drop-county"   // county left out (cosmetic)
	OpDropTown    Op = "drop-town"     // town left out (cosmetic)
	OpReorder     Op = "reorder"       // lines joined, split or moved (cosmetic)
	OpTypo        Op = "typo"          // a typo in the street or house name (real)
	OpTownTypo    Op = "town-typo"     // a typo in the town (real)
	OpWrongPC     Op = "wrong-postcode"
	OpWrongCounty Op = "wrong-county"
	OpNoise       Op = "noise"       // a contact line such as "c/o Mary Byrne" (cosmetic: set aside)
	OpDropNumber  Op = "drop-number" // house number left out (ambiguous)
	// OpExtraSub gives a flat or unit ("Apt 5") that the reference does not
	// have: the building is right but the address is not the record's, so
	// it is never accepted (real). Random does not draw it, so that the
	// sample data stay as they were; the evaluation asks for it by name.
	OpExtraSub Op = "extra-sub"
	// OpNote adds a line that is neither address nor contact ("Ring bell
	// twice"): input the answer does not use, a real change. Like
	// OpExtraSub, only asked for by name.
	OpNote Op = "note"

	// The kinds below, like OpExtraSub, are only asked for by name.

	// OpGlueNumber writes the house number against the street, "14Elm
	// Terrace" (cosmetic).
	OpGlueNumber Op = "glue-number"
	// OpWrongType gives another street type, "Elm Road" for "Elm Lane",
	// only where the town has no street of that name (real).
	OpWrongType Op = "wrong-type"
	// OpDropType leaves the street type out, "Kickham" for "Kickham Lane",
	// only where no other street of the town has that name (real).
	OpDropType Op = "drop-type"
	// OpIrish writes the town and county in Irish, "Gaillimh", "Co. na
	// Gaillimhe" (cosmetic).
	OpIrish Op = "irish"
	// OpSaint writes "St." as "Saint" or "St" (cosmetic).
	OpSaint Op = "saint"
	// OpUnitLine adds a line such as "Unit 4 Business Park" that the
	// address does not explain (real).
	OpUnitLine Op = "unit-line"
	// OpCrownCountry gives the country of a Jersey, Guernsey or Isle of
	// Man address as "United Kingdom" or "Channel Islands" (cosmetic).
	OpCrownCountry Op = "crown-country"
	// OpDropStreet leaves out the number and street of an address with a
	// building name ("Apartment 3, Riverside House, Ennis") (real: the
	// street is added).
	OpDropStreet Op = "drop-street"
	// OpDropName leaves out the building name of an address with no house
	// number, where the name tells the building from its neighbours,
	// keeping its number ("Flat 3 Hurst, Oakdene Road" as "3 Oakdene
	// Road") (real: never the same address as written).
	OpDropName Op = "drop-name"
)

// cosmetic ops keep the expected verdict at Accept.
var cosmetic = map[Op]bool{
	OpCase: true, OpAbbrev: true, OpPunct: true, OpSpacing: true, OpDropPC: true,
	OpDropCounty: true, OpDropTown: true, OpReorder: true, OpNoise: true,
	OpGlueNumber: true, OpIrish: true, OpSaint: true, OpCrownCountry: true,
	OpSaintSpell: true, OpSubAbbrev: true,
}

// Case is one evaluation case: a messy input, the record it came from, and
// the verdict a correct matcher gives.
type Case struct {
	Input   Input
	TrueID  string
	Expect  gazetteer.Verdict
	Ops     []Op
	HeldOut bool // the record is not in the index: no id may be returned
}

// Perturber makes messy inputs from records, deterministically from a seed.
type Perturber struct {
	rng    *rand.Rand
	byCity map[string][]*gazetteer.Record
}

// NewPerturber returns a Perturber drawing wrong postcodes from recs.
func NewPerturber(seed uint64, recs []gazetteer.Record) *Perturber {
	p := &Perturber{rng: rand.New(rand.NewPCG(seed, seed*31+7)), byCity: make(map[string][]*gazetteer.Record)}
	for i := range recs {
		r := &recs[i]
		p.byCity[r.City] = append(p.byCity[r.City], r)
	}
	return p
}

// Clean writes a record the way a tidy CRM would hold it.
func (p *Perturber) Clean(r *gazetteer.Record) Input {
	in := Input{Lines: r.Lines(), City: r.City, Region: r.Region, Postcode: r.Postcode}
	switch r.Country {
	case "IE":
		in.Country = "Ireland"
		if p.rng.IntN(2) == 0 {
			in.Region = "Co. " + r.Region
		}
	case "GB":
		in.Country = "United Kingdom"
	default:
		in.Country = countries.Name(r.Country)
	}
	return in
}

// Random returns a case with zero to three random kinds of mess.
func (p *Perturber) Random(r *gazetteer.Record) Case {
	all := []Op{OpCase, OpAbbrev, OpPunct, OpSpacing, OpDropPC, OpDropCounty, OpDropTown,
		OpReorder, OpTypo, OpTownTypo, OpWrongPC, OpWrongCounty, OpNoise, OpDropNumber}
	n := p.rng.IntN(4)
	var ops []Op
	for len(ops) < n {
		op := all[p.rng.IntN(len(all))]
		if !slices.Contains(ops, op) {
			ops = append(ops, op)
		}
	}
	return p.Mess(r, ops...)
}

// Mess applies ops to a clean rendering of r; ops that do not apply to the
// record (a typo where no word is long enough) are left out of Case.Ops.
func (p *Perturber) Mess(r *gazetteer.Record, ops ...Op) Case {
	c := Case{Input: p.Clean(r), TrueID: r.ID}
	// Order matters: structural changes first, spelling last.
	order := slices.Concat([]Op{OpDropPC, OpWrongPC, OpDropCounty, OpWrongCounty, OpDropNumber, OpDropTown,
		OpWrongType, OpDropType, OpIrish, OpCrownCountry, OpUnitLine, OpDropStreet, OpDropName},
		familyOrder, []Op{OpTypo, OpTownTypo, OpNoise, OpNote, OpExtraSub, OpReorder, OpGlueNumber, OpSaint, OpAbbrev, OpPunct, OpSpacing, OpCase})
	for _, op := range order {
		if slices.Contains(ops, op) && p.apply(&c.Input, r, op) {
			c.Ops = append(c.Ops, op)
		}
	}
	c.Expect = gazetteer.VerdictAccept
	for _, op := range c.Ops {
		if !cosmetic[op] {
			c.Expect = gazetteer.VerdictSuggest
		}
	}
	if slices.Contains(c.Ops, OpDropPC) && slices.Contains(c.Ops, OpDropTown) {
		// Town and postcode both inferred: the matcher asks first.
		c.Expect = gazetteer.VerdictSuggest
	}
	if slices.Contains(c.Ops, OpDropNumber) {
		c.Expect = gazetteer.VerdictConfirm
		// An Eircode names the house on its own.
		if r.Country == "IE" && !slices.Contains(c.Ops, OpDropPC) && !slices.Contains(c.Ops, OpWrongPC) {
			c.Expect = gazetteer.VerdictSuggest
		}
	}
	return c
}

func (p *Perturber) apply(in *Input, r *gazetteer.Record, op Op) bool {
	switch op {
	case OpCase:
		f := strings.ToUpper
		if p.rng.IntN(2) == 0 {
			f = strings.ToLower
		}
		mapInput(in, f)
	case OpAbbrev:
		rep := strings.NewReplacer(" Road", " Rd", " Street", " St", " Avenue", " Ave",
			"Apartment ", "Apt ", " Terrace", " Tce", " Gardens", " Gdns", " Crescent", " Cres",
			" Drive", " Dr", " Court", " Ct", " Place", " Pl", " Square", " Sq", "Saint ", "St. ", "Flat ", "Flat ")
		mapInput(in, rep.Replace)
		if r.Country == "IE" && in.Region != "" && !strings.HasPrefix(in.Region, "Co") {
			in.Region = "Co. " + in.Region
		}
	case OpPunct:
		rep := strings.NewReplacer("'", "", ".", "", "’", "")
		mapInput(in, rep.Replace)
		if p.rng.IntN(2) == 0 && len(in.Lines) > 0 {
			in.Lines[len(in.Lines)-1] += ","
		}
	case OpSpacing:
		if in.Postcode == "" {
			return false
		}
		pc := strings.ReplaceAll(in.Postcode, " ", "")
		if p.rng.IntN(2) == 0 {
			pc = strings.ToLower(pc)
		}
		in.Postcode = pc
	case OpDropPC:
		if in.Postcode == "" {
			return false
		}
		in.Postcode = ""
	case OpDropCounty:
		if in.Region == "" {
			return false
		}
		in.Region = ""
	case OpDropTown:
		if in.City == "" {
			return false
		}
		in.City = ""
	case OpReorder:
		switch x := p.rng.IntN(3); {
		case x == 0 && len(in.Lines) >= 2:
			// Two lines in one cell.
			in.Lines = append([]string{in.Lines[0] + ", " + in.Lines[1]}, in.Lines[2:]...)
		case x == 1 && in.City != "":
			// The town written as an address line.
			in.Lines = append(slices.Clone(in.Lines), in.City)
			in.City = ""
		default:
			if len(in.Lines) < 2 {
				return false
			}
			// The first line last (an organisation or flat after the street).
			in.Lines = append(slices.Clone(in.Lines[1:]), in.Lines[0])
		}
	case OpTypo:
		return p.typo(in, r)
	case OpTownTypo:
		if len(in.City) < 6 || !isPlainWord(in.City) {
			return false
		}
		in.City = misspell(p.rng, in.City)
	case OpWrongPC:
		if in.Postcode == "" {
			return false
		}
		for _, o := range p.byCity[r.City] {
			// A neighbour's postcode from another street: on the same
			// street it would name a real, different house.
			if o.Postcode != r.Postcode && o.Postcode != "" && o.Street != r.Street && p.rng.IntN(4) == 0 {
				in.Postcode = o.Postcode
				return true
			}
		}
		return false
	case OpWrongCounty:
		if in.Region == "" {
			return false
		}
		for try := 0; try < 20; try++ {
			t := Towns[p.rng.IntN(len(Towns))]
			if t.Country == r.Country && t.Region != r.Region {
				in.Region = t.Region
				if r.Country == "IE" {
					in.Region = "Co. " + t.Region
				}
				return true
			}
		}
		return false
	case OpNoise:
		noise := []string{"c/o %s %s", "Attn: %s %s", "FAO %s %s"}[p.rng.IntN(3)]
		line := fmt.Sprintf(noise, firstNames[p.rng.IntN(len(firstNames))], surnames[p.rng.IntN(len(surnames))])
		in.Lines = append([]string{line}, in.Lines...)
	case OpNote:
		note := []string{"Ring bell twice", "Leave with neighbour", "Beware of the dog", "Deliveries round the side"}[p.rng.IntN(4)]
		in.Lines = append(slices.Clone(in.Lines), note)
	case OpExtraSub:
		if r.SubBuilding != "" || r.BuildingNumber == "" || r.Type == gazetteer.POBox || len(in.Lines) == 0 {
			return false
		}
		for _, o := range p.byCity[r.City] {
			if o.SubBuilding != "" && o.Street == r.Street && o.BuildingNumber == r.BuildingNumber {
				return false // the flat might exist after all
			}
		}
		sub := fmt.Sprintf([]string{"Apt %d", "Unit %d", "Flat %d"}[p.rng.IntN(3)], 1+p.rng.IntN(30))
		if p.rng.IntN(2) == 0 {
			in.Lines = append([]string{sub}, in.Lines...)
		} else {
			in.Lines = slices.Clone(in.Lines)
			in.Lines[0] = sub + ", " + in.Lines[0]
		}
	case OpGlueNumber:
		if r.BuildingNumber == "" || r.Street == "" {
			return false
		}
		for i, l := range in.Lines {
			if strings.HasPrefix(l, r.BuildingNumber+" ") {
				in.Lines = slices.Clone(in.Lines)
				in.Lines[i] = r.BuildingNumber + l[len(r.BuildingNumber)+1:]
				return true
			}
		}
		return false
	case OpDropStreet:
		if r.BuildingName == "" || r.Street == "" || r.DependentStreet != "" {
			return false
		}
		street := strings.TrimSpace(r.BuildingNumber + " " + r.Street)
		for i, l := range in.Lines {
			if l == street {
				in.Lines = append(slices.Clone(in.Lines[:i]), in.Lines[i+1:]...)
				return true
			}
		}
		return false
	case OpDropName:
		if r.BuildingName == "" || r.BuildingNumber != "" || r.Street == "" || len(in.Lines) == 0 {
			return false
		}
		num := ""
		for _, w := range strings.Fields(r.BuildingName) {
			if w[0] >= '0' && w[0] <= '9' {
				num = w
			}
		}
		var lines []string
		for _, l := range in.Lines {
			switch {
			case l == r.BuildingName:
			case l == r.Street && num != "":
				lines = append(lines, num+" "+l)
			default:
				lines = append(lines, l)
			}
		}
		if len(lines) == len(in.Lines) && num == "" {
			return false
		}
		in.Lines = lines
	case OpWrongType, OpDropType:
		return p.streetType(in, r, op)
	case OpIrish:
		town, ok := IrishTown[r.City]
		county, ok2 := IrishCounty[r.Region]
		if r.Country != "IE" || !ok || !ok2 {
			return false
		}
		if in.City != "" {
			in.City = town
		}
		if in.Region != "" {
			switch p.rng.IntN(3) {
			case 0:
				in.Region = "Co. " + county[0]
			case 1:
				in.Region = "Contae " + county[0]
			default:
				in.Region = county[1]
			}
		}
	case OpSaint:
		rep := strings.NewReplacer("St. ", []string{"Saint ", "St "}[p.rng.IntN(2)], "St ", "Saint ")
		changed := false
		for i, l := range in.Lines {
			if n := rep.Replace(l); n != l {
				in.Lines[i], changed = n, true
			}
		}
		if n := rep.Replace(in.City); n != in.City {
			in.City, changed = n, true
		}
		return changed
	case OpUnitLine:
		line := fmt.Sprintf("Unit %d %s", 1+p.rng.IntN(40),
			[]string{"Business Park", "Industrial Estate", "Enterprise Centre", "Retail Park"}[p.rng.IntN(4)])
		if p.rng.IntN(2) == 0 {
			line = "Unit " + fmt.Sprint(1+p.rng.IntN(40)) + " " + streetNames[p.rng.IntN(len(streetNames))] + " Business Park"
		}
		in.Lines = append([]string{line}, in.Lines...)
	case OpCrownCountry:
		switch r.Country {
		case "JE", "GG":
			in.Country = []string{"United Kingdom", "Channel Islands", "UK"}[p.rng.IntN(3)]
		case "IM":
			in.Country = []string{"United Kingdom", "UK", "Great Britain"}[p.rng.IntN(3)]
		default:
			return false
		}
	case OpDropNumber:
		if r.BuildingNumber == "" {
			return false
		}
		changed := false
		for i, l := range in.Lines {
			if strings.HasPrefix(l, r.BuildingNumber+" ") {
				in.Lines[i] = strings.TrimPrefix(l, r.BuildingNumber+" ")
				changed = true
			}
		}
		return changed
	default:
		return p.applyFamily(in, r, op)
	}
	return true
}

// streetType gives another street type or none, where the town has no
// other street of the same name (with any type).
func (p *Perturber) streetType(in *Input, r *gazetteer.Record, op Op) bool {
	words := strings.Fields(r.Street)
	if r.Type == gazetteer.POBox || len(words) < 2 || !slices.Contains(streetTypes, words[len(words)-1]) {
		return false
	}
	base := strings.Join(words[:len(words)-1], " ")
	repl := base
	if op == OpWrongType {
		for {
			t := streetTypes[p.rng.IntN(len(streetTypes))]
			if t != words[len(words)-1] {
				repl = base + " " + t
				break
			}
		}
	}
	for _, o := range p.byCity[r.City] {
		if o.Street == r.Street {
			continue
		}
		if o.Street == repl || strings.HasPrefix(o.Street, base+" ") {
			// The input names another street, or is as near to another
			// street of that name as to this one: no matcher can tell.
			return false
		}
	}
	for i, l := range in.Lines {
		if strings.Contains(l, r.Street) {
			in.Lines = slices.Clone(in.Lines)
			in.Lines[i] = strings.Replace(l, r.Street, repl, 1)
			return true
		}
	}
	return false
}

// typo misspells one word of the street (or house name) of five letters or
// more, not a street type, by one edit inside the word.
func (p *Perturber) typo(in *Input, r *gazetteer.Record) bool {
	target := r.Street
	if target == "" || r.Type == gazetteer.POBox {
		target = r.BuildingName
	}
	var words []string
	for _, w := range strings.Fields(target) {
		if len(w) >= 5 && isPlainWord(w) && !slices.Contains(streetTypes, w) {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return false
	}
	w := words[p.rng.IntN(len(words))]
	typo := misspell(p.rng, w)
	for i, l := range in.Lines {
		if strings.Contains(l, w) {
			in.Lines[i] = strings.Replace(l, w, typo, 1)
			return true
		}
	}
	return false
}

// misspell makes one edit inside a word (never its first or last letter),
// keeping its capitalisation.
func misspell(rng *rand.Rand, w string) string {
	b := []byte(strings.ToLower(w))
	i := 1 + rng.IntN(len(b)-2)
	switch rng.IntN(4) {
	case 0: // substitution
		c := byte('a' + rng.IntN(26))
		if c == b[i] {
			c = 'z' - (b[i] - 'a')
		}
		b[i] = c
	case 1: // transposition
		if b[i] == b[i+1] {
			b[i] = 'x'
		} else {
			b[i], b[i+1] = b[i+1], b[i]
		}
	case 2: // deletion
		b = append(b[:i], b[i+1:]...)
	default: // insertion
		b = append(b[:i], append([]byte{'e'}, b[i:]...)...)
	}
	typo := string(b)
	if w[0] >= 'A' && w[0] <= 'Z' {
		typo = strings.ToUpper(typo[:1]) + typo[1:]
	}
	return typo
}

func isPlainWord(w string) bool {
	for _, r := range w {
		if r > unicode.MaxASCII || !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

func mapInput(in *Input, f func(string) string) {
	for i, l := range in.Lines {
		in.Lines[i] = f(l)
	}
	in.City, in.Region, in.Postcode = f(in.City), f(in.Region), f(in.Postcode)
}
