package gazetteer

import (
	"slices"
	"strings"
	"sync"

	"github.com/addrclean/addrclean/countries"
)

// Tuning of matching. The values were set against the evaluation in
// eval_test.go; change them only with that test.
const (
	// confidentScore is the lowest score of a confident match.
	confidentScore = 0.80
	// confidentGap is how far ahead of the runner-up a confident match must be.
	confidentGap = 0.08
	// queryWeight is the share of the score given to how much of the input
	// the candidate explains (the rest is how much of the candidate's street
	// the input gives).
	queryWeight = 0.2
	// contraWeight is how much known words the candidate lacks cost.
	contraWeight = 0.3
	// clearScore and clearGap admit a lower-scoring match that is far
	// ahead of any other, as a Suggest at most.
	clearScore = 0.65
	clearGap   = 0.25
	// streetScore is the lowest street similarity for a street-level match.
	streetScore = 0.80
	// typeCredit is the credit for a street type the input leaves out or
	// gives wrong.
	typeCredit = 0.5
	// nameOnly is the street similarity of a record whose building name
	// the input gives whole and whose street it leaves out.
	nameOnly = 0.85
	// maxSeeds bounds the records taken from one posting list; smallSeeds
	// is how many seeds a second or third word may still add to; topK is how
	// many candidates are scored in full. Together they bound one Match.
	maxSeeds   = 4000
	smallSeeds = 600
	topK       = 24
)

// scratch is the per-call working memory, pooled so Match allocates little.
type scratch struct {
	q     query
	lists []plist
	parts [][]uint32
	seeds []uint32
	areas []uint32
	cands []cand
	order []*cand // cands, best first
	top   []pre
	// seen marks the seeds already taken, one bit per record; every bit
	// is cleared again before the scratch goes back to the pool.
	seen []uint64
}

// before reports whether candidate a ranks before b: a higher score, or
// the same score and a lower record number (scores are never NaN).
func before(a, b *cand) bool {
	return a.score > b.score || a.score == b.score && a.n < b.n
}

type pre struct {
	n   uint32
	pre float32
}

// plist is one word's postings over the searched areas: parts[from:to].
type plist struct {
	from, to int
	total    int
}

type cand struct {
	n     uint32
	pre   float32
	score float64
	s     float64 // street similarity
	ev    evidence
}

var scratchPool = sync.Pool{New: func() any {
	return new(scratch)
}}

// Match finds the reference address that q most likely means and describes
// the result (see Match). It is safe for concurrent use.
func (ix *Index) Match(q Query) Match {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	pq := ix.parse(q, sc)
	cands := ix.candidates(pq, sc)
	for i := range cands {
		ix.score(pq, &cands[i])
	}
	// Best first, ties to the lower record number: pointers are sorted,
	// by insertion (topK at most), rather than the candidates (over a
	// hundred bytes each, their evidence holding strings).
	order := sc.order[:0]
	for i := range cands {
		c := &cands[i]
		j := len(order)
		order = append(order, c)
		for j > 0 && before(c, order[j-1]) {
			order[j] = order[j-1]
			j--
		}
		order[j] = c
	}
	sc.order = order
	m := ix.decide(pq, order)
	m.POBox = pq.poBox
	if pq.contact {
		// The contact line is not returned: the text changed, and the
		// organisation element says a line was set aside.
		m.Tidied = true
		if m.Details.Organization == ChangeNone {
			m.Details.Organization = ChangeIgnored
		}
	}
	return m
}

// candidates gathers records through the blocking tables: the records of
// the full postcode, and those sharing the query's two rarest words within
// the query's towns, counties and postcode area (or anywhere, when the
// query names none). They are pre-ranked by the query words they contain,
// house number and town, and the best topK kept for full scoring.
func (ix *Index) candidates(pq *query, sc *scratch) []cand {
	sc.lists = sc.lists[:0]
	sc.parts = sc.parts[:0]
	sc.cands = sc.cands[:0]
	sc.seeds = sc.seeds[:0]
	if pq.country != "" && pq.country != "IE" && pq.country != "GB" && !ix.hasCountry(pq.country) {
		return nil
	}
	sc.seeds = append(sc.seeds, pq.pcRecs...)
	// Search where the input says the address is: its towns and postcode
	// area; failing those, its county (and towns so named); failing that,
	// everywhere.
	areas := sc.areas[:0]
	areas = append(areas, pq.towns...)
	if pq.pcArea != 0 {
		areas = append(areas, pq.pcArea)
	}
	if len(areas) == 0 {
		areas = append(areas, pq.blockTowns...)
		areas = append(areas, pq.regions...)
	}
	slices.Sort(areas)
	areas = slices.Compact(areas)
	if len(areas) == 0 {
		areas = append(areas, 0)
	}
	sc.areas = areas
	// Each word (and each typo reading of it) gives the union of its lists
	// over those areas; the rarest words' lists seed the candidates.
	for _, t := range pq.toks {
		if t.id >= 0 {
			ix.wordLists(sc, uint32(t.id))
		}
		for _, alt := range t.alts {
			ix.wordLists(sc, alt)
		}
	}
	slices.SortFunc(sc.lists, func(a, b plist) int { return a.total - b.total })
	// The rarest word always; more words while the seeds stay few, in case
	// the rarest word is noise that the true address lacks.
	for i, l := range sc.lists {
		if i > 0 && (i >= 3 || len(sc.seeds)+l.total > smallSeeds) {
			break
		}
		for _, ids := range sc.parts[l.from:l.to] {
			if len(ids) > maxSeeds {
				ids = ids[:maxSeeds]
			}
			sc.seeds = append(sc.seeds, ids...)
		}
	}
	// Keep the topK by prescore, ties to the lower record number, by
	// insertion into a short sorted list: cheaper than sorting every seed.
	// The order is total, so the seeds need no sorting either: duplicates
	// are skipped through a bit per record.
	if need := (ix.nRecs + 63) / 64; len(sc.seen) < need {
		sc.seen = make([]uint64, need)
	}
	seen := sc.seen
	top := sc.top[:0]
	for _, n := range sc.seeds {
		w, bit := n/64, uint64(1)<<(n%64)
		if seen[w]&bit != 0 {
			continue
		}
		seen[w] |= bit
		p := ix.prescore(pq, n)
		if len(top) == topK && !ahead(p, n, top[topK-1]) {
			continue
		}
		i := len(top)
		if i < topK {
			top = append(top, pre{})
		} else {
			i = topK - 1
		}
		for i > 0 && ahead(p, n, top[i-1]) {
			top[i] = top[i-1]
			i--
		}
		top[i] = pre{n, p}
	}
	for _, n := range sc.seeds {
		seen[n/64] = 0
	}
	sc.top = top
	for _, t := range top {
		sc.cands = append(sc.cands, cand{n: t.n, pre: t.pre})
	}
	return sc.cands
}

// ahead reports whether record n with prescore p ranks before t.
func ahead(p float32, n uint32, t pre) bool {
	return p > t.pre || p == t.pre && n < t.n
}

// wordLists adds a word's posting lists over the searched areas.
func (ix *Index) wordLists(sc *scratch, t uint32) {
	l := plist{from: len(sc.parts)}
	for _, a := range sc.areas {
		if ids := ix.postings[uint64(a)<<32|uint64(t)]; len(ids) > 0 {
			sc.parts = append(sc.parts, ids)
			l.total += len(ids)
		}
	}
	l.to = len(sc.parts)
	if l.total > 0 {
		sc.lists = append(sc.lists, l)
	}
}

// prescore is a cheap first ranking: the weight of the query words the
// record has, and bonuses for its number, sub-building, postcode and town.
func (ix *Index) prescore(pq *query, n uint32) float32 {
	k := &ix.keys[n]
	var w float32
	for _, q := range pq.toks {
		for _, t := range ix.toksOf(k) {
			if int32(t) == q.id {
				w += q.idf
				break
			}
			if slices.Contains(q.alts, t) {
				w += 0.85 * q.idf
				break
			}
		}
	}
	if k.num != 0 && slices.Contains(pq.numIDs, k.num) {
		w += 2 * ix.maxIDF
	}
	if k.sub != 0 && (k.sub == pq.subID || slices.Contains(pq.numIDs, k.sub)) {
		w += ix.maxIDF
	}
	if len(pq.pcRecs) > 0 && slices.Contains(pq.pcRecs, n) {
		w += 2 * ix.maxIDF
	}
	if slices.Contains(pq.towns, k.town) {
		w += ix.maxIDF / 2
	}
	return w
}

func (ix *Index) hasCountry(c string) bool {
	for _, a := range ix.areas {
		if a.country == c {
			return true
		}
	}
	return false
}

// evidence is what scoring found out about one candidate; it decides the
// details and whether a change is cosmetic.
type evidence struct {
	streetTypo   bool // a street or name word matched only through a typo
	streetAbsent bool // the record has street words and none were given
	streetPart   bool // some street words were not given
	numState     Change
	subState     Change
	townState    Change
	regionState  Change
	pcState      Change
	orgState     Change
	unmatched    bool // the query has words the record does not explain
	typeCredit   bool // a street type the input left out or gave wrong was credited
	nameAbsent   bool // the record's building name identifies it and none of it was given
	townOK       bool
}

// score computes a candidate's score in [0,1] and its evidence.
func (ix *Index) score(pq *query, c *cand) {
	// The record itself is read only for a postcode that may be the
	// query's: its country, postcode and county are compared through the
	// key, which the candidates' scan has just read, saving cache misses
	// on records spread over the whole reference.
	k := &ix.keys[c.n]
	var ev evidence
	if pq.country != "" && !ix.sameCountry(k, c.n, pq) {
		c.score = 0
		return
	}
	var matchedQ uint64 // bit i: query word i explained by the record
	mark := func(t uint32) float64 {
		best := 0.0
		for i, q := range pq.toks {
			m := 0.0
			switch {
			case q.id == int32(t):
				m = 1
			case slices.Contains(q.alts, t):
				m = 0.85
			}
			if m > 0 && i < 64 {
				matchedQ |= 1 << i
			}
			best = max(best, m)
		}
		return best
	}
	var num, den float64
	typo := false
	// The street identifies the address; without one (a named house in a
	// townland) the building name does. The other elements help when
	// given and cost nothing when left out.
	nMain := int(k.nStreet) + int(k.nName)
	mainFrom, mainTo := 0, int(k.nStreet)
	if k.nStreet == 0 {
		mainTo = int(k.nName)
	}
	mainHit, mainAll := 0, 0
	// The weights of the record's street types the input does not give.
	var missingType [4]float64
	nMissing := 0
	ktoks := ix.toksOf(k)
	for i, t := range ktoks {
		w := float64(ix.idf[t])
		m := mark(t)
		switch {
		case i >= mainFrom && i < mainTo:
			if m > 0 && slices.Contains(ktoks[mainFrom:i], t) && !pq.hasTwice(int32(t)) {
				// A word the street has twice ("St. Patrick's Street")
				// is given once: the second is missing.
				m = 0
			}
			mainAll++
			den += w
			num += w * m
			if m > 0 {
				mainHit++
			} else if ix.isType[t] && nMissing < len(missingType) {
				missingType[nMissing] = w
				nMissing++
			}
			if m > 0 && m < 1 {
				typo = true
			}
		case i < nMain+int(k.nLoc):
			if m > 0 || mainTo == 0 {
				den += 0.5 * w
				num += 0.5 * w * m
			}
			if m > 0 && m < 1 {
				typo = true
			}
		default: // organisation
			if m > 0 {
				den += 0.3 * w
				num += 0.3 * w * m
			}
		}
	}
	// Another block of the same hall ("Block 2" for "Block 1") is
	// another building, as a wrong house number is.
	wrongBlock := false
	for i, t := range ktoks {
		if i >= nMain || !ix.isBlock[t] || mark(t) > 0 {
			continue
		}
		for j, q := range pq.toks {
			if q.id >= 0 && ix.isBlock[q.id] && (j >= 64 || matchedQ&(1<<j) == 0) {
				wrongBlock = true
			}
		}
	}
	// An unknown word of the input that the record explains only as a
	// typo is a typo, even when the word it stands for is also written
	// right elsewhere ("Tiddngton Road, Tiddington").
	for i, q := range pq.toks {
		if i < 64 && q.id < 0 && len(q.alts) > 0 && matchedQ&(1<<i) != 0 {
			typo = true
		}
	}
	// A street type left out, or another one given ("Elm Road" for "Elm
	// Lane"), is half a word: the name is what people remember. The
	// street is then Changed, never cosmetic.
	for _, w := range missingType[:nMissing] {
		for i, q := range pq.toks {
			if q.typ && i < 64 && matchedQ&(1<<i) == 0 {
				matchedQ |= 1 << i
				break
			}
		}
		num += typeCredit * w
		typo = true
		ev.typeCredit = true
	}
	s := 0.0
	if den > 0 {
		s = num / den
	} else if len(ktoks) == 0 {
		s = 1
	}
	byName := false // found by its building name, the street left out
	if mainHit == 0 && k.nStreet > 0 && k.nName > 0 {
		// No word of the street given, but maybe the whole building
		// name ("Room 3, Block 2 Harmer Hall, Coventry"): a named
		// building is found by its name, the street then added.
		var nn, nd float64
		all := true
		for _, t := range ktoks[k.nStreet : int(k.nStreet)+int(k.nName)] {
			w := float64(ix.idf[t])
			m := mark(t)
			nd += w
			nn += w * m
			all = all && m > 0
		}
		if all && nd > 0 && nameOnly*nn/nd > s {
			s = nameOnly * nn / nd
			byName = true
		}
	}
	if k.num == 0 && k.nName > 0 && k.nStreet > 0 && !byName {
		// A building with no number is told from its neighbours on the
		// street by its name ("Flat 3 Hurst, Oakdene Road"): without a
		// word of it, "3 Oakdene Road" may be that flat or a house the
		// reference lacks, never the same address as written.
		hit := false
		for _, t := range ktoks[k.nStreet : int(k.nStreet)+int(k.nName)] {
			if mark(t) > 0 {
				hit = true
				break
			}
		}
		ev.nameAbsent = !hit
	}
	ev.streetTypo = typo
	ev.streetAbsent = mainAll > 0 && mainHit == 0
	ev.streetPart = mainHit < mainAll
	// Organisation
	nOrg := len(ktoks) - nMain - int(k.nLoc)
	ev.orgState = ChangeNone
	if nOrg > 0 {
		ev.orgState = ChangeAdded
		// The department is counted apart: an organisation given whole
		// without its department is the same addressee.
		nDept := min(int(k.nDept), nOrg)
		hit, deptHit := 0, 0
		for i, t := range ktoks[nMain+int(k.nLoc):] {
			if mark(t) > 0 {
				if i >= nOrg-nDept {
					deptHit++
				} else {
					hit++
				}
			}
		}
		nName := nOrg - nDept
		switch {
		case hit == nName && (deptHit == nDept || deptHit == 0 && nName > 0):
			ev.orgState = ChangeUnchanged
		case hit > 0 || deptHit > 0:
			ev.orgState = ChangeChanged
		}
	}
	// Town words written in the lines are explained by the record too.
	townHit, townTypo := 0, false
	cityToks := ix.areas[k.town].toks
	for _, t := range cityToks {
		if m := mark(t); m > 0 {
			townHit++
			townTypo = townTypo || m < 1
		}
	}
	for _, t := range ix.areas[k.region].toks {
		mark(t)
	}
	// A part that gave a unit ("Unit 4 Lavender Business Park") of which
	// the record, with no units, explains no word (but a street type) is
	// another address the input also names; so is the name of a business
	// park or estate the record does not explain ("Kestrel Business
	// Park"): such parts are left out of the input's words below, not
	// held against the record, and still never cosmetic.
	skip := pq.estateParts
	if pq.subPart > 0 && k.sub == 0 && pq.subPart <= 64 {
		skip |= 1 << (pq.subPart - 1)
	}
	if skip != 0 {
		for i, q := range pq.toks {
			if q.part < 64 && !q.typ && i < 64 && matchedQ&(1<<i) != 0 {
				skip &^= 1 << q.part
			}
		}
	}
	p := 0.0
	contra := 0.0
	if len(pq.toks) > 0 {
		var pn, pd, kn, kd float64
		for i, q := range pq.toks {
			if q.part < 64 && skip&(1<<q.part) != 0 {
				ev.unmatched = true
				continue
			}
			w := float64(q.idf)
			pd += w
			matched := i < 64 && matchedQ&(1<<i) != 0
			if matched {
				pn += w
			}
			if q.id >= 0 {
				kd += w
				if !matched {
					kn += w
				}
			}
		}
		if pd > 0 {
			p = pn / pd
		}
		ev.unmatched = ev.unmatched || pn < pd
		if kd > 0 {
			// Known address words the candidate lacks ("Great" in "Great
			// St Joseph's Lawns" against "St Joseph's Lawns") speak against
			// it; unknown words are mostly names and notes.
			contra = kn / kd
		}
	} else {
		p = 1
	}
	score := ((1-queryWeight)*s + queryWeight*p) * (1 - contraWeight*contra)
	if wrongBlock {
		score *= 0.5
	}

	// House number.
	switch {
	case k.num == 0 && len(pq.numIDs) == 0:
		ev.numState = ChangeNone
	case k.num == 0:
		ev.numState = ChangeNone
		if !(len(pq.numIDs) == 1 && pq.numIDs[0] == k.sub) {
			score *= 0.9
		}
	case slices.Contains(pq.numIDs, k.num):
		ev.numState = ChangeUnchanged
	case len(pq.numIDs) == 0 || len(pq.numIDs) == 1 && pq.numIDs[0] == k.sub && k.sub != 0:
		ev.numState = ChangeAdded
		if byName {
			score *= 0.85 // the name, not the number, says which building
		} else {
			score *= 0.6
		}
	default:
		ev.numState = ChangeChanged
		score *= 0.45
	}
	// Sub-building.
	switch {
	case k.sub == 0 && pq.subID == 0 && !extraNumber(pq.numIDs, k.num):
		ev.subState = ChangeNone
	case k.sub == 0 && pq.subID != 0:
		// A flat or unit the record does not have: the building may be
		// right, but the address given is not the record's. Never cosmetic.
		ev.subState = ChangeIgnored
		score *= 0.85
	case k.sub == 0 && extraNumber(pq.numIDs, k.num):
		// "5, 17 Foxglove Way" for a house with no flats: the other number
		// is most likely a flat the reference lacks.
		ev.subState = ChangeIgnored
	case k.sub == pq.subID || pq.subID == 0 && slices.Contains(pq.numIDs, k.sub) && (len(pq.numIDs) >= 2 || k.num == 0):
		ev.subState = ChangeUnchanged
		if pq.subID == 0 && k.num != 0 && !numberBefore(pq.numIDs, k.sub, k.num) {
			// Two bare numbers ("No. 4, Riverside House, 11 Hanover
			// Way"): the flat is written before the house number, so
			// flat 11 of number 11 is the lesser reading.
			score *= 0.9
		}
	case pq.subID == 0:
		ev.subState = ChangeAdded
		score *= 0.7
	default:
		ev.subState = ChangeChanged
		score *= 0.5
	}
	// Postcode.
	switch {
	case pq.pc == "":
		ev.pcState = ChangeAdded
		if k.pcHash == 0 { // no postcode
			ev.pcState = ChangeNone
		}
		score *= 0.97
	case k.pcHash == pq.pcHash && ix.rec(c.n).Postcode == pq.pc:
		ev.pcState = ChangeUnchanged
		if pq.pcKind == Eircode {
			// An Eircode names one address: strong evidence on its own.
			score += (1 - score) * 0.3
		}
	case k.pcHash == 0: // no postcode
		ev.pcState = ChangeChanged
		score *= 0.9
	case pq.pcArea != 0 && pq.pcArea == k.pcArea:
		ev.pcState = ChangeChanged
		score *= 0.93
	default:
		ev.pcState = ChangeChanged
		score *= 0.85
	}
	// Town.
	ev.townOK = slices.Contains(pq.towns, k.town) || (len(cityToks) > 0 && townHit == len(cityToks))
	switch {
	case pq.cityIn == "" && !ev.townOK:
		ev.townState = ChangeAdded
		score *= 0.97
	case ev.townOK && pq.cityKey == ix.areas[k.town].fkey:
		ev.townState = ChangeUnchanged
	case ev.townOK:
		// The town is in the input, maybe written in another line or as
		// "Dublin" for "Dublin 2": a refinement, not a correction.
		ev.townState = ChangeUnchanged
		if pq.cityIn != "" && !strings.HasPrefix(ix.areas[k.town].fkey, pq.cityKey+" ") || pq.cityIn == "" && townTypo {
			ev.townState = ChangeChanged
		}
	default:
		ev.townState = ChangeChanged
		score *= 0.85
	}
	// County.
	switch {
	case pq.regionIn == "":
		ev.regionState = ChangeAdded
		if k.region == 0 { // no county
			ev.regionState = ChangeNone
		}
	case k.region != 0 && ix.areas[k.region].fkey == pq.regKey:
		ev.regionState = ChangeUnchanged
	case k.region == 0:
		// The reference has no county for the address (Royal Mail PAF
		// has none): the input's stands, unverified, as UK addresses
		// need none.
		ev.regionState = ChangeUnchanged
	default:
		ev.regionState = ChangeChanged
		score *= 0.88
	}
	c.score = min(score, 1)
	c.s = s
	c.ev = ev
}

// hasTwice reports whether the query has the known word id twice.
func (pq *query) hasTwice(id int32) bool {
	n := 0
	for _, q := range pq.toks {
		if q.id == id {
			n++
		}
	}
	return n >= 2
}

// sameCountry reports whether record n, whose key is k, is in the
// query's country, as r.Country == pq.country.
func (ix *Index) sameCountry(k *recKey, n uint32, pq *query) bool {
	if k.country == 0 {
		return countries.Postal(ix.rec(n).Country) == countries.Postal(pq.country)
	}
	return k.country == pq.countryKey || ukPost(k.country) && ukPost(pq.countryKey)
}

// Packed codes of the countries of the UK postcode system.
const (
	packedGB = uint16('G')<<8 | 'B'
	packedJE = uint16('J')<<8 | 'E'
	packedGG = uint16('G')<<8 | 'G'
	packedIM = uint16('I')<<8 | 'M'
)

// ukPost reports whether a packed country code is one of the UK postcode
// system's.
func ukPost(c uint16) bool {
	return c == packedGB || c == packedJE || c == packedGG || c == packedIM
}

// numberBefore reports whether sub stands before num among the numbers
// written.
func numberBefore(numIDs []uint32, sub, num uint32) bool {
	i := slices.Index(numIDs, sub)
	return i >= 0 && slices.Contains(numIDs[i+1:], num)
}

// extraNumber reports whether the input has a number besides the record's
// house number num (which must be among them).
func extraNumber(numIDs []uint32, num uint32) bool {
	if num == 0 || len(numIDs) < 2 || !slices.Contains(numIDs, num) {
		return false
	}
	for _, n := range numIDs {
		if n != num {
			return true
		}
	}
	return false
}
