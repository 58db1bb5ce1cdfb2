package synth

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
// are real; coordinates are approximate.
var Towns = []Town{
	{"Dublin 1", "Dublin", "IE", "D01", 53.352, -6.260, 4},
	{"Dublin 2", "Dublin", "IE", "D02", 53.338, -6.252, 4},
	{"Dublin 3", "Dublin", "IE", "D03", 53.363, -6.224, 3},
	{"Dublin 4", "Dublin", "IE", "D04", 53.327, -6.226, 4},
	{"Dublin 5", "Dublin", "IE", "D05", 53.380, -6.180, 3},
	{"Dublin 6", "Dublin", "IE", "D06", 53.320, -6.265, 3},
	{"Dublin 6W", "Dublin", "IE", "D6W", 53.310, -6.300, 3},
	{"Dublin 7", "Dublin", "IE", "D07", 53.360, -6.285, 3},
	{"Dublin 8", "Dublin", "IE", "D08", 53.338, -6.290, 3},
	{"Dublin 9", "Dublin", "IE", "D09", 53.380, -6.245, 3},
	{"Dublin 11", "Dublin", "IE", "D11", 53.390, -6.290, 2},
	{"Dublin 12", "Dublin", "IE", "D12", 53.320, -6.320, 2},
	{"Dublin 13", "Dublin", "IE", "D13", 53.390, -6.150, 2},
	{"Dublin 14", "Dublin", "IE", "D14", 53.295, -6.255, 2},
	{"Dublin 15", "Dublin", "IE", "D15", 53.385, -6.380, 3},
	{"Dublin 24", "Dublin", "IE", "D24", 53.285, -6.370, 3},
	{"Swords", "Dublin", "IE", "K67", 53.459, -6.218, 2},
	{"Lucan", "Dublin", "IE", "K78", 53.357, -6.449, 2},
	{"Malahide", "Dublin", "IE", "K36", 53.450, -6.154, 1},
	{"Balbriggan", "Dublin", "IE", "K32", 53.612, -6.182, 1},
	{"Blackrock", "Dublin", "IE", "A94", 53.301, -6.178, 1},
	{"Dún Laoghaire", "Dublin", "IE", "A96", 53.294, -6.134, 2},
	{"Carlow", "Carlow", "IE", "R93", 52.836, -6.934, 2},
	{"Muine Bheag", "Carlow", "IE", "R21", 52.700, -6.958, 1},
	{"Cavan", "Cavan", "IE", "H12", 53.991, -7.360, 2},
	{"Belturbet", "Cavan", "IE", "H14", 54.101, -7.447, 1},
	{"Ennis", "Clare", "IE", "V95", 52.844, -8.986, 2},
	{"Shannon", "Clare", "IE", "V14", 52.704, -8.865, 1},
	{"Kilrush", "Clare", "IE", "V15", 52.639, -9.483, 1},
	{"Cork", "Cork", "IE", "T12", 51.897, -8.470, 4},
	{"Cork", "Cork", "IE", "T23", 51.910, -8.475, 3},
	{"Carrigaline", "Cork", "IE", "P43", 51.812, -8.399, 1},
	{"Mallow", "Cork", "IE", "P51", 52.134, -8.645, 1},
	{"Midleton", "Cork", "IE", "P25", 51.916, -8.175, 1},
	{"Bandon", "Cork", "IE", "P72", 51.746, -8.742, 1},
	{"Skibbereen", "Cork", "IE", "P81", 51.550, -9.263, 1},
	{"Letterkenny", "Donegal", "IE", "F92", 54.950, -7.734, 2},
	{"Donegal", "Donegal", "IE", "F94", 54.654, -8.110, 1},
	{"Lifford", "Donegal", "IE", "F93", 54.834, -7.484, 1},
	{"Galway", "Galway", "IE", "H91", 53.274, -9.049, 3},
	{"Ballinasloe", "Galway", "IE", "H53", 53.328, -8.229, 1},
	{"Tuam", "Galway", "IE", "H54", 53.515, -8.851, 1},
	{"Clifden", "Galway", "IE", "H71", 53.489, -10.019, 1},
	{"Tralee", "Kerry", "IE", "V92", 52.271, -9.700, 2},
	{"Killarney", "Kerry", "IE", "V93", 52.059, -9.504, 1},
	{"Listowel", "Kerry", "IE", "V31", 52.446, -9.485, 1},
	{"Naas", "Kildare", "IE", "W91", 53.216, -6.667, 2},
	{"Newbridge", "Kildare", "IE", "W12", 53.182, -6.797, 1},
	{"Celbridge", "Kildare", "IE", "W23", 53.340, -6.539, 1},
	{"Athy", "Kildare", "IE", "R14", 52.992, -6.986, 1},
	{"Kilkenny", "Kilkenny", "IE", "R95", 52.654, -7.252, 2},
	{"Portlaoise", "Laois", "IE", "R32", 53.034, -7.299, 2},
	{"Carrick-on-Shannon", "Leitrim", "IE", "N41", 53.946, -8.090, 1},
	{"Limerick", "Limerick", "IE", "V94", 52.664, -8.623, 3},
	{"Newcastle West", "Limerick", "IE", "V42", 52.449, -9.061, 1},
	{"Longford", "Longford", "IE", "N39", 53.727, -7.798, 1},
	{"Drogheda", "Louth", "IE", "A92", 53.718, -6.348, 2},
	{"Dundalk", "Louth", "IE", "A91", 54.000, -6.405, 2},
	{"Castlebar", "Mayo", "IE", "F23", 53.855, -9.298, 1},
	{"Ballina", "Mayo", "IE", "F26", 54.115, -9.155, 1},
	{"Westport", "Mayo", "IE", "F28", 53.800, -9.519, 1},
	{"Navan", "Meath", "IE", "C15", 53.653, -6.681, 2},
	{"Kells", "Meath", "IE", "A82", 53.726, -6.879, 1},
	{"Ashbourne", "Meath", "IE", "A84", 53.511, -6.397, 1},
	{"Monaghan", "Monaghan", "IE", "H18", 54.249, -6.968, 1},
	{"Carrickmacross", "Monaghan", "IE", "A81", 53.978, -6.719, 1},
	{"Tullamore", "Offaly", "IE", "R35", 53.274, -7.488, 1},
	{"Birr", "Offaly", "IE", "R42", 53.091, -7.913, 1},
	{"Roscommon", "Roscommon", "IE", "F42", 53.632, -8.190, 1},
	{"Boyle", "Roscommon", "IE", "F52", 53.973, -8.299, 1},
	{"Sligo", "Sligo", "IE", "F91", 54.270, -8.470, 2},
	{"Clonmel", "Tipperary", "IE", "E91", 52.355, -7.704, 2},
	{"Nenagh", "Tipperary", "IE", "E45", 52.862, -8.197, 1},
	{"Thurles", "Tipperary", "IE", "E41", 52.680, -7.814, 1},
	{"Waterford", "Waterford", "IE", "X91", 52.259, -7.110, 2},
	{"Dungarvan", "Waterford", "IE", "X35", 52.088, -7.625, 1},
	{"Mullingar", "Westmeath", "IE", "N91", 53.526, -7.338, 2},
	{"Athlone", "Westmeath", "IE", "N37", 53.423, -7.940, 2},
	{"Wexford", "Wexford", "IE", "Y35", 52.336, -6.463, 2},
	{"Enniscorthy", "Wexford", "IE", "Y21", 52.501, -6.558, 1},
	{"Gorey", "Wexford", "IE", "Y25", 52.675, -6.292, 1},
	{"New Ross", "Wexford", "IE", "Y34", 52.396, -6.937, 1},
	{"Bray", "Wicklow", "IE", "A98", 53.203, -6.098, 2},
	{"Wicklow", "Wicklow", "IE", "A67", 52.981, -6.044, 1},
	{"Arklow", "Wicklow", "IE", "Y14", 52.798, -6.160, 1},
	{"Greystones", "Wicklow", "IE", "A63", 53.144, -6.063, 1},

	{"London", "Greater London", "GB", "SW1A", 51.501, -0.141, 3},
	{"London", "Greater London", "GB", "EC1A", 51.519, -0.100, 2},
	{"London", "Greater London", "GB", "N1", 51.538, -0.099, 3},
	{"London", "Greater London", "GB", "SE1", 51.500, -0.090, 3},
	{"Manchester", "Greater Manchester", "GB", "M1", 53.479, -2.238, 3},
	{"Birmingham", "West Midlands", "GB", "B1", 52.480, -1.905, 3},
	{"Liverpool", "Merseyside", "GB", "L1", 53.404, -2.980, 2},
	{"Leeds", "West Yorkshire", "GB", "LS1", 53.797, -1.548, 2},
	{"Sheffield", "South Yorkshire", "GB", "S1", 53.381, -1.470, 2},
	{"Bristol", "Bristol", "GB", "BS1", 51.454, -2.593, 2},
	{"Newcastle upon Tyne", "Tyne and Wear", "GB", "NE1", 54.973, -1.614, 2},
	{"Nottingham", "Nottinghamshire", "GB", "NG1", 52.954, -1.155, 2},
	{"Oxford", "Oxfordshire", "GB", "OX1", 51.752, -1.258, 1},
	{"Cambridge", "Cambridgeshire", "GB", "CB1", 52.200, 0.129, 1},
	{"York", "North Yorkshire", "GB", "YO1", 53.960, -1.082, 1},
	{"Exeter", "Devon", "GB", "EX1", 50.725, -3.527, 1},
	{"Edinburgh", "City of Edinburgh", "GB", "EH1", 55.953, -3.189, 3},
	{"Glasgow", "Glasgow City", "GB", "G1", 55.861, -4.251, 3},
	{"Aberdeen", "Aberdeen City", "GB", "AB10", 57.149, -2.099, 1},
	{"Dundee", "Dundee City", "GB", "DD1", 56.462, -2.971, 1},
	{"Inverness", "Highland", "GB", "IV1", 57.478, -4.224, 1},
	{"Cardiff", "Cardiff", "GB", "CF10", 51.481, -3.179, 2},
	{"Swansea", "Swansea", "GB", "SA1", 51.621, -3.944, 1},
	{"Newport", "Newport", "GB", "NP20", 51.588, -2.998, 1},
	{"Bangor", "Gwynedd", "GB", "LL57", 53.228, -4.129, 1},
	{"Belfast", "Antrim", "GB", "BT1", 54.597, -5.930, 3},
	{"Londonderry", "Londonderry", "GB", "BT48", 54.997, -7.309, 1},
	{"Armagh", "Armagh", "GB", "BT60", 54.350, -6.654, 1},
	{"Enniskillen", "Fermanagh", "GB", "BT74", 54.344, -7.639, 1},
	{"Dungannon", "Tyrone", "GB", "BT71", 54.503, -6.767, 1},
	{"Newry", "Down", "GB", "BT34", 54.176, -6.349, 1},
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
