package gazetteer

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/addrclean/addrclean/countries"
)

// qTok is one word of the query's address lines with its vocabulary id (-1
// when unknown) and the known words one typo away from it.
type qTok struct {
	w    string
	id   int32
	alts []uint32
	idf  float32
	typ  bool  // a street type
	part uint8 // the address part (query.addr) it is in, at most 255
}

// query is a Query taken apart: address words and numbers, the postcode,
// and the towns and counties recognised anywhere in it.
type query struct {
	country string
	toks    []qTok
	nums    []string
	sub     string
	subPart int      // 1 + the address part that gave sub; 0 when none
	numIDs  []uint32 // ids of nums in Index.numIDs (noID when unknown)
	subID   uint32   // id of sub; 0 when none, noID when unknown
	pcRecs  []uint32 // the records having the postcode given

	pc     string // canonical postcode found, "" if none
	pcRaw  string // as written
	pcKind PostcodeKind
	pcArea uint32
	pcHash uint32 // postcodeHash(pc)
	// countryKey is country packed (packCountry), 0 when it does not
	// pack: then no record has it.
	countryKey uint16
	towns      []uint32 // towns the input names as its town
	// blockTowns are towns named where a county was expected ("Co.
	// Wicklow" is also the town Wicklow): searched, but not evidence.
	blockTowns []uint32
	regions    []uint32

	poBox   bool // an address part names a PO Box ("PO Box 12", "P.O. Box")
	contact bool // a contact line ("c/o Mary Byrne", "FAO ...") was set aside
	phone   bool // a telephone number ("Tel: 087 123 4567") was set aside
	respelt bool // "S." was read as Saint ("S. Patrick's Road")
	// estateParts has bit i set when address part i names a business
	// park or estate ("Kestrel Business Park", "Northgate Trading Estate").
	estateParts uint64

	addr     []string // address parts without postcode, town and county parts
	cityIn   string   // the input's town, from the city field or a line
	regionIn string   // the input's county, from the region field or a line
	cityKey  string
	regKey   string

	// Working memory of parse and of decide, kept across calls.
	parts  []string
	key    []byte
	ta, tb []string
}

// SplitParts splits lines at newlines, commas and semicolons, appending
// the tidied, non-empty parts to dst: each part is classified on its own,
// because users put "Main St, Ennis" in one cell. The service highlights
// changes per part with it.
func SplitParts(dst, lines []string) []string {
	for _, l := range lines {
		for l != "" {
			// The separators are ASCII, so bytes split as runes would.
			i := strings.IndexAny(l, "\n\r,;")
			p := l
			if i >= 0 {
				p, l = l[:i], l[i+1:]
			} else {
				l = ""
			}
			if p = Tidy(p); p != "" {
				dst = append(dst, p)
			}
		}
	}
	return dst
}

// hasLowerPrefix reports whether strings.ToLower(s) starts with the lower
// case ASCII prefix, without making the lower-case copy when s is ASCII.
func hasLowerPrefix(s, prefix string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			// Some non-ASCII letters lower to ASCII ones ("İ" to "i").
			return strings.HasPrefix(strings.ToLower(s), prefix)
		}
	}
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// joinKey returns toks joined by single spaces in buf, for map lookups
// (m[string(b)] does not allocate).
func joinKey(buf []byte, toks []string) []byte {
	buf = buf[:0]
	for i, t := range toks {
		if i > 0 {
			buf = append(buf, ' ')
		}
		buf = append(buf, t...)
	}
	return buf
}

// contactPrefixes open a line that names a person or department to deliver
// to: care of, for the attention of. Lower case, without their separator.
var contactPrefixes = []string{"c/o", "c.o.", "care of", "fao", "f.a.o.", "f.a.o", "for the attention of", "attn", "attn.", "attention"}

// contactLine reports whether part is a contact line ("c/o Mary Byrne",
// "FAO Accounts", "Attn: J. Smith") and returns what follows the name when
// an address follows it in the same part ("Attn: Mary Byrne 5 Abbey
// Crescent" gives "5 Abbey Crescent"): from the first word that starts with
// a digit.
func contactLine(part string) (string, bool) {
	if part == "" {
		return "", false
	}
	c := part[0] | 0x20
	if c != 'c' && c != 'f' && c != 'a' && part[0] < utf8.RuneSelf {
		return "", false // no prefix can match: the common case, cheaply
	}
	return contactLineSlow(part)
}

// contactLineSlow is contactLine without the shortcut for parts that cannot
// start with a prefix; the tests hold the shortcut to it.
func contactLineSlow(part string) (string, bool) {
	lp := strings.ToLower(part)
	ok := false
	for _, pre := range contactPrefixes {
		if strings.HasPrefix(lp, pre) {
			rest := lp[len(pre):]
			if rest == "" || rest[0] == ' ' || rest[0] == ':' || rest[0] == '-' {
				ok = true
				break
			}
		}
	}
	if !ok {
		return "", false
	}
	words := strings.Fields(part)
	for i, w := range words {
		if i > 0 && w[0] >= '0' && w[0] <= '9' {
			return strings.Join(words[i:], " "), true
		}
	}
	return "", true
}

// phonePrefixes open a telephone number: folded, without their separator.
var phonePrefixes = []string{"tel", "telephone", "ph", "phone", "mob", "mobile", "m", "t", "fax", "cell", "landline"}

// phonePart reports whether part holds a telephone number, alone or after
// the address ("21 Main Street Tel 087 1234567"), and returns the address
// before it. A number is a run of digit groups with 7 to 15 digits: after a
// prefix ("Tel:", "Mob."), or opening with "+" ("+353 1 954 9785"), or a
// whole part opening with 0 with 9 digits or more ("0121 501 4440"), which
// no house number, postcode or range is.
func phonePart(part string) (string, bool) {
	digits := 0
	for i := 0; i < len(part); i++ {
		if part[i] >= '0' && part[i] <= '9' {
			digits++
		}
	}
	if digits < 7 {
		return "", false // the common case, cheaply
	}
	words := strings.Fields(part)
	for i, w := range words {
		n, ok := phoneDigits(words[i:])
		prefixed := false
		if !ok && i+1 < len(words) {
			p := strings.ToLower(strings.TrimRight(w, ":.-"))
			if slices.Contains(phonePrefixes, p) {
				n, ok = phoneDigits(words[i+1:])
				prefixed = true
			}
		}
		switch {
		case !ok:
		case prefixed && n >= 7 || w[0] == '+' && n >= 7 || i == 0 && w[0] == '0' && n >= 9:
			return strings.Join(words[:i], " "), true
		case w[0] == '(' && n >= 9:
			return strings.Join(words[:i], " "), true
		}
	}
	return "", false
}

// phoneDigits reports whether words are only digit groups (with "+",
// "-", ".", "(" and ")") of at most 15 digits, and how many digits.
func phoneDigits(words []string) (int, bool) {
	n := 0
	for _, w := range words {
		for i := 0; i < len(w); i++ {
			switch c := w[i]; {
			case c >= '0' && c <= '9':
				n++
			case c == '+' && i == 0, c == '-', c == '.', c == '(', c == ')':
			default:
				return 0, false
			}
		}
	}
	return n, n > 0 && n <= 15
}

// saintInitial rewrites "S." opening a name ("S. Patrick's Road", "S.
// Helier") as "St", and reports whether it did: the initial is how Saint is
// abbreviated in many hands, but the same letter without its dot is as
// often South, so only "S." is read this way.
func saintInitial(s string) (string, bool) {
	if !strings.Contains(s, "S.") && !strings.Contains(s, "s.") {
		return s, false
	}
	words := strings.Fields(s)
	changed := false
	for i := 0; i+1 < len(words); i++ {
		if w := words[i]; (w == "S." || w == "s.") && isLetterWord(words[i+1]) {
			words[i], changed = "St", true
		}
	}
	if !changed {
		return s, false
	}
	return strings.Join(words, " "), true
}

// isLetterWord reports whether w opens with a letter and is not a single
// letter ("S. A." is initials, not a name).
func isLetterWord(w string) bool {
	r, n := utf8.DecodeRuneInString(w)
	return n < len(w) && unicode.IsLetter(r) && w[n] != '.'
}

// districtKey recognises Dublin postal districts written as "Dublin 2",
// "Dublin 02", "D2", "D02", "D6W" in folded tokens, returning the town key.
func districtKey(toks []string) (string, bool) {
	switch {
	case len(toks) == 2 && toks[0] == "dublin":
		return dublinDistrictKey(toks[1])
	case len(toks) == 4 && toks[0] == "baile" && toks[1] == "atha" && toks[2] == "cliath":
		return dublinDistrictKey(toks[3]) // "Baile Átha Cliath 4"
	case len(toks) == 1 && len(toks[0]) >= 2 && len(toks[0]) <= 3 && toks[0][0] == 'd':
		return dublinDistrictKey(toks[0][1:])
	case len(toks) == 1 && strings.HasPrefix(toks[0], "dublin"):
		return dublinDistrictKey(toks[0][len("dublin"):])
	}
	return "", false
}

// parse takes a Query apart.
func (ix *Index) parse(q Query, sc *scratch) *query {
	pq := &sc.q
	*pq = query{country: strings.ToUpper(strings.TrimSpace(q.Country)), toks: pq.toks[:0], nums: pq.nums[:0], numIDs: pq.numIDs[:0], addr: pq.addr[:0], towns: pq.towns[:0], blockTowns: pq.blockTowns[:0], regions: pq.regions[:0],
		parts: pq.parts[:0], key: pq.key, ta: pq.ta, tb: pq.tb}
	parts := SplitParts(pq.parts, q.Lines)
	pq.parts = parts
	// The postcode may be on any line; the last one found wins because
	// postcodes are written last.
	pcPart := -1
	var found foundPostcode
	for i := len(parts) - 1; i >= 0 && pcPart < 0; i-- {
		if f, ok := findPostcode(parts[i]); ok {
			found, pcPart = f, i
		}
	}
	if pcPart < 0 {
		for _, s := range []string{q.City, q.Region} {
			if f, ok := findPostcode(s); ok {
				found, pcPart = f, len(parts)
				break
			}
		}
	}
	if pcPart >= 0 {
		pq.pc, pq.pcKind = found.canonical, found.kind
		if pcPart < len(parts) {
			p := parts[pcPart]
			pq.pcRaw = p[found.start:found.end]
			parts[pcPart] = Tidy(p[:found.start] + " " + p[found.end:])
		}
		if pq.country == "" {
			if pq.pcKind == Eircode {
				pq.country = "IE"
			} else {
				pq.country = "GB"
			}
		}
		if pq.country == "IE" && pq.pcKind != Eircode || countries.Postal(pq.country) == "GB" && pq.pcKind != UKPostcode {
			// A UK-shaped code in an Irish address (or the reverse) is
			// not the address's postcode; keep it as text.
			pq.pc, pq.pcKind, pq.pcRaw = "", NoPostcode, ""
			if pcPart < len(parts) {
				parts[pcPart] = Tidy(found.canonical + " " + parts[pcPart])
			}
		} else {
			pq.pcArea = ix.areaIDs["p:"+countries.Postal(pq.country)+":"+PostcodeArea(pq.pc)]
		}
	}

	var tmp [32]string
	city := q.City
	if c, ok := saintInitial(city); ok {
		city, pq.respelt = c, true
	}
	if c := Tidy(city); c != "" {
		toks := appendTokens(tmp[:0], c)
		key := strings.Join(toks, " ")
		if d, ok := districtKey(toks); ok {
			key = d
		}
		var t, r []uint32
		pq.cityIn = c
		pq.cityKey, t, r = ix.namedAreas(key, true)
		pq.towns = append(pq.towns, t...)
		pq.regions = append(pq.regions, r...)
	}
	if r := Tidy(q.Region); r != "" {
		var t, rs []uint32
		pq.regionIn = r
		pq.regKey, t, rs = ix.namedAreas(strings.Join(appendTokens(tmp[:0], r), " "), false)
		pq.regions = append(pq.regions, rs...)
		pq.blockTowns = append(pq.blockTowns, t...)
	}
	for _, p := range parts {
		if rest, ok := contactLine(p); ok {
			// Whom the letter is for, not where it goes: set aside, up to
			// a house number written after the name.
			pq.contact = true
			p = rest
		}
		if rest, ok := phonePart(p); ok {
			// A telephone number is not where the letter goes: set
			// aside, but the answer then drops a line (never Accept).
			pq.phone = true
			p = rest
		}
		if p == "" {
			continue
		}
		saint := false
		if sp, ok := saintInitial(p); ok {
			p, saint, pq.respelt = sp, true, true
		}
		toks := appendTokens(tmp[:0], p)
		if len(toks) == 0 {
			continue
		}
		// The key is looked up in bytes, and made a string only when kept.
		var t, r []uint32
		key, district := districtKey(toks)
		if district {
			t, r = ix.towns[key], ix.regions[key]
		} else {
			pq.key = joinKey(pq.key, toks)
			t, r = ix.towns[string(pq.key)], ix.regions[string(pq.key)]
			if len(t) > 0 || len(r) > 0 {
				key = string(pq.key)
			} else if len(toks) <= 5 {
				if en, ok := irishKeys[string(pq.key)]; ok {
					key, t, r = en, ix.towns[en], ix.regions[en]
				}
			}
		}
		coPrefix := hasLowerPrefix(p, "co ") || hasLowerPrefix(p, "co.") || hasLowerPrefix(p, "county ")
		if len(t) == 0 && len(r) == 0 && len(toks) <= 3 {
			if _, ok := countries.ISO(p); ok {
				continue // "Northern Ireland", "UK": the country, said in a line
			}
		}
		if len(t) == 0 && len(r) == 0 && len(toks) <= 4 && !district && (pq.country == "" || countries.Postal(pq.country) == "GB") && ukCounties[string(pq.key)] {
			// A UK county the reference does not know (PAF has none).
			if pq.regionIn == "" {
				pq.regionIn, pq.regKey = p, string(pq.key)
			}
			continue
		}
		switch {
		case len(r) > 0 && (coPrefix || len(t) == 0 || pq.cityIn != ""):
			if pq.regionIn == "" {
				pq.regionIn, pq.regKey = p, key
			}
			pq.regions = append(pq.regions, r...)
			pq.blockTowns = append(pq.blockTowns, t...)
			continue
		case len(t) > 0:
			if pq.cityIn == "" {
				pq.cityIn, pq.cityKey = p, key
			}
			pq.towns = append(pq.towns, t...)
			pq.regions = append(pq.regions, r...)
			continue
		}
		pq.addr = append(pq.addr, p)
		if len(pq.addr) <= 64 && estateName(toks) {
			pq.estateParts |= 1 << (len(pq.addr) - 1)
		}
		if s, ok := floorFlat(toks); ok {
			// "Ground Floor Flat", "Basement", "Top Floor": a flat named
			// by where it is, as the reference keys it (subKey).
			pq.sub, pq.subPart = s, len(pq.addr)
			continue
		}
		// A town at the end of an address part still helps blocking.
		for n := 1; n <= 3 && n < len(toks); n++ {
			pq.key = joinKey(pq.key, toks[len(toks)-n:])
			pq.towns = append(pq.towns, ix.towns[string(pq.key)]...)
		}
		for i := 0; i < len(toks); i++ {
			w := toks[i]
			if w == "pobox" {
				pq.poBox = true
			}
			switch {
			case w == "flat" && i+1 < len(toks) && isNumberToken(toks[i+1]):
				pq.sub = toks[i+1]
				pq.subPart = len(pq.addr)
				i++
			case w == "flat" && i+1 < len(toks) && len(toks[i+1]) == 1 && toks[i+1][0] >= 'a' && toks[i+1][0] <= 'z':
				// "Flat A": the letter names the flat.
				pq.sub = toks[i+1]
				pq.subPart = len(pq.addr)
				i++
			case w == "flat":
			case w == "dublin" && i+1 < len(toks) && isNumberToken(toks[i+1]):
				if d, ok := dublinDistrictKey(toks[i+1]); ok {
					pq.towns = append(pq.towns, ix.towns[d]...)
					i++
				}
				if len(pq.toks) < maxWords {
					pq.toks = append(pq.toks, ix.qtok(w))
					pq.toks[len(pq.toks)-1].part = uint8(min(len(pq.addr)-1, 255))
				}
			case isNumberToken(w):
				if len(pq.nums) < maxWords {
					pq.nums = append(pq.nums, w)
				}
			case len(pq.toks) >= maxWords:
			case i > 0 && len(pq.nums) > 0 && pq.nums[len(pq.nums)-1] == toks[i-1] && isDigitRun(toks[i-1]) && ix.lettered(w):
				// "2ASt. Patrick's": the letter belongs to the number.
				pq.nums[len(pq.nums)-1] += w[:1]
				pq.toks = append(pq.toks, ix.qtok(canon(w[1:])))
				pq.toks[len(pq.toks)-1].part = uint8(min(len(pq.addr)-1, 255))
			default:
				t := ix.qtok(w)
				if saint && w == "st" {
					// "S." read as Saint may still be South ("S. Circular
					// Road"): that reading stays as a typo would.
					if id, ok := ix.vocab["s"]; ok && !slices.Contains(t.alts, id) {
						t.alts = append(t.alts, id)
					}
				}
				t.part = uint8(min(len(pq.addr)-1, 255))
				pq.toks = append(pq.toks, t)
			}
		}
	}
	for _, n := range pq.nums {
		pq.numIDs = append(pq.numIDs, ix.numID(n))
	}
	if pq.sub != "" {
		pq.subID = ix.numID(pq.sub)
	}
	if pq.pc != "" {
		// strings.ReplaceAll(pq.pc, " ", ""), on the stack.
		var buf [32]byte
		b := buf[:0]
		for i := 0; i < len(pq.pc); i++ {
			if pq.pc[i] != ' ' {
				b = append(b, pq.pc[i])
			}
		}
		pq.pcRecs = ix.byPostcode[string(b)]
	}
	pq.pcHash = postcodeHash(pq.pc)
	pq.countryKey, _ = packCountry(pq.country)
	return pq
}

// estateKinds are the words before "Park", "Estate" or "Centre" in the
// name of a business park or estate, folded.
var estateKinds = map[string]bool{
	"business": true, "industrial": true, "enterprise": true, "technology": true, "trading": true,
	"retail": true, "science": true, "commercial": true, "office": true,
}

// estateName reports whether a part's tokens name a business park or an
// estate: a kind word followed by a park, estate or centre.
func estateName(toks []string) bool {
	for i := 0; i+1 < len(toks); i++ {
		if next := toks[i+1]; estateKinds[toks[i]] && (next == "pk" || next == "est" || next == "ctr") {
			return true
		}
	}
	return false
}

// floorWords name a flat by its floor or side.
var floorWords = map[string]bool{
	"ground": true, "first": true, "second": true, "third": true, "fourth": true, "fifth": true,
	"top": true, "basement": true, "lwr": true, "upr": true, "garden": true, "floor": true,
	"rear": true, "front": true,
}

// floorFlat reports whether a part is only a flat named by its floor
// ("Ground Floor Flat", "Basement Flat", "First Floor") and returns its
// sub-building key: the words but "flat", as subKey makes it.
func floorFlat(toks []string) (string, bool) {
	var words []string
	for _, t := range toks {
		switch {
		case t == "flat":
		case floorWords[t]:
			words = append(words, t)
		default:
			return "", false
		}
	}
	if len(words) == 0 || len(words) > 3 {
		return "", false
	}
	return strings.Join(words, " "), true
}

// noID stands for a number the reference does not have: it equals no
// record's number.
const noID = ^uint32(0)

func (ix *Index) numID(s string) uint32 {
	if id, ok := ix.numIDs[s]; ok {
		return id
	}
	return noID
}

// maxTypoWord is the longest word searched for typos; maxWords bounds the
// words of one query that take part in matching.
const (
	maxTypoWord = 32
	maxWords    = 64
)

// fuzzyArea returns the areas of the one name within one typo of key (a
// town or county written with a slip, "Ballinsloe"); several such names, or
// a very large table, give nothing.
func fuzzyArea(m map[string][]uint32, key string) []uint32 {
	if len(key) < 5 || len(key) > maxTypoWord || len(m) > 20000 {
		return nil
	}
	var found []uint32
	n := 0
	for k, ids := range m {
		if dlDistance1(key, k) {
			found = ids
			n++
		}
	}
	if n != 1 {
		return nil
	}
	return found
}

// lettered reports whether w, written after a house number, is a letter
// of the number glued to a known word ("ashgrove" in "1AAshgrove"): w is
// unknown and w without its first letter is known.
func (ix *Index) lettered(w string) bool {
	if len(w) < 3 || w[0] < 'a' || w[0] > 'z' {
		return false
	}
	if _, ok := ix.vocab[w]; ok {
		return false
	}
	_, ok := ix.vocab[canon(w[1:])]
	return ok
}

// namedAreas returns the towns and counties named key, the folded town
// (town) or county field, and the key they bear: as written, else as an
// Irish name ("gaillimh" is Galway), else the one town or county (as the
// field is) within one typo.
func (ix *Index) namedAreas(key string, town bool) (string, []uint32, []uint32) {
	t, r := ix.towns[key], ix.regions[key]
	if len(t) == 0 && len(r) == 0 {
		if en, ok := irishKeys[key]; ok {
			key, t, r = en, ix.towns[en], ix.regions[en]
		}
	}
	switch {
	case len(t) > 0 || len(r) > 0:
	case town:
		t = fuzzyArea(ix.towns, key)
	default:
		r = fuzzyArea(ix.regions, key)
	}
	return key, t, r
}

// qtok looks a word up, with typo alternatives when it is unknown.
func (ix *Index) qtok(w string) qTok {
	if id, ok := ix.vocab[w]; ok {
		return qTok{w: w, id: int32(id), idf: ix.idf[id], typ: ix.isType[id]}
	}
	// Unknown words are mostly names and notes ("c/o Mary"): they weigh
	// less than known words so that they do not drown the address.
	t := qTok{w: w, id: -1, idf: 0.3 * ix.maxIDF}
	// Long words get no typo search: its cost grows with the square of the
	// length, and no address word is that long.
	if len(w) < 4 || len(w) > maxTypoWord || isNumberToken(w) {
		return t
	}
	add := func(id uint32) {
		if len(t.alts) < 8 && !slices.Contains(t.alts, id) && dlDistance1(w, ix.words[id]) {
			t.alts = append(t.alts, id)
		}
	}
	for _, id := range ix.deletes[w] {
		add(id)
	}
	// A misspelt street type ("Raod", "Lowzr") is a typo of the long form,
	// whose key is the abbreviation.
	for _, long := range longForms {
		if dlDistance1(w, long) {
			if id, ok := ix.vocab[abbreviations[long]]; ok && len(t.alts) < 8 && !slices.Contains(t.alts, id) {
				t.alts = append(t.alts, id)
			}
		}
	}
	for i := 0; i < len(w); i++ {
		d := w[:i] + w[i+1:]
		if id, ok := ix.vocab[d]; ok && len(d) >= 4 {
			add(id)
		}
		for _, id := range ix.deletes[d] {
			add(id)
		}
	}
	if len(t.alts) > 0 {
		var m float32
		for _, id := range t.alts {
			m = max(m, ix.idf[id])
		}
		t.idf = m
	}
	return t
}
