package countries

import (
	_ "embed"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// countryTable is ISO 3166-1: alpha-2, alpha-3 and English short name, one
// country per line, no final newline. A text file keeps the 249 entries
// reviewable at a glance.
//
//go:embed countries.txt
var countryTable string

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
