package gazetteer

// irishPlaceNames are the Irish-language names of counties and towns, as
// people write them on letters ("Gaillimh", "Co. na Gaillimhe"): the
// county in the nominative and in the genitive that follows "Co." or
// "Contae", and the post towns (logainm.ie, An Post). The reference holds
// the English names; an Irish one stands for the English one, a change
// of language, not of place.
var irishPlaceNames = map[string][]string{
	// Counties of the Republic.
	"Carlow": {"Ceatharlach", "Cheatharlach"}, "Cavan": {"An Cabhán", "an Chabháin"},
	"Clare": {"An Clár", "an Chláir"}, "Cork": {"Corcaigh", "Chorcaí"},
	"Donegal": {"Dún na nGall", "Dhún na nGall"}, "Dublin": {"Baile Átha Cliath", "Bhaile Átha Cliath"},
	"Galway": {"Gaillimh", "na Gaillimhe"}, "Kerry": {"Ciarraí", "Chiarraí"},
	"Kildare": {"Cill Dara", "Chill Dara"}, "Kilkenny": {"Cill Chainnigh", "Chill Chainnigh"},
	"Laois": {"Laoise"}, "Leitrim": {"Liatroim", "Liatroma"},
	"Limerick": {"Luimneach", "Luimnigh"}, "Longford": {"An Longfort", "an Longfoirt"},
	"Louth": {"Lú"}, "Mayo": {"Maigh Eo", "Mhaigh Eo"}, "Meath": {"An Mhí", "na Mí"},
	"Monaghan": {"Muineachán", "Mhuineacháin"}, "Offaly": {"Uíbh Fhailí"},
	"Roscommon": {"Ros Comáin"}, "Sligo": {"Sligeach", "Shligigh"},
	"Tipperary": {"Tiobraid Árann", "Thiobraid Árann"}, "Waterford": {"Port Láirge", "Phort Láirge"},
	"Westmeath": {"An Iarmhí", "na hIarmhí"}, "Wexford": {"Loch Garman"},
	"Wicklow": {"Cill Mhantáin", "Chill Mhantáin"},
	// Counties of Northern Ireland.
	"Antrim": {"Aontroim", "Aontroma"}, "Armagh": {"Ard Mhacha"}, "Down": {"An Dún", "an Dúin"},
	"Fermanagh": {"Fear Manach", "Fhear Manach"}, "Londonderry": {"Doire", "Dhoire"},
	"Tyrone": {"Tír Eoghain", "Thír Eoghain"},
	// Towns.
	"Swords": {"Sord"}, "Lucan": {"Leamhcán"}, "Malahide": {"Mullach Íde"}, "Balbriggan": {"Baile Brigín"},
	"Blackrock": {"An Charraig Dhubh"}, "Tallaght": {"Tamhlacht"}, "Clondalkin": {"Cluain Dolcáin"},
	"Howth": {"Binn Éadair"}, "Skerries": {"Na Sceirí"}, "Rush": {"An Ros"}, "Maynooth": {"Maigh Nuad"},
	"Leixlip": {"Léim an Bhradáin"}, "Bagenalstown": {"Muine Bheag"}, "Belturbet": {"Béal Tairbirt"},
	"Bailieborough": {"Coill an Chollaigh"}, "Ennis": {"Inis"}, "Shannon": {"Sionainn"},
	"Kilrush": {"Cill Rois"}, "Kilkee": {"Cill Chaoi"}, "Ennistymon": {"Inis Díomáin"},
	"Mallow": {"Mala"}, "Midleton": {"Mainistir na Corann"}, "Skibbereen": {"An Sciobairín"},
	"Bandon": {"Droichead na Bandan"}, "Carrigaline": {"Carraig Uí Leighin"}, "Youghal": {"Eochaill"},
	"Cobh": {"An Cóbh"}, "Kinsale": {"Cionn tSáile"}, "Clonakilty": {"Cloich na Coillte"},
	"Fermoy": {"Mainistir Fhear Maí"}, "Bantry": {"Beanntraí"}, "Macroom": {"Maigh Chromtha"},
	"Letterkenny": {"Leitir Ceanainn"}, "Lifford": {"Leifear"}, "Buncrana": {"Bun Cranncha"},
	"Bundoran": {"Bun Dobhráin"}, "Ballyshannon": {"Béal Átha Seanaidh"},
	"Ballinasloe": {"Béal Átha na Sluaighe"}, "Tuam": {"Tuaim"}, "Clifden": {"An Clochán"},
	"Loughrea": {"Baile Locha Riach"}, "Oranmore": {"Órán Mór"}, "Athenry": {"Baile Átha an Rí"},
	"Tralee": {"Trá Lí"}, "Killarney": {"Cill Airne"}, "Listowel": {"Lios Tuathail"},
	"Dingle": {"An Daingean"}, "Kenmare": {"Neidín"}, "Cahersiveen": {"Cathair Saidhbhín"},
	"Castleisland": {"Oileán Ciarraí"}, "Naas": {"An Nás"}, "Newbridge": {"An Droichead Nua"},
	"Celbridge": {"Cill Droichid"}, "Athy": {"Baile Átha Í"}, "Kilcock": {"Cill Choca"},
	"Portlaoise": {"Port Laoise"}, "Mountmellick": {"Móinteach Mílic"},
	"Portarlington": {"Cúil an tSúdaire"}, "Carrick-on-Shannon": {"Cora Droma Rúisc"},
	"Manorhamilton": {"Cluainín"}, "Newcastle West": {"An Caisleán Nua"},
	"Abbeyfeale": {"Mainistir na Féile"}, "Kilmallock": {"Cill Mocheallóg"},
	"Ballymahon": {"Baile Uí Mhatháin"}, "Granard": {"Gránard"},
	"Drogheda": {"Droichead Átha"}, "Dundalk": {"Dún Dealgan"}, "Ardee": {"Baile Átha Fhirdhia"},
	"Castlebar": {"Caisleán an Bharraigh"}, "Ballina": {"Béal an Átha"}, "Westport": {"Cathair na Mart"},
	"Ballinrobe": {"Baile an Róba"}, "Claremorris": {"Clár Chlainne Mhuiris"},
	"Belmullet": {"Béal an Mhuirthead"}, "Ballyhaunis": {"Béal Átha hAmhnais"},
	"Navan": {"An Uaimh"}, "Kells": {"Ceanannas"}, "Ashbourne": {"Cill Dhéagláin"},
	"Trim": {"Baile Átha Troim"}, "Dunboyne": {"Dún Búinne"},
	"Carrickmacross": {"Carraig Mhachaire Rois"}, "Clones": {"Cluain Eois"},
	"Castleblayney": {"Baile na Lorgan"}, "Tullamore": {"Tulach Mhór"}, "Birr": {"Biorra"},
	"Edenderry": {"Éadan Doire"}, "Boyle": {"Mainistir na Búille"},
	"Castlerea": {"An Caisleán Riabhach"}, "Ballymote": {"Baile an Mhóta"},
	"Tobercurry": {"Tobar an Choire"}, "Clonmel": {"Cluain Meala"}, "Nenagh": {"An tAonach"},
	"Thurles": {"Durlas"}, "Cashel": {"Caiseal"}, "Cahir": {"An Chathair"},
	"Carrick-on-Suir": {"Carraig na Siúire"}, "Roscrea": {"Ros Cré"},
	"Dungarvan": {"Dún Garbhán"}, "Tramore": {"Trá Mhór"}, "Lismore": {"Lios Mór"},
	"Mullingar": {"An Muileann gCearr"}, "Athlone": {"Baile Átha Luain"},
	"Enniscorthy": {"Inis Córthaidh"}, "Gorey": {"Guaire"}, "New Ross": {"Ros Mhic Thriúin"},
	"Bunclody": {"Bun Clóidí"}, "Rosslare": {"Ros Láir"}, "Bray": {"Bré"}, "Arklow": {"An tInbhear Mór"},
	"Greystones": {"Na Clocha Liatha"}, "Blessington": {"Baile Coimín"},
	"Baltinglass": {"Bealach Conglais"}, "Rathdrum": {"Ráth Droma"},
	"Belfast": {"Béal Feirste"}, "Newry": {"An tIúr"},
	"Enniskillen": {"Inis Ceithleann"}, "Dungannon": {"Dún Geanainn"}, "Omagh": {"An Ómaigh"},
	"Lisburn": {"Lios na gCearrbhach"},
}

// irishKeys maps the folded key of an Irish name to the folded English
// one. Names shared by a town and its county ("Gaillimh") map to the one
// English key that both bear.
var irishKeys = func() map[string]string {
	m := make(map[string]string, 2*len(irishPlaceNames))
	for en, names := range irishPlaceNames {
		for _, n := range names {
			m[Fold(n)] = Fold(en)
		}
	}
	return m
}()
