package service

import (
	"unicode"

	"github.com/addrclean/addrclean/gazetteer"
)

// span is one highlight, [start, n] in characters; a zero span (set false)
// is the empty highlight of a line shown as given.
type span struct {
	start, n int
	set      bool
}

// runeArena holds the characters of the strings a highlight compares,
// in one buffer.
type runeArena struct {
	runes []rune
	ends  []int
	out   [][]rune
}

// reset empties the arena, keeping its memory.
func (a *runeArena) reset() {
	a.runes, a.ends, a.out = a.runes[:0], a.ends[:0], a.out[:0]
}

// add appends the characters of s ([]rune(s)).
func (a *runeArena) add(s string) {
	a.runes = appendRunes(a.runes, s)
	a.ends = append(a.ends, len(a.runes))
}

// slices returns the strings added, as characters; valid until the next
// add or reset.
func (a *runeArena) slices() [][]rune {
	a.out = a.out[:0]
	start := 0
	for _, end := range a.ends {
		a.out = append(a.out, a.runes[start:end:end])
		start = end
	}
	return a.out
}

func appendRunes(dst []rune, s string) []rune {
	for _, r := range s {
		dst = append(dst, r)
	}
	return dst
}

// highlightElement is the highlight of the label line of a city, region or
// postcode value v whose details are c. own is the value the input gave for
// that element ("" when it came from an address line or was not given);
// parts are the input parts to look in then. A changed element is always
// highlighted (whole, when no narrower difference shows); an added one is
// highlighted whole even when its text is inside an input line ("Dublin"
// added as the region of "Dublin 1"); an unchanged one only where its text
// differs, and not for a mere deletion ("Co. Sligo" given, "Sligo" shown).
func highlightElement(v, own string, c gazetteer.Change, parts [][]rune) span {
	var abuf, obuf [64]rune // most values fit: no allocation
	a := appendRunes(abuf[:0], v)
	n := len(a)
	if n == 0 {
		return span{}
	}
	whole := span{0, n, true}
	if c == gazetteer.ChangeAdded {
		return whole
	}
	changed := c == gazetteer.ChangeChanged
	var h span
	if own = gazetteer.Tidy(own); own != "" {
		h = highlightLine(a, [][]rune{appendRunes(obuf[:0], own)}, changed)
	} else {
		h = highlightLine(a, parts, changed)
	}
	if changed && !h.set {
		return whole
	}
	return h
}

// highlightLine compares label line a with the input part that shares
// most of it. deletion says whether a label line that is an input part with
// something taken out highlights the word where the cut was ("Briestol"
// shown as "Bristol"); otherwise it has nothing to point at.
func highlightLine(a []rune, input [][]rune, deletion bool) span {
	n := len(a)
	if n == 0 {
		return span{}
	}
	bestPre, bestSuf, bestLen := 0, 0, 0
	for _, b := range input {
		pre := 0
		for pre < n && pre < len(b) && sameFold(a[pre], b[pre]) {
			pre++
		}
		if pre == n && len(b) == n {
			return span{}
		}
		suf := 0
		for suf < min(n, len(b))-pre && sameFold(a[n-1-suf], b[len(b)-1-suf]) {
			suf++
		}
		if pre+suf > bestPre+bestSuf {
			bestPre, bestSuf, bestLen = pre, suf, len(b)
		}
	}
	// A line that shares less than half its characters with every input
	// part is new: highlight all of it rather than a meaningless middle.
	if 2*(bestPre+bestSuf) < n {
		return span{0, n, true}
	}
	start, end := bestPre, n-bestSuf
	if start >= end {
		// The label line is the input part with something removed.
		if !deletion || bestLen <= n {
			return span{}
		}
		// Point at the word where the cut was: the word ending at it, or
		// the one starting there when the cut follows a separator.
		start, end = bestPre, bestPre
		if start > 0 && !isSep(a[start-1]) {
			start--
		} else if end < n && !isSep(a[end]) {
			end++
		} else {
			return span{}
		}
	} else {
		// Separators at the ends of the change belong to neither word: do
		// not let them pull the next word in ("23 " added before "Wolfe").
		for start < end && isSep(a[start]) {
			start++
		}
		for end > start && isSep(a[end-1]) {
			end--
		}
		if start >= end {
			// Only a separator changed (postcode spacing): the words on
			// both sides.
			start, end = bestPre, n-bestSuf
		}
	}
	for start > 0 && !isSep(a[start-1]) {
		start--
	}
	for end < n && !isSep(a[end]) {
		end++
	}
	return span{start, end - start, true}
}

func sameFold(x, y rune) bool {
	return x == y || unicode.ToLower(x) == unicode.ToLower(y)
}

func isSep(r rune) bool {
	return unicode.IsSpace(r) || r == ','
}
