package synth

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
