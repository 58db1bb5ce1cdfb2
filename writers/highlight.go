package writers

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// span is a highlighted part of one label line, in runes, half-open.
type span struct{ start, end int }

// lineSpans turns the highlight pairs of a line of n runes into sorted,
// disjoint spans. Pairs are [start, length] in runes; a longer inner array is
// read as consecutive pairs and an odd last number is ignored. Each pair is
// intersected with the line (so out-of-range parts are dropped rather than
// rejected), and overlapping or touching spans are merged.
func lineSpans(pairs []int, n int) []span {
	var out []span
	for i := 0; i+1 < len(pairs); i += 2 {
		start, length := pairs[i], pairs[i+1]
		if length <= 0 || start >= n {
			continue
		}
		var s, e int
		if start < 0 {
			// start < 0 < length, so the sum cannot overflow.
			s, e = 0, start+length
			if e <= 0 {
				continue
			}
		} else {
			s = start
			if length > n-start { // n-start > 0: no overflow
				e = n
			} else {
				e = start + length
			}
		}
		if e > n {
			e = n
		}
		if e <= s {
			continue
		}
		out = append(out, span{s, e})
	}
	if len(out) < 2 {
		return out
	}
	slices.SortFunc(out, func(a, b span) int { return a.start - b.start })
	merged := out[:1]
	for _, sp := range out[1:] {
		last := &merged[len(merged)-1]
		if sp.start <= last.end {
			last.end = max(last.end, sp.end)
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// segment is a run of label text, highlighted or not.
type segment struct {
	text string
	hi   bool
}

// labelSeparator joins label lines, in av_label and the review labels.
const labelSeparator = ", "

// labelSegments splits the label lines, joined with ", ", into plain and
// highlighted runs. Highlights index lines by position; extra entries are
// ignored and missing ones mean no highlight. Runes are counted as
// utf8.DecodeRuneInString does, so an invalid byte is one character and the
// text is cut only at those boundaries, never changed.
func labelSegments(label []string, highlights [][]int) []segment {
	var segs []segment
	add := func(text string, hi bool) {
		if text == "" {
			return
		}
		if n := len(segs); n > 0 && segs[n-1].hi == hi {
			segs[n-1].text += text
			return
		}
		segs = append(segs, segment{text, hi})
	}
	for i, line := range label {
		if i > 0 {
			add(labelSeparator, false)
		}
		var pairs []int
		if i < len(highlights) {
			pairs = highlights[i]
		}
		spans := lineSpans(pairs, utf8.RuneCountInString(line))
		if len(spans) == 0 {
			add(line, false)
			continue
		}
		// Walk the line once, converting span boundaries to byte offsets.
		pos, idx, prev := 0, 0, 0
		advance := func(to int) int {
			for idx < to {
				_, size := utf8.DecodeRuneInString(line[pos:])
				pos += size
				idx++
			}
			return pos
		}
		for _, sp := range spans {
			a := advance(sp.start)
			add(line[prev:a], false)
			b := advance(sp.end)
			add(line[a:b], true)
			prev = b
		}
		add(line[prev:], false)
	}
	return segs
}

// MarkChanges renders a matched address label for a person: the highlighted
// parts of each line (address.highlights, [start, length] in Unicode
// characters) wrapped in [ ], lines joined with ", ", exactly as the CSV
// review file writes matched_label. Out-of-range pairs are clamped.
func MarkChanges(label []string, highlights [][]int) string {
	var b strings.Builder
	for _, s := range labelSegments(label, highlights) {
		if s.hi {
			b.WriteByte('[')
			b.WriteString(s.text)
			b.WriteByte(']')
			continue
		}
		b.WriteString(s.text)
	}
	return b.String()
}
