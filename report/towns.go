package report

// town is a place named on the map for orientation.
type town struct {
	Name     string
	Lat, Lon float64
	// Rank orders the names when there is no room for all: 1 capitals,
	// 2 large cities, 3 regional towns.
	Rank int
}

// towns are the places the map may name: the capitals and large cities of
// the countries drawn, and the regional towns of Ireland and Great Britain
// (the countries of the bundled reference), so that a map of one county
// still has names on it.
var towns = []town{
	{"Dublin", 53.349, -6.260, 1}, {"Belfast", 54.597, -5.930, 1}, {"London", 51.507, -0.128, 1},
	{"Edinburgh", 55.953, -3.189, 1}, {"Cardiff", 51.481, -3.179, 1}, {"Douglas", 54.150, -4.482, 2},
	{"Paris", 48.857, 2.352, 1}, {"Brussels", 50.850, 4.352, 1}, {"Amsterdam", 52.370, 4.895, 1},
	{"Luxembourg", 49.612, 6.130, 1}, {"Madrid", 40.417, -3.704, 1}, {"Lisbon", 38.722, -9.139, 1},
	{"Berlin", 52.520, 13.405, 1}, {"Copenhagen", 55.676, 12.568, 1}, {"Oslo", 59.913, 10.752, 1},
	{"Reykjavík", 64.146, -21.942, 1}, {"Bern", 46.948, 7.447, 1}, {"Rome", 41.903, 12.496, 1},
	{"Vienna", 48.208, 16.373, 1}, {"Prague", 50.075, 14.438, 1}, {"Stockholm", 59.329, 18.069, 1},
	{"Warsaw", 52.230, 21.012, 1},
	{"Cork", 51.898, -8.471, 2}, {"Limerick", 52.668, -8.630, 2}, {"Galway", 53.271, -9.057, 2},
	{"Waterford", 52.259, -7.110, 2}, {"Derry", 54.997, -7.309, 2},
	{"Birmingham", 52.486, -1.890, 2}, {"Manchester", 53.481, -2.243, 2}, {"Liverpool", 53.408, -2.991, 2},
	{"Leeds", 53.800, -1.549, 2}, {"Glasgow", 55.864, -4.252, 2}, {"Bristol", 51.454, -2.588, 2},
	{"Newcastle", 54.978, -1.618, 2}, {"Sheffield", 53.381, -1.470, 2},
	{"Lyon", 45.764, 4.836, 2}, {"Marseille", 43.296, 5.370, 2}, {"Bordeaux", 44.838, -0.579, 2},
	{"Nantes", 47.218, -1.554, 2}, {"Lille", 50.629, 3.057, 2}, {"Toulouse", 43.605, 1.444, 2},
	{"Rotterdam", 51.924, 4.478, 2}, {"Barcelona", 41.385, 2.173, 2}, {"Porto", 41.158, -8.629, 2},
	{"Hamburg", 53.551, 9.994, 2}, {"Munich", 48.137, 11.576, 2}, {"Cologne", 50.938, 6.960, 2},
	{"Milan", 45.464, 9.190, 2},
	{"Sligo", 54.277, -8.476, 3}, {"Athlone", 53.423, -7.940, 3}, {"Kilkenny", 52.654, -7.244, 3},
	{"Dundalk", 54.000, -6.405, 3}, {"Letterkenny", 54.950, -7.734, 3}, {"Tralee", 52.271, -9.700, 3},
	{"Wexford", 52.336, -6.463, 3}, {"Ennis", 52.843, -8.986, 3}, {"Mullingar", 53.525, -7.338, 3},
	{"Drogheda", 53.718, -6.348, 3}, {"Bray", 53.203, -6.098, 3}, {"Swords", 53.460, -6.218, 3},
	{"Naas", 53.216, -6.667, 3}, {"Navan", 53.653, -6.681, 3}, {"Castlebar", 53.856, -9.298, 3},
	{"Aberdeen", 57.150, -2.094, 3}, {"Inverness", 57.478, -4.224, 3}, {"Dundee", 56.462, -2.971, 3},
	{"Swansea", 51.621, -3.944, 3}, {"Plymouth", 50.376, -4.143, 3}, {"Exeter", 50.718, -3.534, 3},
	{"Southampton", 50.910, -1.404, 3}, {"Norwich", 52.630, 1.297, 3}, {"Nottingham", 52.954, -1.158, 3},
	{"Hull", 53.745, -0.336, 3}, {"Carlisle", 54.892, -2.932, 3}, {"York", 53.960, -1.087, 3},
	{"Oxford", 51.752, -1.258, 3}, {"Cambridge", 52.205, 0.122, 3}, {"Brest", 48.390, -4.486, 3},
	{"Rennes", 48.117, -1.678, 3},
}
