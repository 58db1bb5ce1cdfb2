package writers

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/countries"
)

// ChangesColumn says in words what the service changed in the row's
// address (Changes). The enriched outputs write it after the duplicate
// columns, the review after av_action.
const ChangesColumn = "av_changes"

// The words of ChangesColumn. An element is one of organisation, street,
// lines (the address lines as a whole), sub-building, building number,
// town, region, postcode.
const (
	// ChangesNone is a verified answer that changed nothing.
	ChangesNone = "no change"
	// ChangesNotMatched is an answer that matched no address (match level
	// None, or no label): nothing to compare.
	ChangesNotMatched = "not matched"
	changedWord       = " corrected"
	addedWord         = " added"
	ignoredWord       = " ignored"
	droppedWord       = " dropped"
	changesSeparator  = "; "
)

// Changes says in words what the service changed in r's address, for
// ChangesColumn: per element, "<element> corrected", "<element> added" or
// "<element> ignored" (from information.details, or the amended flags
// where details say nothing), in a fixed element order, then "<text>
// dropped" for each run of the input's address the match does not carry
// (a flat a street-level match lost), joined with "; ". A verified answer
// that changed nothing is ChangesNone, one that matched nothing
// ChangesNotMatched, an Error row "". The same answer always gives the
// same words, so a reviewer can sort and filter by them.
func Changes(r Result) string {
	if Action(r) == ActionError {
		return ""
	}
	v := r.Response
	info := &v.Information
	if info.MatchLevel == api.LevelNone || len(v.Address.Label) == 0 {
		return ChangesNotMatched
	}
	var parts []string
	lost := dropped(r)
	d := &info.Details
	add := func(element, detail string, amended bool) {
		switch {
		case detail == api.DetailChanged:
			parts = append(parts, element+changedWord)
		case detail == api.DetailAdded:
			parts = append(parts, element+addedWord)
		case detail == api.DetailIgnored:
			parts = append(parts, element+ignoredWord)
		case amended && (detail == "" || detail == api.DetailNone):
			parts = append(parts, element+changedWord)
		}
	}
	add("organisation", d.Organization, false)
	lineDetail := d.AddressLines
	if lineDetail == "" || lineDetail == api.DetailNone {
		// The lines count as corrected by the flag only when no element of
		// them says what changed.
		if !slices.ContainsFunc([]string{d.Organization, d.Street, d.SubBuildingNumber, d.BuildingNumber}, changedDetail) {
			add("lines", lineDetail, info.AddressLinesAmended && len(lost) == 0)
		}
	} else {
		add("lines", lineDetail, false)
	}
	add("sub-building", d.SubBuildingNumber, false)
	add("building number", d.BuildingNumber, false)
	add("street", d.Street, false)
	add("town", d.City, info.CityAmended)
	add("region", d.Region, info.RegionAmended)
	add("postcode", d.Postcode, info.PostcodeAmended)
	for _, s := range lost {
		parts = append(parts, s+droppedWord)
	}
	if len(parts) == 0 {
		return ChangesNone
	}
	return strings.Join(parts, changesSeparator)
}

func changedDetail(s string) bool {
	return s == api.DetailChanged || s == api.DetailAdded || s == api.DetailIgnored
}

// dropped returns the runs of the input address the match does not carry
// and nothing in the match replaces.
func dropped(r Result) []string {
	var out []string
	a := &r.Response.Address
	for _, rm := range diffLabel(r.InputLabel, a.Label, a.Highlights) {
		if !rm.replaced {
			out = append(out, rm.text)
		}
	}
	return out
}

// removal is a run of the input address that the matched label lacks:
// the input parts (or the words of one) in input order, to show before
// label line at.
type removal struct {
	text string
	at   int // the label line it goes before; len(label) for the end
	// replaced is set when the label has a line of its own between the
	// removal's neighbours (Co. Donegal where the match has Monaghan): a
	// correction, which the details name, not a loss.
	replaced bool
}

// diffLabel compares the input address (the input label: its parts
// joined with ", ") with the matched label, part by part and word by word,
// folding case, accents, punctuation and spaces; an abbreviation the label
// spells out (St, Rd, Gdns) is the same word, and "Co." or "County" before
// a county name is neither kept nor lost. A part the label holds, whole or
// in all its words, is kept; a country is never a loss (labels leave it
// out); the rest are removals, consecutive ones joined.
func diffLabel(input string, label []string, highlights [][]int) []removal {
	if input == "" {
		return nil
	}
	folded := make([]string, len(label))
	for k, l := range label {
		folded[k] = fold(l)
	}
	// The word sets are built when a part is not found whole (most rows
	// need none): lines[k] are the words of label line k; newWords[k]:
	// the line has words the input lacks (a corrected number, an added
	// town); own[k]: so, or the service highlighted it.
	var lines []wordSet
	var own, newWords []bool
	words := func() {
		if lines != nil {
			return
		}
		iw := newWordSet(input)
		lines = make([]wordSet, len(label))
		own, newWords = make([]bool, len(label)), make([]bool, len(label))
		for k, l := range label {
			lines[k] = newWordSet(l)
			for w := range lines[k] {
				if !iw.has(w) {
					newWords[k] = true
				}
			}
			own[k] = newWords[k] || k < len(highlights) && len(lineSpans(highlights[k], utf8.RuneCountInString(l))) > 0
		}
	}
	// lineOf returns the first label line holding folded part f (the whole
	// line, or inside it when f has five characters at least, so that a
	// number is not found inside another; a postcode may be written without
	// its space) or, with word, the folded word f.
	lineOf := func(f string, word bool) int {
		for k := range label {
			if word && lines[k].has(f) || !word && (folded[k] == f || len(f) >= 5 && strings.Contains(folded[k], f)) {
				return k
			}
		}
		return -1
	}
	var out []removal
	prev := -1 // the label line of the last input part the label holds
	var run []string
	flush := func(next int) {
		if len(run) == 0 {
			return
		}
		at := next
		if at < 0 {
			at = len(label)
		}
		// Replaced when the label has a line of its own between the
		// neighbours, or next: Co. Donegal where the match has Monaghan.
		words()
		rm := removal{text: strings.Join(run, labelSeparator), at: at}
		for k := max(min(prev, at)+1, 0); k <= max(prev, at) && k < len(label); k++ {
			rm.replaced = rm.replaced || own[k] && k != prev
		}
		out = append(out, rm)
		run = run[:0]
	}
	for p := range strings.SplitSeq(input, labelSeparator) {
		p = strings.TrimSpace(p)
		f := fold(p)
		if f == "" {
			continue
		}
		if anchor := lineOf(f, false); anchor >= 0 {
			flush(anchor)
			prev = anchor
			continue
		}
		if _, ok := countries.ISO(p); ok {
			continue // labels leave the country out
		}
		// Word by word: the words the label lacks are lost, the line
		// holding the others anchors the part.
		words()
		var lost []string
		anchor, words := -1, 0
		for _, w := range strings.FieldsFunc(p, notWord) {
			fw := fold(w)
			if countyWords[fw] {
				continue
			}
			words++
			k := lineOf(fw, true)
			switch {
			case k < 0:
				lost = append(lost, w)
			case anchor < 0:
				anchor = k
			}
		}
		if words == 0 {
			continue // "Co." alone
		}
		if anchor < 0 {
			run = append(run, p)
			continue
		}
		flush(anchor)
		if len(lost) > 0 {
			// Words lost from a line the match changed (21 where it has
			// 12) are a correction; from a line it did not, a loss.
			out = append(out, removal{text: strings.Join(lost, " "), at: anchor, replaced: newWords[anchor]})
		}
		prev = anchor
	}
	flush(-1)
	return out
}

// countyWords go before a county name in Ireland ("Co. Dublin"); labels
// leave them out.
var countyWords = map[string]bool{"co": true, "county": true}

// wordSet holds the folded words of a text.
type wordSet map[string]bool

func newWordSet(s string) wordSet {
	ws := wordSet{}
	for _, w := range strings.FieldsFunc(s, notWord) {
		ws[fold(w)] = true
	}
	return ws
}

// has reports whether the set holds w, or a word w abbreviates: up to four
// letters, the first the same, the others in order (St, Rd, Sq, Gdns for
// Street, Road, Square, Gardens).
func (ws wordSet) has(w string) bool {
	if ws[w] {
		return true
	}
	if n := len(w); n < 2 || n > 4 || strings.ContainsFunc(w, unicode.IsDigit) {
		return false // a number or an initial must match whole
	}
	for k := range ws {
		if len(k) > len(w) && k[0] == w[0] && subsequence(w, k) {
			return true
		}
	}
	return false
}

// subsequence reports whether the bytes of a appear in b in order.
func subsequence(a, b string) bool {
	i := 0
	for j := 0; j < len(b) && i < len(a); j++ {
		if b[j] == a[i] {
			i++
		}
	}
	return i == len(a)
}

// notWord splits words at anything that is not a letter or a digit.
func notWord(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }

// fold is s in lower case with only its letters and digits, accents
// dropped, so that "D02X285" is "D02 X285", "St." is "st" and "Dún" is
// "dun".
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if !ascii {
		s = norm.NFD.String(s)
	}
	for _, r := range s {
		if !notWord(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}
