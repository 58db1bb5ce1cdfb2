package gazetteer

import "strings"

// ukCountyNames are the counties people write in UK addresses: the
// ceremonial counties of England, the former postal counties, the Welsh
// preserved counties and principal areas, the Scottish counties and
// council areas, and the six of Northern Ireland. Names that are also
// post towns (Cardiff, Durham) are left out: a town is a town. Royal
// Mail PAF has no county, so a reference made from it does not know
// them; an address line holding one is the county, not an address word.
const ukCountyNames = `Bedfordshire|Berkshire|Buckinghamshire|Cambridgeshire|Cheshire|City of London|Cornwall|
Cumbria|Derbyshire|Devon|Dorset|County Durham|East Riding of Yorkshire|East Sussex|Essex|Gloucestershire|
Greater London|Greater Manchester|Hampshire|Herefordshire|Hertfordshire|Isle of Wight|Kent|Lancashire|
Leicestershire|Lincolnshire|Merseyside|Norfolk|North Yorkshire|Northamptonshire|Northumberland|
Nottinghamshire|Oxfordshire|Rutland|Shropshire|Somerset|South Yorkshire|Staffordshire|Suffolk|Surrey|
Tyne and Wear|Warwickshire|West Midlands|West Sussex|West Yorkshire|Wiltshire|Worcestershire|
Avon|Cleveland|Humberside|North Humberside|South Humberside|Middlesex|Cumberland|Westmorland|Huntingdonshire|
Clwyd|Dyfed|Gwent|Gwynedd|Mid Glamorgan|South Glamorgan|West Glamorgan|Powys|Isle of Anglesey|Anglesey|
Denbighshire|Flintshire|Ceredigion|Pembrokeshire|Carmarthenshire|Neath Port Talbot|Vale of Glamorgan|
Rhondda Cynon Taf|Blaenau Gwent|Torfaen|Monmouthshire|Aberdeenshire|Angus|Argyll|Argyll and Bute|Ayrshire|
North Ayrshire|South Ayrshire|East Ayrshire|Banffshire|Berwickshire|Caithness|Clackmannanshire|
Dumfriesshire|Dumfries and Galloway|Dunbartonshire|East Dunbartonshire|West Dunbartonshire|East Lothian|
Midlothian|West Lothian|Fife|Highland|Inverness-shire|Kincardineshire|Kinross-shire|Kirkcudbrightshire|
Lanarkshire|North Lanarkshire|South Lanarkshire|Moray|Morayshire|Nairnshire|Orkney|Peeblesshire|Perthshire|
Perth and Kinross|Renfrewshire|East Renfrewshire|Ross-shire|Roxburghshire|Scottish Borders|Selkirkshire|
Shetland|Stirlingshire|Sutherland|Wigtownshire|Western Isles|County Antrim|County Armagh|County Down|
County Fermanagh|County Londonderry|County Tyrone|Co Antrim|Co Armagh|Co Down|Co Fermanagh|Co Londonderry|Co Tyrone`

// ukCounties are the folded keys of ukCountyNames.
var ukCounties = func() map[string]bool {
	m := make(map[string]bool, 160)
	for n := range strings.SplitSeq(ukCountyNames, "|") {
		if k := Fold(strings.TrimSpace(n)); k != "" {
			m[k] = true
		}
	}
	return m
}()
