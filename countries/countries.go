package countries

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// countryTable is ISO 3166-1: alpha-2, alpha-3 and English short name, one
// country per line. A text table keeps the 249 entries reviewable at a glance.
const countryTable = `AD AND Andorra
AE ARE United Arab Emirates
AF AFG Afghanistan
AG ATG Antigua and Barbuda
AI AIA Anguilla
AL ALB Albania
AM ARM Armenia
AO AGO Angola
AQ ATA Antarctica
AR ARG Argentina
AS ASM American Samoa
AT AUT Austria
AU AUS Australia
AW ABW Aruba
AX ALA Åland Islands
AZ AZE Azerbaijan
BA BIH Bosnia and Herzegovina
BB BRB Barbados
BD BGD Bangladesh
BE BEL Belgium
BF BFA Burkina Faso
BG BGR Bulgaria
BH BHR Bahrain
BI BDI Burundi
BJ BEN Benin
BL BLM Saint Barthélemy
BM BMU Bermuda
BN BRN Brunei Darussalam
BO BOL Bolivia
BQ BES Bonaire, Sint Eustatius and Saba
BR BRA Brazil
BS BHS Bahamas
BT BTN Bhutan
BV BVT Bouvet Island
BW BWA Botswana
BY BLR Belarus
BZ BLZ Belize
CA CAN Canada
CC CCK Cocos (Keeling) Islands
CD COD Congo, Democratic Republic of the
CF CAF Central African Republic
CG COG Congo
CH CHE Switzerland
CI CIV Côte d'Ivoire
CK COK Cook Islands
CL CHL Chile
CM CMR Cameroon
CN CHN China
CO COL Colombia
CR CRI Costa Rica
CU CUB Cuba
CV CPV Cabo Verde
CW CUW Curaçao
CX CXR Christmas Island
CY CYP Cyprus
CZ CZE Czechia
DE DEU Germany
DJ DJI Djibouti
DK DNK Denmark
DM DMA Dominica
DO DOM Dominican Republic
DZ DZA Algeria
EC ECU Ecuador
EE EST Estonia
EG EGY Egypt
EH ESH Western Sahara
ER ERI Eritrea
ES ESP Spain
ET ETH Ethiopia
FI FIN Finland
FJ FJI Fiji
FK FLK Falkland Islands
FM FSM Micronesia
FO FRO Faroe Islands
FR FRA France
GA GAB Gabon
GB GBR United Kingdom
GD GRD Grenada
GE GEO Georgia
GF GUF French Guiana
GG GGY Guernsey
GH GHA Ghana
GI GIB Gibraltar
GL GRL Greenland
GM GMB Gambia
GN GIN Guinea
GP GLP Guadeloupe
GQ GNQ Equatorial Guinea
GR GRC Greece
GS SGS South Georgia and the South Sandwich Islands
GT GTM Guatemala
GU GUM Guam
GW GNB Guinea-Bissau
GY GUY Guyana
HK HKG Hong Kong
HM HMD Heard Island and McDonald Islands
HN HND Honduras
HR HRV Croatia
HT HTI Haiti
HU HUN Hungary
ID IDN Indonesia
IE IRL Ireland
IL ISR Israel
IM IMN Isle of Man
IN IND India
IO IOT British Indian Ocean Territory
IQ IRQ Iraq
IR IRN Iran
IS ISL Iceland
IT ITA Italy
JE JEY Jersey
JM JAM Jamaica
JO JOR Jordan
JP JPN Japan
KE KEN Kenya
KG KGZ Kyrgyzstan
KH KHM Cambodia
KI KIR Kiribati
KM COM Comoros
KN KNA Saint Kitts and Nevis
KP PRK North Korea
KR KOR South Korea
KW KWT Kuwait
KY CYM Cayman Islands
KZ KAZ Kazakhstan
LA LAO Laos
LB LBN Lebanon
LC LCA Saint Lucia
LI LIE Liechtenstein
LK LKA Sri Lanka
LR LBR Liberia
LS LSO Lesotho
LT LTU Lithuania
LU LUX Luxembourg
LV LVA Latvia
LY LBY Libya
MA MAR Morocco
MC MCO Monaco
MD MDA Moldova
ME MNE Montenegro
MF MAF Saint Martin (French part)
MG MDG Madagascar
MH MHL Marshall Islands
MK MKD North Macedonia
ML MLI Mali
MM MMR Myanmar
MN MNG Mongolia
MO MAC Macao
MP MNP Northern Mariana Islands
MQ MTQ Martinique
MR MRT Mauritania
MS MSR Montserrat
MT MLT Malta
MU MUS Mauritius
MV MDV Maldives
MW MWI Malawi
MX MEX Mexico
MY MYS Malaysia
MZ MOZ Mozambique
NA NAM Namibia
NC NCL New Caledonia
NE NER Niger
NF NFK Norfolk Island
NG NGA Nigeria
NI NIC Nicaragua
NL NLD Netherlands
NO NOR Norway
NP NPL Nepal
NR NRU Nauru
NU NIU Niue
NZ NZL New Zealand
OM OMN Oman
PA PAN Panama
PE PER Peru
PF PYF French Polynesia
PG PNG Papua New Guinea
PH PHL Philippines
PK PAK Pakistan
PL POL Poland
PM SPM Saint Pierre and Miquelon
PN PCN Pitcairn
PR PRI Puerto Rico
PS PSE Palestine, State of
PT PRT Portugal
PW PLW Palau
PY PRY Paraguay
QA QAT Qatar
RE REU Réunion
RO ROU Romania
RS SRB Serbia
RU RUS Russia
RW RWA Rwanda
SA SAU Saudi Arabia
SB SLB Solomon Islands
SC SYC Seychelles
SD SDN Sudan
SE SWE Sweden
SG SGP Singapore
SH SHN Saint Helena, Ascension and Tristan da Cunha
SI SVN Slovenia
SJ SJM Svalbard and Jan Mayen
SK SVK Slovakia
SL SLE Sierra Leone
SM SMR San Marino
SN SEN Senegal
SO SOM Somalia
SR SUR Suriname
SS SSD South Sudan
ST STP Sao Tome and Principe
SV SLV El Salvador
SX SXM Sint Maarten (Dutch part)
SY SYR Syria
SZ SWZ Eswatini
TC TCA Turks and Caicos Islands
TD TCD Chad
TF ATF French Southern Territories
TG TGO Togo
TH THA Thailand
TJ TJK Tajikistan
TK TKL Tokelau
TL TLS Timor-Leste
TM TKM Turkmenistan
TN TUN Tunisia
TO TON Tonga
TR TUR Türkiye
TT TTO Trinidad and Tobago
TV TUV Tuvalu
TW TWN Taiwan
TZ TZA Tanzania
UA UKR Ukraine
UG UGA Uganda
UM UMI United States Minor Outlying Islands
US USA United States
UY URY Uruguay
UZ UZB Uzbekistan
VA VAT Holy See
VC VCT Saint Vincent and the Grenadines
VE VEN Venezuela
VG VGB Virgin Islands (British)
VI VIR Virgin Islands (U.S.)
VN VNM Viet Nam
VU VUT Vanuatu
WF WLF Wallis and Futuna
WS WSM Samoa
YE YEM Yemen
YT MYT Mayotte
ZA ZAF South Africa
ZM ZMB Zambia
ZW ZWE Zimbabwe`

// countryAliases are names people write that are not the short names above.
// NI means Northern Ireland here rather than Nicaragua: the pipeline's data is
// Irish and British, where "NI" is almost always Northern Ireland.
var countryAliases = map[string]string{
	// Ireland
	"Éire": "IE", "Eire": "IE", "Republic of Ireland": "IE", "ROI": "IE",
	"Ireland Republic": "IE", "Irish Republic": "IE", "Southern Ireland": "IE",
	"Poblacht na hÉireann": "IE",
	// United Kingdom and its nations
	"UK": "GB", "U.K.": "GB", "Great Britain": "GB", "Britain": "GB",
	"United Kingdom of Great Britain and Northern Ireland": "GB",
	"England": "GB", "Scotland": "GB", "Wales": "GB", "Cymru": "GB",
	"Northern Ireland": "GB", "N Ireland": "GB", "NI": "GB", "Alba": "GB",
	"ENG": "GB", "SCO": "GB", "WLS": "GB", "NIR": "GB",
	// Official or older names of other countries
	"United States of America": "US", "America": "US", "U.S.A.": "US",
	"Bolivia, Plurinational State of": "BO", "Brunei": "BN",
	"Cape Verde": "CV", "Ivory Coast": "CI", "Czech Republic": "CZ",
	"Democratic Republic of the Congo": "CD", "DR Congo": "CD", "DRC": "CD",
	"Republic of the Congo": "CG", "Congo-Brazzaville": "CG",
	"Falkland Islands (Malvinas)": "FK", "Micronesia, Federated States of": "FM",
	"Holland": "NL", "The Netherlands": "NL", "Deutschland": "DE",
	"Iran, Islamic Republic of": "IR", "Korea, Republic of": "KR",
	"Republic of Korea": "KR", "Korea": "KR",
	"Korea, Democratic People's Republic of": "KP",
	"Lao People's Democratic Republic":       "LA", "Macau": "MO",
	"Moldova, Republic of": "MD", "Macedonia": "MK", "Burma": "MM",
	"Palestine": "PS", "Russian Federation": "RU", "Syrian Arab Republic": "SY",
	"Swaziland": "SZ", "Turkey": "TR", "Tanzania, United Republic of": "TZ",
	"Taiwan, Province of China": "TW", "Vatican": "VA", "Vatican City": "VA",
	"Venezuela, Bolivarian Republic of": "VE", "Vietnam": "VN",
	"East Timor": "TL", "UAE": "AE", "The Gambia": "GM", "The Bahamas": "BS",
	"Sao Tome": "ST", "St Lucia": "LC", "St Kitts and Nevis": "KN",
	"St Vincent and the Grenadines": "VC", "Saint Helena": "SH",
	"British Virgin Islands": "VG", "US Virgin Islands": "VI",
	"Isle of Man": "IM", "Channel Islands": "GB",
}

var (
	countryByKey  map[string]string
	countryByISO2 map[string]string
)

func init() {
	countryByKey = make(map[string]string, 1024)
	countryByISO2 = make(map[string]string, 256)
	for line := range strings.SplitSeq(countryTable, "\n") {
		a2, rest, _ := strings.Cut(line, " ")
		a3, name, _ := strings.Cut(rest, " ")
		countryByISO2[a2] = name
		countryByKey[countryKey(a2)] = a2
		countryByKey[countryKey(a3)] = a2
		countryByKey[countryKey(name)] = a2
		// "Congo, Democratic Republic of the" is also written without the
		// inversion.
		if head, tail, ok := strings.Cut(name, ", "); ok {
			countryByKey[countryKey(tail+" "+head)] = a2
		}
	}
	for alias, iso := range countryAliases {
		countryByKey[countryKey(alias)] = iso
	}
}

// countryKey folds case, accents, punctuation and spaces away, and a leading
// "the", so that "the Netherlands", "NETHERLANDS" and "Nether-lands" meet.
func countryKey(s string) string { return string(appendCountryKey(nil, s)) }

// appendCountryKey appends the countryKey of s to dst.
func appendCountryKey(dst []byte, s string) []byte {
	start := len(dst)
	if countryIsASCII(s) {
		// Most values are plain ASCII: skip the decomposition.
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case c == '&':
				dst = append(dst, "and"...)
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				dst = append(dst, c)
			case 'A' <= c && c <= 'Z':
				dst = append(dst, c+'a'-'A')
			}
		}
	} else {
		for _, r := range norm.NFD.String(s) {
			switch {
			case unicode.Is(unicode.Mn, r):
				// accent split off by NFD
			case r == '&':
				dst = append(dst, "and"...)
			case unicode.IsLetter(r) || unicode.IsDigit(r):
				dst = utf8.AppendRune(dst, unicode.ToLower(r))
			}
		}
	}
	// A leading "the" goes: no country's name begins with it.
	if k := dst[start:]; len(k) > 5 && string(k[:3]) == "the" {
		dst = append(dst[:start], k[3:]...)
	}
	return dst
}

func countryIsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// ISO returns the ISO 3166-1 alpha-2 code for a country written as an
// alpha-2 or alpha-3 code, an English name or a common variant, ignoring case,
// accents, punctuation and spaces; ok is false when it is not recognised.
func ISO(s string) (iso string, ok bool) {
	if len(s) > 128 {
		return "", false
	}
	// The key is built on the stack: m[string(b)] does not allocate.
	var buf [512]byte
	k := appendCountryKey(buf[:0], s)
	if len(k) == 0 {
		return "", false
	}
	iso, ok = countryByKey[string(k)]
	return iso, ok
}

// Name returns the English short name of an ISO alpha-2 code (any
// case), or "" when the code is unknown.
func Name(iso string) string {
	return countryByISO2[strings.ToUpper(strings.TrimSpace(iso))]
}

// Postal returns the country whose postcode system an ISO code uses:
// Jersey, Guernsey and the Isle of Man have their own ISO codes but UK
// postcodes, and people write their country as "United Kingdom" or
// "Channel Islands"; they match as one. Other codes are returned as given.
func Postal(iso string) string {
	switch iso {
	case "JE", "GG", "IM":
		return "GB"
	}
	return iso
}
