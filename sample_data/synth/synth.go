package synth

import (
	"fmt"
	"iter"
	"math/rand/v2"
	"strings"

	"github.com/addrclean/addrclean/gazetteer"
)

// eircodeAlphabet is the character set of an Eircode's unique identifier.
const eircodeAlphabet = "0123456789ACDEFHKNPRTVWXY"

// ukInwardLetters are the letters a UK inward code may use.
const ukInwardLetters = "ABDEFGHJLNPQRSTUWXYZ"

// generator holds the state that keeps postcodes and street names unique.
type generator struct {
	rng      *rand.Rand
	seq      int
	pcSeq    map[string]int             // per postcode area: postcodes issued
	streets  map[string]map[string]bool // per town name: street names used
	cumW     []int
	totalW   int
	ukPC     string // the UK postcode being filled
	ukPCLeft int
}

func newGenerator(seed uint64) *generator {
	g := &generator{
		rng:     rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		pcSeq:   make(map[string]int),
		streets: make(map[string]map[string]bool),
	}
	for _, t := range Towns {
		g.totalW += t.Weight
		g.cumW = append(g.cumW, g.totalW)
	}
	return g
}

func (g *generator) pick(s []string) string { return s[g.rng.IntN(len(s))] }

func (g *generator) town() int {
	x := g.rng.IntN(g.totalW)
	for i, c := range g.cumW {
		if x < c {
			return i
		}
	}
	return len(Towns) - 1
}

// eircode returns a new Eircode in a routing key: the area's counter sent
// through a bijection of 0..25^4-1 so identifiers look scattered but never
// repeat.
func (g *generator) eircode(rk string) string {
	n := g.pcSeq[rk]
	g.pcSeq[rk] = n + 1
	const space = 25 * 25 * 25 * 25
	x := (n*7919 + areaOffset(rk)) % space
	var id [4]byte
	for i := 3; i >= 0; i-- {
		id[i] = eircodeAlphabet[x%25]
		x /= 25
	}
	return rk + " " + string(id[:])
}

// ukPostcode returns a new UK postcode in a district.
func (g *generator) ukPostcode(district string) string {
	n := g.pcSeq[district]
	g.pcSeq[district] = n + 1
	const per = 20 * 20
	sector := (n / per) % 10
	x := (n*37 + areaOffset(district)) % per
	return fmt.Sprintf("%s %d%c%c", district, sector, ukInwardLetters[x/20], ukInwardLetters[x%20])
}

// areaOffset starts each area's sequence somewhere else, so that areas do
// not share their unique identifiers.
func areaOffset(area string) int {
	h := 17
	for i := 0; i < len(area); i++ {
		h = h*131 + int(area[i])
	}
	return h & 0xfffff
}

func (g *generator) postcode(t *Town) string {
	if t.Country == "IE" {
		return g.eircode(t.Area)
	}
	// UK postcodes cover a run of about 15 neighbouring addresses.
	if g.ukPCLeft <= 0 || !strings.HasPrefix(g.ukPC, t.Area+" ") {
		g.ukPC = g.ukPostcode(t.Area)
		g.ukPCLeft = 8 + g.rng.IntN(15)
	}
	g.ukPCLeft--
	return g.ukPC
}

func (g *generator) id(country string) string {
	g.seq++
	return fmt.Sprintf("%s%08d", country, g.seq)
}

// usedNames returns the street and townland names used in the town so far.
func (g *generator) usedNames(t *Town) map[string]bool {
	// Towns served by several postcode areas (Cork, London) appear more
	// than once in Towns; a name is unique in the town as a whole.
	key := t.Country + ":" + t.Name
	used := g.streets[key]
	if used == nil {
		used = make(map[string]bool)
		g.streets[key] = used
	}
	return used
}

// streetName invents a street name not yet used in the town.
func (g *generator) streetName(t *Town) string {
	used := g.usedNames(t)
	for try := 0; ; try++ {
		name := g.pick(streetNames) + " " + g.pick(streetTypes)
		if try > 20 {
			name = g.pick([]string{"Upper", "Lower", "Old", "New", "Little", "Great"}) + " " + name
		}
		if try > 60 {
			name = fmt.Sprintf("%s %d", name, try)
		}
		if !used[name] {
			used[name] = true
			return name
		}
	}
}

func (g *generator) jitter(d float64) float64 { return (g.rng.Float64()*2 - 1) * d }

// SampleSeed is the seed of the bundled sample data.
const SampleSeed = 20261121

// Generate yields n synthetic reference records, the same ones for the
// same seed. Every town appears before any town appears twice (when n
// allows), so small samples still cover all counties.
func Generate(seed uint64, n int) iter.Seq[gazetteer.Record] {
	return func(yield func(gazetteer.Record) bool) {
		g := newGenerator(seed)
		count := 0
		emit := func(r gazetteer.Record) bool {
			if count >= n {
				return false
			}
			count++
			return yield(r)
		}
		for round := 0; count < n; round++ {
			ti := round
			if round >= len(Towns) {
				ti = g.town()
			}
			t := &Towns[ti]
			var ok bool
			switch x := g.rng.IntN(100); {
			case x < 2:
				ok = g.poBoxes(t, emit)
			case x < 12 && t.Country == "IE" && !strings.HasPrefix(t.Name, "Dublin"):
				ok = g.rural(t, emit)
			case x < 20:
				ok = g.apartments(t, emit)
			default:
				ok = g.street(t, emit)
			}
			if !ok {
				return
			}
		}
	}
}

func (g *generator) base(t *Town, lat, lon float64) gazetteer.Record {
	return gazetteer.Record{
		ID: g.id(t.Country), City: t.Name, Region: t.Region, Country: t.Country,
		Latitude: lat, Longitude: lon, HasLocation: true, Type: gazetteer.Residential,
		Postcode: g.postcode(t),
	}
}

// street emits the houses of one street, a few of them businesses.
func (g *generator) street(t *Town, emit func(gazetteer.Record) bool) bool {
	name := g.streetName(t)
	lat, lon := t.Lat+g.jitter(0.02), t.Lon+g.jitter(0.03)
	houses := 6 + g.rng.IntN(30)
	for h := 1; h <= houses; h++ {
		r := g.base(t, lat+float64(h)*0.00004, lon+float64(h)*0.00006)
		r.Street = name
		r.BuildingNumber = fmt.Sprint(h)
		switch x := g.rng.IntN(100); {
		case x < 6:
			r.Type = gazetteer.Commercial
			r.Organisation = g.pick(surnames) + "'s " + g.pick(businesses)
		case x < 8:
			r.BuildingNumber = fmt.Sprintf("%dA", h)
		}
		if !emit(r) {
			return false
		}
	}
	return true
}

// apartments emits the flats of one apartment building on a new street.
func (g *generator) apartments(t *Town, emit func(gazetteer.Record) bool) bool {
	street := g.streetName(t)
	bname := g.pick(buildingNames)
	num := fmt.Sprint(1 + g.rng.IntN(60))
	lat, lon := t.Lat+g.jitter(0.02), t.Lon+g.jitter(0.03)
	word := "Apartment"
	if t.Country == "GB" {
		word = "Flat"
	}
	flats := 4 + g.rng.IntN(12)
	for f := 1; f <= flats; f++ {
		r := g.base(t, lat, lon)
		r.SubBuilding = fmt.Sprintf("%s %d", word, f)
		r.BuildingName = bname
		r.BuildingNumber = num
		r.Street = street
		if !emit(r) {
			return false
		}
	}
	return true
}

// rural emits named houses in an invented townland outside an Irish town.
func (g *generator) rural(t *Town, emit func(gazetteer.Record) bool) bool {
	used := g.usedNames(t)
	townland := g.pick(townlandStart) + g.pick(townlandEnd)
	for try := 0; used[townland]; try++ {
		townland = g.pick(townlandStart) + g.pick(townlandEnd)
		if try > 20 {
			townland = g.pick([]string{"Upper ", "Lower ", "East ", "West "}) + townland
		}
	}
	used[townland] = true
	lat, lon := t.Lat+g.jitter(0.08), t.Lon+g.jitter(0.1)
	names := map[string]bool{}
	houses := 3 + g.rng.IntN(8)
	for h := 0; h < houses; h++ {
		name := g.pick(houseNames)
		if names[name] {
			continue
		}
		names[name] = true
		r := g.base(t, lat+g.jitter(0.005), lon+g.jitter(0.005))
		r.BuildingName = name
		r.Locality = townland
		if !emit(r) {
			return false
		}
	}
	return true
}

// poBoxes emits a few PO Box addresses of a town's delivery office.
func (g *generator) poBoxes(t *Town, emit func(gazetteer.Record) bool) bool {
	for i := 0; i < 3; i++ {
		r := g.base(t, t.Lat, t.Lon)
		r.Type = gazetteer.POBox
		r.Street = fmt.Sprintf("PO Box %d", 100+g.seq%9000)
		if !emit(r) {
			return false
		}
	}
	return true
}
