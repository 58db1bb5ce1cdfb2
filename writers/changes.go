package writers

import (
	"bytes"
	"iter"
	"slices"
	"strings"
	"sync"
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
	return changesWith(r, removalsOf(r))
}

// removalsOf compares r's input label with its matched label (diffLabel),
// nil for a row without a match.
func removalsOf(r Result) []removal {
	if Action(r) == ActionError {
		return nil
	}
	a := &r.Response.Address
	return diffLabel(r.InputLabel, a.Label, a.Highlights)
}

// changesWith is Changes with the row's removals already worked out, so
// that the review, which also marks them in matched_label, compares the
// labels once.
func changesWith(r Result, rms []removal) string {
	if Action(r) == ActionError {
		return ""
	}
	v := r.Response
	info := &v.Information
	if info.MatchLevel == api.LevelNone || len(v.Address.Label) == 0 {
		return ChangesNotMatched
	}
	var parts []string
	var lost []string
	for _, rm := range rms {
		if !rm.replaced {
			lost = append(lost, rm.text)
		}
	}
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
	if input == "" || allFound(input, label) {
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
	var lw wordList // the words of the label, with their lines
	var own, newWords []bool
	words := func() {
		if own != nil {
			return
		}
		lw = foldWords(label)
		iw := foldWords([]string{input})
		own, newWords = make([]bool, len(label)), make([]bool, len(label))
		for i, w := range lw.words {
			if !iw.holds(w) {
				newWords[lw.line[i]] = true
			}
		}
		for k, l := range label {
			own[k] = newWords[k] || k < len(highlights) && len(lineSpans(highlights[k], utf8.RuneCountInString(l))) > 0
		}
	}
	// lineOf returns the first label line holding folded part f (the whole
	// line, or inside it when f has five characters at least, so that a
	// number is not found inside another; a postcode may be written without
	// its space) or, with word, the folded word f.
	lineOf := func(f string) int {
		for k := range label {
			if folded[k] == f || len(f) >= 5 && strings.Contains(folded[k], f) {
				return k
			}
		}
		return -1
	}
	var out []removal
	var wb []byte // a folded word
	prev := -1    // the label line of the last input part the label holds
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
		if anchor := lineOf(f); anchor >= 0 {
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
		for w := range wordsOf(p) {
			wb = appendFold(wb[:0], w)
			if countyWords[string(wb)] {
				continue
			}
			words++
			k := -1
			for j := range label {
				if lw.has(wb, j) {
					k = j
					break
				}
			}
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

// foldScratch is the memory of allFound.
type foldScratch struct {
	label []byte // the folded label lines, one after another
	ends  []int  // where each ends in label
	part  []byte
}

var foldPool = sync.Pool{New: func() any { return new(foldScratch) }}

// allFound reports whether every part of input is found whole in a line of
// label, as diffLabel finds them, or is a country: the common case, checked
// without allocating, in which nothing was lost.
func allFound(input string, label []string) bool {
	sc := foldPool.Get().(*foldScratch)
	defer foldPool.Put(sc)
	sc.label, sc.ends = sc.label[:0], sc.ends[:0]
	for _, l := range label {
		sc.label = appendFold(sc.label, l)
		sc.ends = append(sc.ends, len(sc.label))
	}
	for p := range strings.SplitSeq(input, labelSeparator) {
		p = strings.TrimSpace(p)
		sc.part = appendFold(sc.part[:0], p)
		f := sc.part
		if len(f) == 0 {
			continue
		}
		found, start := false, 0
		for _, end := range sc.ends {
			line := sc.label[start:end]
			start = end
			if bytes.Equal(line, f) || len(f) >= 5 && bytes.Contains(line, f) {
				found = true
				break
			}
		}
		if !found {
			if _, ok := countries.ISO(p); !ok {
				return false
			}
		}
	}
	return true
}

// countyWords go before a county name in Ireland ("Co. Dublin"); labels
// leave them out.
var countyWords = map[string]bool{"co": true, "county": true}

// wordList holds the folded words of some lines of text (a few dozen: a
// list is quicker to scan than a map is to build), and the line of each.
type wordList struct {
	words []string
	line  []int
}

// foldWords folds the words of lines into one string, which the words
// share.
func foldWords(lines []string) wordList {
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	buf := make([]byte, 0, n)
	ends, line := make([]int, 0, n/4+1), make([]int, 0, n/4+1)
	for k, l := range lines {
		for w := range wordsOf(l) {
			buf = appendFold(buf, w)
			ends, line = append(ends, len(buf)), append(line, k)
		}
	}
	all := string(buf)
	wl := wordList{words: make([]string, len(ends)), line: line}
	start := 0
	for i, end := range ends {
		wl.words[i], start = all[start:end], end
	}
	return wl
}

// has reports whether line k holds w or a word w abbreviates: up to four
// letters, the first the same, the others in order (St, Rd, Sq, Gdns for
// Street, Road, Square, Gardens).
func (wl wordList) has(w []byte, k int) bool {
	for i, x := range wl.words {
		if wl.line[i] == k && (x == string(w) || abbreviates(w, x)) {
			return true
		}
	}
	return false
}

// holds reports whether the list holds w or an abbreviation of it: the
// input wrote a word of the label, short or in full.
func (wl wordList) holds(w string) bool {
	for _, x := range wl.words {
		if x == w || abbreviates(x, w) {
			return true
		}
	}
	return false
}

// abbreviates reports whether a is an abbreviation of b (see has).
func abbreviates[T string | []byte](a T, b string) bool {
	if n := len(a); n < 2 || n > 4 || len(b) <= n || a[0] != b[0] {
		return false // an initial must match whole
	}
	for i := range len(a) {
		if '0' <= a[i] && a[i] <= '9' {
			return false // so must a number
		}
	}
	return subsequence(a, b)
}

// subsequence reports whether the bytes of a appear in b in order.
func subsequence[T string | []byte](a T, b string) bool {
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
	return string(appendFold(make([]byte, 0, len(s)), s))
}

// wordsOf yields the words of s: runs of letters and digits.
func wordsOf(s string) iter.Seq[string] {
	return func(yield func(string) bool) {
		start := -1
		for i, r := range s {
			switch {
			case !notWord(r):
				if start < 0 {
					start = i
				}
			case start >= 0:
				if !yield(s[start:i]) {
					return
				}
				start = -1
			}
		}
		if start >= 0 {
			yield(s[start:])
		}
	}
}

// appendFold appends fold(s) to dst.
func appendFold(dst []byte, s string) []byte {
	ascii := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				dst = append(dst, c)
			case 'A' <= c && c <= 'Z':
				dst = append(dst, c+'a'-'A')
			}
		}
		return dst
	}
	for _, r := range norm.NFD.String(s) {
		if !notWord(r) {
			dst = utf8.AppendRune(dst, unicode.ToLower(r))
		}
	}
	return dst
}
