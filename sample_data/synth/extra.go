package synth

import (
	"fmt"
	"math/rand/v2"

	"github.com/addrclean/addrclean/gazetteer"
)

// IrishTown is the Irish-language name of a town of Towns, as An Post and
// logainm.ie give it.
var IrishTown = map[string]string{
	"Dublin 1": "Baile Átha Cliath 1", "Dublin 2": "Baile Átha Cliath 2", "Dublin 4": "Baile Átha Cliath 4",
	"Dublin 8": "Baile Átha Cliath 8", "Dublin 15": "Baile Átha Cliath 15",
	"Swords": "Sord", "Lucan": "Leamhcán", "Malahide": "Mullach Íde", "Balbriggan": "Baile Brigín",
	"Carlow": "Ceatharlach", "Cavan": "An Cabhán", "Belturbet": "Béal Tairbirt",
	"Ennis": "Inis", "Shannon": "Sionainn", "Kilrush": "Cill Rois",
	"Cork": "Corcaigh", "Mallow": "Mala", "Midleton": "Mainistir na Corann", "Skibbereen": "An Sciobairín",
	"Bandon": "Droichead na Bandan", "Carrigaline": "Carraig Uí Leighin",
	"Letterkenny": "Leitir Ceanainn", "Donegal": "Dún na nGall", "Lifford": "Leifear",
	"Galway": "Gaillimh", "Ballinasloe": "Béal Átha na Sluaighe", "Tuam": "Tuaim", "Clifden": "An Clochán",
	"Tralee": "Trá Lí", "Killarney": "Cill Airne", "Listowel": "Lios Tuathail",
	"Naas": "An Nás", "Newbridge": "An Droichead Nua", "Celbridge": "Cill Droichid", "Athy": "Baile Átha Í",
	"Kilkenny": "Cill Chainnigh", "Portlaoise": "Port Laoise", "Carrick-on-Shannon": "Cora Droma Rúisc",
	"Limerick": "Luimneach", "Longford": "An Longfort",
	"Drogheda": "Droichead Átha", "Dundalk": "Dún Dealgan",
	"Castlebar": "Caisleán an Bharraigh", "Ballina": "Béal an Átha", "Westport": "Cathair na Mart",
	"Navan": "An Uaimh", "Kells": "Ceanannas", "Monaghan": "Muineachán", "Carrickmacross": "Carraig Mhachaire Rois",
	"Tullamore": "Tulach Mhór", "Birr": "Biorra", "Roscommon": "Ros Comáin", "Boyle": "Mainistir na Búille",
	"Sligo": "Sligeach", "Clonmel": "Cluain Meala", "Nenagh": "An tAonach", "Thurles": "Durlas",
	"Waterford": "Port Láirge", "Dungarvan": "Dún Garbhán", "Mullingar": "An Muileann gCearr",
	"Athlone": "Baile Átha Luain", "Wexford": "Loch Garman", "Enniscorthy": "Inis Córthaidh", "Gorey": "Guaire",
	"New Ross": "Ros Mhic Thriúin", "Bray": "Bré", "Wicklow": "Cill Mhantáin", "Arklow": "An tInbhear Mór",
	"Greystones": "Na Clocha Liatha",
}

// IrishCounty is how a county of the Republic is written in Irish after
// "Co." or "Contae" (the genitive), and on its own (the nominative).
var IrishCounty = map[string][2]string{
	"Carlow": {"Cheatharlach", "Ceatharlach"}, "Cavan": {"an Chabháin", "An Cabhán"},
	"Clare": {"an Chláir", "An Clár"}, "Cork": {"Chorcaí", "Corcaigh"},
	"Donegal": {"Dhún na nGall", "Dún na nGall"}, "Dublin": {"Bhaile Átha Cliath", "Baile Átha Cliath"},
	"Galway": {"na Gaillimhe", "Gaillimh"}, "Kerry": {"Chiarraí", "Ciarraí"},
	"Kildare": {"Chill Dara", "Cill Dara"}, "Kilkenny": {"Chill Chainnigh", "Cill Chainnigh"},
	"Laois": {"Laoise", "Laois"}, "Leitrim": {"Liatroma", "Liatroim"},
	"Limerick": {"Luimnigh", "Luimneach"}, "Longford": {"an Longfoirt", "An Longfort"},
	"Louth": {"Lú", "Lú"}, "Mayo": {"Mhaigh Eo", "Maigh Eo"}, "Meath": {"na Mí", "An Mhí"},
	"Monaghan": {"Mhuineacháin", "Muineachán"}, "Offaly": {"Uíbh Fhailí", "Uíbh Fhailí"},
	"Roscommon": {"Ros Comáin", "Ros Comáin"}, "Sligo": {"Shligigh", "Sligeach"},
	"Tipperary": {"Thiobraid Árann", "Tiobraid Árann"}, "Waterford": {"Phort Láirge", "Port Láirge"},
	"Westmeath": {"na hIarmhí", "An Iarmhí"}, "Wexford": {"Loch Garman", "Loch Garman"},
	"Wicklow": {"Chill Mhantáin", "Cill Mhantáin"},
}

// CrownTowns are towns of Jersey, Guernsey and the Isle of Man: their
// own ISO codes, UK-shaped postcodes and no county.
var CrownTowns = []Town{
	{"St Helier", "", "JE", "JE2", 49.186, -2.107, 3},
	{"St Saviour", "", "JE", "JE2", 49.190, -2.090, 1},
	{"St Brelade", "", "JE", "JE3", 49.185, -2.200, 1},
	{"St Peter Port", "", "GG", "GY1", 49.455, -2.536, 3},
	{"St Sampson", "", "GG", "GY2", 49.482, -2.523, 1},
	{"Douglas", "", "IM", "IM1", 54.150, -4.482, 3},
	{"Ramsey", "", "IM", "IM8", 54.322, -4.383, 1},
	{"Castletown", "", "IM", "IM9", 54.074, -4.653, 1},
}

// hallNames and unitNames name student halls and small blocks whose
// flats PAF writes in the building name ("Flat 10 Hurst").
var hallNames = []string{"Arthur Vick", "Rootes", "Cryfield", "Whitefields", "Tocil", "Lakeside", "Heronbank", "Claycroft", "Westwood", "Sherbourne"}
var unitNames = []string{"Hurst", "Whitefields", "Ashdown", "Beacon", "Coombe", "Lyndhurst", "Redcliffe", "Holmwood", "Fairview", "Kingsmead"}

// GenerateExtra calls yield with n records of shapes the main generator
// does not make, as PAF holds them: rooms of multiple-residence halls
// ("Room 4", "Block 1 Arthur Vick", no house number), flats written in
// the building name ("Flat 10 Hurst", "House 3 Whitefields"), and
// addresses in Jersey, Guernsey and the Isle of Man. Ids start with "X".
func GenerateExtra(seed uint64, n int, yield func(gazetteer.Record) bool) {
	g := newGenerator(seed)
	g.rng = rand.New(rand.NewPCG(seed, seed^0x51ed2701))
	count := 0
	emit := func(r gazetteer.Record) bool {
		if count >= n {
			return false
		}
		count++
		r.ID = fmt.Sprintf("X%07d", count)
		return yield(r)
	}
	var gb []*Town
	for i := range Towns {
		if Towns[i].Country == "GB" {
			gb = append(gb, &Towns[i])
		}
	}
	for round := 0; count < n; round++ {
		var ok bool
		switch round % 3 {
		case 0:
			ok = g.halls(gb[g.rng.IntN(len(gb))], emit)
		case 1:
			ok = g.unitNamed(gb[g.rng.IntN(len(gb))], emit)
		default:
			ok = g.crown(&CrownTowns[g.rng.IntN(len(CrownTowns))], emit)
		}
		if !ok {
			return
		}
	}
}

func (g *generator) halls(t *Town, emit func(gazetteer.Record) bool) bool {
	street := g.streetName(t)
	hall := g.pick(hallNames)
	blocks := 2 + g.rng.IntN(3)
	for b := 1; b <= blocks; b++ {
		for room := 1; room <= 4+g.rng.IntN(8); room++ {
			r := g.base(t, t.Lat, t.Lon)
			r.SubBuilding = fmt.Sprintf("Room %d", room)
			r.BuildingName = fmt.Sprintf("Block %d %s", b, hall)
			r.Street = street
			if !emit(r) {
				return false
			}
		}
	}
	return true
}

func (g *generator) unitNamed(t *Town, emit func(gazetteer.Record) bool) bool {
	street := g.streetName(t)
	name := g.pick(unitNames)
	word := g.pick([]string{"Flat", "House", "Apartment"})
	for u := 1; u <= 3+g.rng.IntN(10); u++ {
		r := g.base(t, t.Lat, t.Lon)
		r.BuildingName = fmt.Sprintf("%s %d %s", word, u, name)
		r.Street = street
		if !emit(r) {
			return false
		}
	}
	return true
}

func (g *generator) crown(t *Town, emit func(gazetteer.Record) bool) bool {
	name := g.streetName(t)
	for h := 1; h <= 4+g.rng.IntN(12); h++ {
		r := g.base(t, t.Lat, t.Lon)
		r.Street = name
		r.BuildingNumber = fmt.Sprint(h)
		if !emit(r) {
			return false
		}
	}
	return true
}
