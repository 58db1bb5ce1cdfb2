package gazetteer

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// foldTable covers the letters Irish and British addresses actually use, so
// the common case avoids Unicode decomposition.
var foldTable = map[rune]string{
	'á': "a", 'à': "a", 'â': "a", 'ä': "a", 'ã': "a", 'å': "a", 'ā': "a",
	'é': "e", 'è': "e", 'ê': "e", 'ë': "e", 'ē': "e",
	'í': "i", 'ì': "i", 'î': "i", 'ï': "i", 'ī': "i",
	'ó': "o", 'ò': "o", 'ô': "o", 'ö': "o", 'õ': "o", 'ø': "o", 'ō': "o",
	'ú': "u", 'ù': "u", 'û': "u", 'ü': "u", 'ū': "u",
	'ý': "y", 'ÿ': "y", 'ŵ': "w", 'ŷ': "y", 'ñ': "n", 'ç': "c",
	'ß': "ss", 'æ': "ae", 'œ': "oe", 'ð': "d", 'þ': "th", 'ł': "l",
}

// foldRune appends the matching-key form of r to b: lower case, no
// diacritics; punctuation becomes a space, apostrophes vanish so that
// "O'Connell" and "Patrick's" stay one word.
func foldRune(b []byte, r rune) []byte {
	switch {
	case r < utf8.RuneSelf:
		c := byte(r)
		switch {
		case c >= 'A' && c <= 'Z':
			return append(b, c+'a'-'A')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			return append(b, c)
		case c == '\'' || c == '`':
			return b
		case c == '-' || c == '/':
			// Kept so the tokeniser can see number ranges ("12-14");
			// elsewhere they separate words.
			return append(b, c)
		}
		return append(b, ' ')
	case r == '\u2019' || r == '\u2018' || r == '\u00b4':
		return b
	}
	lr := unicode.ToLower(r)
	if s, ok := foldTable[lr]; ok {
		return append(b, s...)
	}
	if unicode.IsLetter(lr) || unicode.IsDigit(lr) {
		var buf [16]byte
		n := utf8.EncodeRune(buf[:], lr)
		out := len(b)
		for _, d := range norm.NFD.String(string(buf[:n])) {
			if d < utf8.RuneSelf {
				c := byte(d)
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				b = append(b, c)
			} else if !unicode.Is(unicode.Mn, d) {
				b = utf8.AppendRune(b, d)
			}
		}
		if len(b) == out {
			return append(b, ' ')
		}
		return b
	}
	return append(b, ' ')
}

// Fold returns the matching-key form of s: lower case, diacritics removed,
// apostrophes dropped, other punctuation turned into single spaces. It is
// only a key: displayed values keep their spelling ("Dún Laoghaire").
func Fold(s string) string {
	return strings.Join(Tokens(s), " ")
}

// abbreviations maps every spelling of a street type, direction or unit word
// to one canonical key, in both directions at once: "Street", "St" and
// "Saint" all become "st", which is safe because only keys are compared.
var abbreviations = map[string]string{
	"street": "st", "str": "st", "saint": "st", "st": "st",
	"road": "rd", "rd": "rd",
	"avenue": "ave", "av": "ave", "ave": "ave", "avn": "ave",
	"drive": "dr", "drv": "dr", "dr": "dr",
	"lane": "ln", "ln": "ln",
	"close": "cl", "cl": "cl",
	"crescent": "cres", "cres": "cres", "cresc": "cres", "cr": "cres",
	"court": "ct", "ct": "ct", "crt": "ct",
	"park": "pk", "pk": "pk", "pairc": "pk",
	"place": "pl", "pl": "pl",
	"square": "sq", "sq": "sq",
	"terrace": "tce", "terr": "tce", "tce": "tce", "ter": "tce",
	"gardens": "gdns", "gdns": "gdns", "gardns": "gdns", "gdn": "gdns",
	"grove": "gr", "gro": "gr", "gr": "gr",
	"heights": "hts", "hts": "hts",
	"upper": "upr", "upr": "upr",
	"lower": "lwr", "lr": "lwr", "lwr": "lwr",
	"north": "n", "n": "n", "south": "s", "s": "s",
	"east": "e", "e": "e", "west": "w", "w": "w",
	"mount": "mt", "mt": "mt",
	"apartment": "flat", "apt": "flat", "apts": "flat", "flat": "flat",
	"unit": "flat", "suite": "flat", "appt": "flat",
	// PAF writes the rooms of halls of residence as "Room 4"; people
	// write "Rm 4" and "Flt 2".
	"room": "flat", "rm": "flat", "flt": "flat",
	"block": "blk", "blk": "blk", "blck": "blk",
	// "Co." before a county name carries nothing the county does not.
	"county": "", "co": "", "cty": "", "contae": "",
	"building": "bldg", "bldg": "bldg", "bldgs": "bldg",
	"house": "ho", "ho": "ho", "hse": "ho",
	"cottage": "cott", "cott": "cott", "cottages": "cott",
	"estate": "est", "est": "est",
	"centre": "ctr", "center": "ctr", "ctr": "ctr",
	"view": "vw", "vw": "vw",
	"way": "wy", "wy": "wy",
	"green": "grn", "grn": "grn",
	"lawns": "lawn", "lawn": "lawn",
	"limited": "ltd", "ltd": "ltd",
	"post": "po", "po": "po", "pob": "pobox",
	"no": "", "number": "", "nr": "", "the": "", "of": "",
	"ireland": "", "eire": "", "rep": "", "republic": "", "uk": "", "gb": "", "united": "", "kingdom": "",
}

// streetTypes are the keys of the street types: "Elm Road" and "Elm Lane"
// differ in one, and people write the one they remember, or none.
var streetTypes = map[string]bool{
	"st": true, "rd": true, "ave": true, "dr": true, "ln": true, "cl": true, "cres": true,
	"ct": true, "pk": true, "pl": true, "sq": true, "tce": true, "gdns": true, "gr": true,
	"hts": true, "wy": true, "vw": true, "grn": true, "lawn": true, "mews": true, "row": true,
	"walk": true, "rise": true, "vale": true, "quay": true, "parade": true,
}

// longForms are the spelled-out words of abbreviations, for typo matching.
var longForms = func() []string {
	var l []string
	for w, c := range abbreviations {
		if len(w) >= 4 && c != "" && c != w {
			l = append(l, w)
		}
	}
	slices.Sort(l)
	return l
}()

// canon returns the canonical key of a folded word ("" for words that carry
// no information for matching).
func canon(w string) string {
	if c, ok := abbreviations[w]; ok {
		return c
	}
	return w
}

// isNumberToken reports whether a token is a house number, a lettered number
// ("12a") or a range ("12-14").
func isNumberToken(t string) bool { return t != "" && t[0] >= '0' && t[0] <= '9' }

// Tokens returns the canonical matching tokens of s: folded words with
// abbreviations unified, stop words removed, "12 A" joined into "12a" and
// ranges such as "12-14" kept whole.
func Tokens(s string) []string { return appendTokens(nil, s) }

// appendTokens is Tokens appending to dst, to spare allocations on hot paths.
func appendTokens(dst []string, s string) []string {
	var stack [128]byte
	b := stack[:0]
	for _, r := range s {
		b = foldRune(b, r)
	}
	first := len(dst)
	// The tokens are substrings of one copy of the folded text: one
	// allocation per call rather than one per word.
	fs := string(b)
	i := 0
	for i < len(b) {
		for i < len(b) && (b[i] == ' ' || b[i] == '-' || b[i] == '/') {
			i++
		}
		if i >= len(b) {
			break
		}
		st := i
		for i < len(b) && b[i] != ' ' && b[i] != '-' && b[i] != '/' {
			i++
		}
		// A range "12-14" (or "12/14") stays one token.
		if i+1 < len(b) && (b[i] == '-' || b[i] == '/') && isDigitRun(fs[st:i]) && b[i+1] >= '0' && b[i+1] <= '9' {
			i++
			for i < len(b) && b[i] != ' ' && b[i] != '-' && b[i] != '/' {
				i++
			}
		}
		w := fs[st:i]
		if strings.IndexByte(w, '/') > 0 {
			w = strings.ReplaceAll(w, "/", "-") // "12/14" is the range "12-14"
		}
		if w == "c" && i < len(b) && b[i] == '/' {
			// "c/o" (care of) is noise, not a word.
			j := i + 1
			if j < len(b) && b[j] == 'o' && (j+1 == len(b) || b[j+1] == ' ') {
				i = j + 1
				continue
			}
		}
		// "12 A" is the lettered number "12a".
		if len(w) == 1 && w[0] >= 'a' && w[0] <= 'z' && len(dst) > first && isDigitRun(dst[len(dst)-1]) {
			dst[len(dst)-1] += w
			continue
		}
		// "Block 1" and "Block A" are one word: the number names the
		// block, not the house, and tells blocks of one hall apart.
		if len(dst) > first && dst[len(dst)-1] == "blk" && (isDigitRun(w) || len(w) == 1 && w[0] >= 'a' && w[0] <= 'z') {
			dst[len(dst)-1] = "blk" + w
			continue
		}
		// "14Elm" is the number 14 glued to the street "Elm"; "12a" and
		// ordinals ("2nd") stay whole.
		if d := gluedNumber(w); d > 0 {
			dst = append(dst, w[:d])
			w = w[d:]
		}
		// "Rm4", "Flat12B", "Apt3": a unit word glued to its number is
		// the word and the number.
		if d := gluedUnit(w); d > 0 {
			if c := canon(w[:d]); c != "" {
				dst = append(dst, c)
			}
			w = w[d:]
		}
		if w == "o" && len(dst) > first && dst[len(dst)-1] == "p" {
			dst[len(dst)-1] = "po" // "P.O."
			continue
		}
		if w == "office" && len(dst) > first && dst[len(dst)-1] == "po" {
			continue // "Post Office Box"
		}
		if w == "box" && len(dst) > first && dst[len(dst)-1] == "po" {
			dst[len(dst)-1] = "pobox"
			continue
		}
		w = canon(w)
		if w == "" {
			continue
		}
		dst = append(dst, w)
	}
	return dst
}

// gluedNumber returns where the word starts in a house number written
// against it ("14elm" gives 2), or 0 when w is not one.
func gluedNumber(w string) int {
	d := 0
	for d < len(w) && w[d] >= '0' && w[d] <= '9' {
		d++
	}
	if d == 0 || len(w)-d < 2 {
		return 0
	}
	if w[d:] == ordinal(w[:d]) {
		return 0 // "21st", "2nd"; "18st" is 18 against "St."
	}
	for i := d; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return 0
		}
	}
	return d
}

// unitWords are the words of a flat, room or unit that people glue to its
// number ("Rm4", "Apt12", "No5"), folded.
var unitWords = []string{"apartment", "apt", "flat", "flt", "room", "rm", "unit", "suite", "no"}

// gluedUnit returns where the number starts in a unit word glued to it
// ("rm4" gives 2, "flat12b" gives 4, "flata" gives 4), or 0 when w is not
// one.
func gluedUnit(w string) int {
	switch {
	case len(w) < 3:
		return 0
	case w[0] != 'a' && w[0] != 'f' && w[0] != 'r' && w[0] != 'u' && w[0] != 's' && w[0] != 'n':
		return 0 // no unit word starts so: most words, cheaply
	}
	for _, u := range unitWords {
		if len(w) <= len(u) || w[:len(u)] != u {
			continue
		}
		rest := w[len(u):]
		if len(rest) == 1 && (u == "flat" || u == "flt" || u == "apt" || u == "rm") && rest[0] >= 'a' && rest[0] <= 'z' && rest[0] != 's' {
			// "FlatA", "RmB": a flat named by a letter; not "flats",
			// nor "unite" or "roomy", which are words of their own.
			return len(u)
		}
		// Else a house or flat number: digits and at most one letter
		// after them ("12b").
		d := 0
		for d < len(rest) && rest[d] >= '0' && rest[d] <= '9' {
			d++
		}
		if d > 0 && len(rest)-d <= 1 {
			return len(u)
		}
		return 0
	}
	return 0
}

// ordinal returns the English ordinal suffix of a number of digits.
func ordinal(n string) string {
	last := n[len(n)-1]
	if len(n) >= 2 && n[len(n)-2] == '1' {
		return "th" // 11th, 12th, 13th
	}
	switch last {
	case '1':
		return "st"
	case '2':
		return "nd"
	case '3':
		return "rd"
	}
	return "th"
}

func isDigitRun(s string) bool {
	if len(s) == 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Tidy returns s with white space collapsed and trimmed; it is how input
// values are shown when nothing better is known.
func Tidy(s string) string {
	if isTidy(s) {
		return s // most values are; spare the copy
	}
	return strings.Join(strings.Fields(s), " ")
}

// isTidy reports whether Tidy would return s unchanged: no white space
// (as strings.Fields sees it) but single spaces between words.
func isTidy(s string) bool {
	space := true // at the start, as after a space
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if unicode.IsSpace(r) {
				return false
			}
			space = false
			i += size
			continue
		}
		switch c {
		case ' ':
			if space {
				return false
			}
			space = true
		case '\t', '\n', '\v', '\f', '\r':
			return false
		default:
			space = false
		}
		i++
	}
	return !space || s == ""
}

// dlDistance1 reports whether a and b are at most one edit apart (insert,
// delete, substitute, or swap of neighbours): the typo tolerance.
func dlDistance1(a, b string) bool {
	if a == b {
		return true
	}
	la, lb := len(a), len(b)
	if la-lb > 1 || lb-la > 1 {
		return false
	}
	i := 0
	for i < la && i < lb && a[i] == b[i] {
		i++
	}
	switch {
	case la == lb:
		if a[i+1:] == b[i+1:] {
			return true
		}
		return i+1 < la && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:]
	case la > lb:
		return a[i+1:] == b[i:]
	default:
		return a[i:] == b[i+1:]
	}
}

// smallWords stay in lower case inside a place name written in mixed
// case: "Stratford-upon-Avon", "Newcastle upon Tyne", "Bury St Edmunds".
var smallWords = map[string]bool{
	"upon": true, "on": true, "in": true, "under": true, "by": true, "the": true, "next": true,
	"le": true, "la": true, "de": true, "en": true, "and": true, "of": true, "na": true,
}

// DisplayCase returns a name written all in capitals ("NEWCASTLE UPON
// TYNE", as PAF writes post towns) in mixed case ("Newcastle upon
// Tyne"); a name with any lower-case letter is returned as it is.
func DisplayCase(s string) string {
	hasUpper := false
	for _, r := range s {
		if unicode.IsLower(r) {
			return s
		}
		hasUpper = hasUpper || unicode.IsUpper(r)
	}
	if !hasUpper {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	word := 0 // words seen, to keep the first one capitalised
	var cur []rune
	flush := func() {
		if len(cur) == 0 {
			return
		}
		// Rune by rune, so that no letter changes into several: the
		// matching key of the name stays the same.
		rs := make([]rune, len(cur))
		for i, r := range cur {
			rs[i] = unicode.ToLower(r)
		}
		w := string(rs)
		if strings.ContainsAny(w, "0123456789") {
			b.WriteString(string(cur)) // "6W" in "DUBLIN 6W" is a code
		} else if word > 0 && smallWords[w] {
			b.WriteString(w)
		} else {
			rs[0] = unicode.ToUpper(rs[0])
			// "O'BRIEN" is "O'Brien", "KING'S" is "King's".
			if len(rs) > 3 && rs[1] == '\'' {
				rs[2] = unicode.ToUpper(rs[2])
			}
			b.WriteString(string(rs))
		}
		word++
		cur = cur[:0]
	}
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '\u2019' {
			cur = append(cur, r)
			continue
		}
		flush()
		b.WriteRune(r)
	}
	flush()
	return b.String()
}
