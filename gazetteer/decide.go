package gazetteer

import (
	"slices"
	"strconv"
	"strings"
)

// decide turns the scored candidates into a Match: a confident building
// match, else the street, locality or region the input names, else the
// input tidied up.
func (ix *Index) decide(pq *query, cands []*cand) Match {
	var best *cand
	runner := 0.0
	if len(cands) > 0 {
		best = cands[0]
	}
	for i := 1; i < len(cands); i++ {
		c := cands[i]
		// A street whose type the input gave matches better than one
		// whose type it left out or gave otherwise ("Parkside View"
		// given, "Parkside Lane" the runner-up): the latter does not
		// make the former doubtful.
		if c.ev.typeCredit && !best.ev.typeCredit {
			continue
		}
		runner = c.score
		break
	}
	var m Match
	if best != nil && best.score > 0 {
		m.Score, m.RunnerUp = best.score, runner
		confident := best.score >= confidentScore && best.score-runner >= confidentGap
		// A clear winner with a lower score (a typo and a noise line and a
		// wrong county...) is still the address, but never auto-accepted.
		clear := best.score >= clearScore && best.score-runner >= clearGap
		if confident || clear || ix.eircodeDecides(pq, best) {
			ix.buildingMatch(pq, best, &m)
			if !confident {
				m.Verdict = VerdictSuggest
			}
			return m
		}
		if c := ix.postcodeNumber(pq, cands); c != nil {
			// The postcode names the building the number was meant for.
			ix.buildingMatch(pq, c, &m)
			m.Score = c.score
			m.Verdict = VerdictSuggest
			return m
		}
		m.Ambiguous = best.score >= confidentScore
		if ix.streetMatch(pq, cands, &m) {
			return m
		}
	}
	ix.areaMatch(pq, best, &m)
	return m
}

// eircodeDecides reports whether the Eircode given is enough on its own: it
// names exactly this record, and nothing written contradicts it.
func (ix *Index) eircodeDecides(pq *query, c *cand) bool {
	r := ix.rec(c.n)
	if pq.pcKind != Eircode || r.Postcode != pq.pc {
		return false
	}
	if len(ix.byPostcode[strings.ReplaceAll(pq.pc, " ", "")]) != 1 {
		return false
	}
	ev := &c.ev
	if ev.numState == ChangeChanged || ev.subState == ChangeChanged {
		return false
	}
	return c.s >= 0.5 || len(pq.toks) == 0
}

// postcodeNumber returns the candidate a postcode names when the one house
// number written disagrees with it: the street is the candidate's, no
// house of that street has the number written, and the postcode names one
// building (an Eircode names one address), or it is a UK postcode in which
// the candidate is the one property of the street whose number is close to
// the one written ("71" for "17", "15" for "17"). Typing slips in a number
// are common, and the postcode is then the better witness; the answer is
// a Suggest, as the number is corrected.
func (ix *Index) postcodeNumber(pq *query, cands []*cand) *cand {
	if pq.pc == "" || len(pq.nums) != 1 || pq.sub != "" || !isDigitRun(pq.nums[0]) ||
		pq.pcKind == Eircode && len(pq.pcRecs) != 1 || pq.pcKind != Eircode && pq.pcKind != UKPostcode {
		return nil
	}
	var hit *cand
	for _, c := range cands {
		switch {
		case c.score == 0 || c.s < streetScore:
		case c.ev.numState == ChangeUnchanged:
			return nil // a house of that street has the number written
		case c.ev.numState == ChangeChanged && c.ev.pcState == ChangeUnchanged && ix.keys[c.n].sub == 0 &&
			c.ev.subState == ChangeNone && !c.ev.streetTypo && !c.ev.unmatched &&
			(pq.pcKind == Eircode || closeNumber(pq.nums[0], Fold(ix.rec(c.n).BuildingNumber))):
			if hit != nil {
				return nil // two properties of the postcode are as near
			}
			hit = c
		}
	}
	if hit == nil || pq.pcKind == Eircode {
		return hit
	}
	// The candidates are the best few: the postcode's other properties on
	// the street are checked too.
	r := ix.rec(hit.n)
	for _, n := range pq.pcRecs {
		o := ix.rec(n)
		if n != hit.n && o.Street == r.Street && o.DependentStreet == r.DependentStreet && closeNumber(pq.nums[0], Fold(o.BuildingNumber)) {
			return nil
		}
	}
	return hit
}

// closeNumber reports whether the house number written, w, may be a slip
// for n: two neighbouring digits swapped ("71" for "17"), a digit left out
// or added ("7", "177"), or a number at most two away ("15" for "17"). A
// digit changed for another is left out: "47" for "17" is as likely a
// house of its own.
func closeNumber(w, n string) bool {
	if !isDigitRun(w) || !isDigitRun(n) || w == n {
		return false
	}
	switch {
	case len(w) == len(n):
		i := 0
		for w[i] == n[i] {
			i++
		}
		if i+1 < len(w) && w[i] == n[i+1] && w[i+1] == n[i] && w[i+2:] == n[i+2:] {
			return true
		}
	case len(w) == len(n)+1:
		if oneLess(w, n) {
			return true
		}
	case len(n) == len(w)+1:
		if oneLess(n, w) {
			return true
		}
	}
	a, err1 := strconv.Atoi(w)
	b, err2 := strconv.Atoi(n)
	return err1 == nil && err2 == nil && a-b <= 2 && b-a <= 2
}

// oneLess reports whether short is long with one byte left out.
func oneLess(long, short string) bool {
	for i := range len(long) {
		if long[:i]+long[i+1:] == short {
			return true
		}
	}
	return false
}

// buildingMatch fills m from a confident match to one record.
func (ix *Index) buildingMatch(pq *query, c *cand, m *Match) {
	r := ix.rec(c.n)
	ev := &c.ev
	m.Record = r
	m.Level = LevelBuilding
	if r.SubBuilding != "" {
		m.Level = LevelSubBuilding
	}
	m.Lines = r.Lines()
	m.City, m.Region, m.Postcode, m.Country = r.City, r.Region, r.Postcode, r.Country
	if r.Region == "" {
		m.Region = pq.regionIn // kept as given: see score
	}
	if r.HasLocation {
		m.Location = &Point{r.Latitude, r.Longitude}
	}
	d := &m.Details
	d.Organization = ev.orgState
	m.UnusedInput = ev.unmatched || pq.phone
	switch {
	case r.Street == "" && r.BuildingName == "":
		d.Street = ChangeNone
	case ev.streetAbsent:
		d.Street = ChangeAdded
	case ev.streetTypo || ev.streetPart:
		d.Street = ChangeChanged
	default:
		d.Street = ChangeUnchanged
	}
	d.BuildingNumber = ev.numState
	d.SubBuildingNumber = ev.subState
	d.City = ev.townState
	d.Region = ev.regionState
	d.Postcode = ev.pcState
	d.AddressLines = ChangeUnchanged
	if pq.phone || !pq.sameTokens(pq.addr, m.Lines) {
		d.AddressLines = ChangeChanged
	}
	ix.amended(pq, m)
	// Additions (postcode, county, town, locality, organisation) and
	// spelling that normalises equal are cosmetic; anything corrected, or
	// input words the address does not explain, is a real change.
	real := d.Street == ChangeChanged || d.Street == ChangeAdded ||
		d.BuildingNumber == ChangeChanged || d.BuildingNumber == ChangeAdded ||
		d.SubBuildingNumber == ChangeChanged || d.SubBuildingNumber == ChangeAdded ||
		// A flat or unit given that the record lacks is dropped from the
		// answer: the reader must see that (Suggest, details Ignored).
		d.SubBuildingNumber == ChangeIgnored ||
		d.City == ChangeChanged || d.Region == ChangeChanged || d.Postcode == ChangeChanged ||
		d.Organization == ChangeChanged || ev.unmatched || ev.nameAbsent ||
		// A telephone line dropped, or "S." read as Saint: the reader
		// must see what was made of the input.
		pq.phone || pq.respelt ||
		// Without town and postcode the place itself was inferred: too
		// much to accept unseen, even if nothing was corrected.
		d.City == ChangeAdded && d.Postcode == ChangeAdded
	m.Verdict = VerdictAccept
	if real {
		m.Verdict = VerdictSuggest
	}
}

// streetMatch fills m with a street-level match when the best candidates
// all lie on the same street of the same town; it reports whether it did.
func (ix *Index) streetMatch(pq *query, cands []*cand, m *Match) bool {
	best := cands[0]
	r := ix.rec(best.n)
	k := &ix.keys[best.n]
	rs := r.numberStreet()
	if best.s < streetScore || rs == "" || r.Type == POBox || k.nStreet == 0 {
		return false
	}
	if !best.ev.townOK && pq.pc == "" && len(pq.regions) == 0 {
		return false
	}
	street := "" // Fold(rs), made when a spelling differs
	var lat, lon float64
	n := 0
	for _, c := range cands {
		o := ix.rec(c.n)
		same := ix.keys[c.n].town == k.town
		if os := o.numberStreet(); same && os != rs {
			if street == "" {
				street = Fold(rs)
			}
			same = Fold(os) == street
		}
		if !same && c.s >= streetScore && c.score >= best.score-confidentGap {
			return false // two streets are equally likely
		}
		if same && o.HasLocation {
			lat += o.Latitude
			lon += o.Longitude
			n++
		}
	}
	m.Verdict = VerdictConfirm
	m.Level = LevelStreet
	line := rs
	if len(pq.nums) > 0 {
		line = strings.ToUpper(pq.nums[0]) + " " + rs
	}
	m.Lines = []string{line}
	if r.DependentStreet != "" && r.Street != "" {
		m.Lines = append(m.Lines, r.Street) // the street it lies off
	}
	for _, l := range [...]string{r.DoubleDependentLocality, r.Locality} {
		if l != "" {
			m.Lines = append(m.Lines, l)
		}
	}
	m.City, m.Region, m.Country = r.City, r.Region, r.Country
	if r.Region == "" {
		m.Region = pq.regionIn
	}
	m.Postcode = pq.pc
	if n > 0 {
		m.Location = &Point{lat / float64(n), lon / float64(n)}
	}
	d := &m.Details
	d.Organization = ChangeNone
	d.Street = ChangeUnchanged
	if best.ev.streetTypo || best.ev.streetPart {
		d.Street = ChangeChanged
	}
	d.BuildingNumber, d.SubBuildingNumber = ChangeNone, ChangeNone
	if len(pq.nums) > 0 {
		d.BuildingNumber = ChangeIgnored
	}
	if pq.sub != "" {
		d.SubBuildingNumber = ChangeIgnored
	}
	d.City, d.Region = best.ev.townState, best.ev.regionState
	d.Postcode = ChangeNone
	if pq.pc != "" {
		d.Postcode = ChangeUnchanged
	}
	d.AddressLines = ChangeUnchanged
	if !pq.sameTokens(pq.addr, m.Lines) {
		d.AddressLines = ChangeChanged
	}
	ix.amended(pq, m)
	return true
}

// areaMatch fills m with the town (locality) or county (region) the input
// names, or with the input tidied up when nothing is recognised.
func (ix *Index) areaMatch(pq *query, best *cand, m *Match) {
	m.Verdict = VerdictConfirm
	m.Level = LevelNone
	m.Lines = slices.Clone(pq.addr)
	m.City, m.Region, m.Postcode, m.Country = pq.cityIn, pq.regionIn, pq.pc, pq.country
	if m.Postcode == "" {
		m.Postcode = Tidy(pq.pcRaw)
	}
	d := &m.Details
	*d = Details{ChangeNone, ChangeNone, ChangeUnchanged, ChangeNone, ChangeNone, ChangeNone, ChangeNone, ChangeNone}
	if len(pq.addr) == 0 {
		d.AddressLines = ChangeNone
	}
	if pq.cityIn != "" {
		d.City = ChangeUnchanged
	}
	if pq.regionIn != "" {
		d.Region = ChangeUnchanged
	}
	if pq.pc != "" {
		d.Postcode = ChangeUnchanged
	}
	town := uint32(0)
	if best != nil && best.score > 0 && best.ev.townOK {
		town = ix.keys[best.n].town
	}
	for _, t := range pq.towns {
		if town != 0 {
			break
		}
		if pq.country == "" || ix.areas[t].country == pq.country {
			town = t
		}
	}
	if town == 0 && pq.pcArea != 0 {
		// The postcode area's commonest town stands for the area.
		town = ix.pcTown(pq.pcArea)
	}
	region := uint32(0)
	for _, r := range pq.regions {
		if pq.country == "" || ix.areas[r].country == pq.country {
			region = r
			break
		}
	}
	switch {
	case town != 0:
		a := &ix.areas[town]
		m.Level = LevelLocality
		if a.fkey != pq.cityKey {
			d.City = ChangeAdded
			if pq.cityIn != "" {
				d.City = ChangeChanged
			}
		}
		m.City, m.Country = a.name, a.country
		if a.region != "" {
			if Fold(a.region) != pq.regKey {
				d.Region = ChangeAdded
				if pq.regionIn != "" {
					d.Region = ChangeChanged
				}
			}
			m.Region = a.region
		}
		if a.nLoc > 0 {
			m.Location = &Point{a.lat, a.lon}
		}
	case region != 0:
		a := &ix.areas[region]
		m.Level = LevelRegion
		m.Region, m.Country = a.name, a.country
		if a.nLoc > 0 {
			m.Location = &Point{a.lat, a.lon}
		}
	}
	ix.amended(pq, m)
}

// pcTown returns the town of the first record of a postcode area.
func (ix *Index) pcTown(pcArea uint32) uint32 {
	a := &ix.areas[pcArea]
	if a.n == 0 {
		return 0
	}
	return ix.keys[a.first].town
}

// amended sets the amended flags from the details, so that the two never
// disagree: an element is amended when its details are Changed or Added,
// that is when matching corrected or supplied it. Cosmetic differences
// (case, spacing, punctuation, "Co.", abbreviations) leave the flags false
// and set Tidied instead.
func (ix *Index) amended(pq *query, m *Match) {
	d := &m.Details
	m.AddressLinesAmended = isAmended(d.AddressLines)
	m.CityAmended = isAmended(d.City)
	m.RegionAmended = isAmended(d.Region)
	m.PostcodeAmended = isAmended(d.Postcode)
	m.Tidied = !slices.Equal(pq.addr, m.Lines) || pq.cityIn != m.City || pq.regionIn != m.Region ||
		pq.pcRaw != m.Postcode && !(pq.pcRaw == "" && m.Postcode == "")
}

// isAmended reports whether a detail means the returned value differs in
// substance from the input.
func isAmended(c Change) bool {
	return c == ChangeChanged || c == ChangeAdded
}

// sameTokens reports whether two sets of lines say the same thing once
// normalised, in any order of lines.
// The token lists are pq's working memory.
func (pq *query) sameTokens(a, b []string) bool {
	ta, tb := pq.ta[:0], pq.tb[:0]
	for _, l := range a {
		ta = appendTokens(ta, l)
	}
	for _, l := range b {
		tb = appendTokens(tb, l)
	}
	pq.ta, pq.tb = ta, tb
	slices.Sort(ta)
	slices.Sort(tb)
	return slices.Equal(ta, tb)
}
