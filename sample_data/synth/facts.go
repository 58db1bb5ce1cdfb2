package synth

import (
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Town is a real town (or Dublin postal district, or UK post town) with the
// postcode area it is served by: the facts the synthetic addresses hang on.
// Coordinates are approximate town centres.
type Town struct {
	Name    string
	Region  string // county (Ireland) or county/council area (UK)
	Country string // ISO alpha-2
	Area    string // Eircode routing key or UK outward code (district)
	Lat     float64
	Lon     float64
	Weight  int // relative number of addresses
}

// Towns are the towns the generator uses: every county of the Republic of
// Ireland, the Dublin postal districts, and towns in England, Scotland,
// Wales and Northern Ireland. Names, counties, routing keys and districts
// are real; coordinates are approximate. They are read from towns.csv (the
// Irish, then the British; a blank line between them).
var Towns = readTowns(townsCSV)

//go:embed towns.csv
var townsCSV string

// readTowns reads the embedded towns table. It is fixed at build time and
// every test of the package reads it: a bad line is a programming error.
func readTowns(text string) []Town {
	recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		panic(err)
	}
	towns := make([]Town, 0, len(recs)-1)
	for _, r := range recs[1:] {
		lat, err1 := strconv.ParseFloat(r[4], 64)
		lon, err2 := strconv.ParseFloat(r[5], 64)
		w, err3 := strconv.Atoi(r[6])
		if err := errors.Join(err1, err2, err3); err != nil {
			panic(fmt.Sprintf("towns.csv %q: %v", r, err))
		}
		towns = append(towns, Town{r[0], r[1], r[2], r[3], lat, lon, w})
	}
	return towns
}

// streetNames are invented street names in an Irish and British style;
// several carry fadas so that diacritics are exercised.
var streetNames = []string{
	"Main", "Church", "Castle", "Abbey", "Mill", "Bridge", "Station", "Chapel",
	"Market", "Hazel", "Willow", "Beech", "Oak", "Ash", "Elm", "Cedar", "Rowan",
	"Holly", "Hawthorn", "Birch", "Larch", "Maple", "Sycamore", "Chestnut",
	"Meadow", "River", "Harbour", "Strand", "College", "School", "Convent",
	"Barrack", "Cathedral", "Parnell", "O'Connell", "Pearse", "Connolly",
	"Davitt", "Emmet", "Grattan", "Wolfe Tone", "Kickham", "Sarsfield",
	"St. Patrick's", "St. Brigid's", "St. Joseph's", "Ard Mhuire",
	"Cnoc na Gréine", "Dún Emer", "Páirc Mhuire", "Bóthar na Trá", "Glenview",
	"Hillside", "Lakeview", "Seaview", "Parkside", "Woodlands", "Ferndale",
	"Ashgrove", "Oakwood", "Beechwood", "Cherry", "Primrose", "Lavender",
	"Foxglove", "Heather", "Victoria", "Albert", "King", "Queen", "Regent",
	"Windsor", "Clarence", "Nelson", "Wellington", "Hanover", "Balmoral",
	"Stirling", "Kingfisher", "Mulberry", "Orchard", "Brookfield", "Riverside",
	"Millbrook", "Fairfield", "Greenfield", "Springfield", "Highfield",
}

// streetTypes are the street types; their abbreviations are what the mess
// generator and the normaliser must agree on.
var streetTypes = []string{
	"Street", "Road", "Avenue", "Drive", "Lane", "Close", "Crescent", "Court",
	"Park", "Place", "Square", "Terrace", "Gardens", "Grove", "Heights", "Way",
	"View", "Lawns", "Green",
}

var houseNames = []string{
	"Rose Cottage", "The Willows", "Hillcrest", "Ard na Mara", "Glenside",
	"Sea Breeze", "Mountain View", "Oak Lodge", "Fernhill", "The Paddocks",
	"Tír na nÓg", "Ivy House", "Sunnyside", "Brook Lodge", "Millfield House",
	"The Old Rectory", "Cois Abhainn", "Lough View", "Heather Lodge", "Summerhill",
}

var townlandStart = []string{"Bally", "Kil", "Rath", "Knock", "Clon", "Drum", "Carrig", "Lis", "Derry", "Tully", "Gort", "Ard"}
var townlandEnd = []string{"more", "beg", "na", "ard", "glass", "owen", "keel", "lough", "duff", "mullen", "bawn", "crea"}

var buildingNames = []string{
	"Riverside House", "Harbour Court", "Granary Hall", "The Maltings",
	"Bridgewater House", "Castle Quay", "Mill Court", "Liberty House",
	"Victoria Mansions", "Abbey Court",
}

var surnames = []string{
	"Murphy", "Kelly", "O'Sullivan", "Walsh", "Smith", "O'Brien", "Byrne",
	"Ryan", "O'Connor", "O'Neill", "Reilly", "Doyle", "McCarthy", "Gallagher",
	"Doherty", "Kennedy", "Lynch", "Murray", "Quinn", "Moore", "Jones",
	"Williams", "Taylor", "Brown", "Davies", "Evans", "Wilson", "Thomas",
	"Roberts", "Campbell", "Stewart", "MacDonald", "Ní Bhriain", "Ó Sé",
}

var firstNames = []string{
	"Aoife", "Seán", "Niamh", "Conor", "Siobhán", "Patrick", "Mary", "John",
	"Ciara", "Darragh", "Emma", "James", "Oliver", "Sophie", "Fiona", "Liam",
	"Gráinne", "Eoin", "Róisín", "David", "Sarah", "Michael", "Orla", "Tom",
}

var businesses = []string{
	"Pharmacy", "Hardware", "Solicitors", "Veterinary Clinic", "Dental Practice",
	"Bakery", "Motors", "Accountants", "Bookshop", "Florist", "Butchers",
}
