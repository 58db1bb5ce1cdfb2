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
		if start < 0 && length > 0 {
			// start < 0 < length, so the sum cannot overflow.
			start, length = 0, start+length
		}
		if length <= 0 || start >= n {
			continue
		}
		// 0 <= start < n, so n-start cannot overflow.
		out = append(out, span{start, start + min(length, n-start)})
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

// segment is a run of label text, highlighted (an addition or a change)
// or not, or removed: input text the match does not carry.
type segment struct {
	text    string
	hi      bool
	removed bool
}

// segments are runs of label text, neighbours of one kind joined.
type segments []segment

func (ss *segments) add(s segment) {
	if s.text == "" {
		return
	}
	if n := len(*ss); n > 0 && (*ss)[n-1].hi == s.hi && (*ss)[n-1].removed == s.removed {
		(*ss)[n-1].text += s.text
		return
	}
	*ss = append(*ss, s)
}

// labelSeparator joins label lines, in av_label and the review labels.
const labelSeparator = ", "

// labelSegments splits the label lines, joined with ", ", into plain and
// highlighted runs. Highlights index lines by position; extra entries are
// ignored and missing ones mean no highlight. Runes are counted as
// utf8.DecodeRuneInString does, so an invalid byte is one character and the
// text is cut only at those boundaries, never changed.
func labelSegments(label []string, highlights [][]int) []segment {
	var segs segments
	add := func(text string, hi bool) { segs.add(segment{text: text, hi: hi}) }
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
// characters) wrapped in [ ], lines joined with ", ", as addrclean verify
// prints it. Out-of-range pairs are clamped. The review file writes
// MarkDiff, which shows removals too.
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

// markedSegments is labelSegments with the input's removals (diffLabel) in
// place: each before the label line that follows it in the input, joined
// to its neighbours with ", ".
func markedSegments(input string, label []string, highlights [][]int) []segment {
	return segmentsWith(diffLabel(input, label, highlights), label, highlights)
}

// segmentsWith is markedSegments with the removals already worked out.
func segmentsWith(rms []removal, label []string, highlights [][]int) []segment {
	if len(rms) == 0 {
		return labelSegments(label, highlights)
	}
	var segs segments
	sep := func() {
		if len(segs) > 0 {
			segs.add(segment{text: labelSeparator})
		}
	}
	next := 0
	for i := range label {
		for ; next < len(rms) && rms[next].at <= i; next++ {
			sep()
			segs.add(segment{text: rms[next].text, removed: true})
		}
		sep()
		var hl [][]int
		if i < len(highlights) {
			hl = highlights[i : i+1]
		}
		for _, s := range labelSegments(label[i:i+1], hl) {
			segs.add(s)
		}
	}
	for ; next < len(rms); next++ {
		sep()
		segs.add(segment{text: rms[next].text, removed: true})
	}
	return segs
}

// The marks of MarkDiff, and the escape that keeps them unambiguous.
const (
	addOpen, addClose = "[+", "+]"
	delOpen, delClose = "[-", "-]"
	markEscape        = '\\'
)

// MarkDiff renders a matched label against the input address, as the CSV
// review writes matched_label: what the service added or changed between
// [+ and +], what the input had and the match lacks between [- and -]
// (placed where it stood), lines joined with ", ". The notation is
// unambiguous: in the text itself a backslash is written \\, and a [ before
// + or -, or a + or - before ], gets a backslash in front.
func MarkDiff(input string, label []string, highlights [][]int) string {
	return markDiffWith(diffLabel(input, label, highlights), label, highlights)
}

// markDiffWith is MarkDiff with the removals already worked out.
func markDiffWith(rms []removal, label []string, highlights [][]int) string {
	var b strings.Builder
	for _, s := range segmentsWith(rms, label, highlights) {
		switch {
		case s.hi:
			b.WriteString(addOpen)
			escapeMarks(&b, s.text)
			b.WriteString(addClose)
		case s.removed:
			b.WriteString(delOpen)
			escapeMarks(&b, s.text)
			b.WriteString(delClose)
		default:
			escapeMarks(&b, s.text)
		}
	}
	return b.String()
}

// escapeMarks writes s so that none of its characters reads as a mark.
func escapeMarks(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		var next byte
		if i+1 < len(s) {
			next = s[i+1]
		}
		switch {
		case c == markEscape,
			c == '[' && (next == '+' || next == '-'),
			(c == '+' || c == '-') && next == ']':
			b.WriteByte(markEscape)
		}
		b.WriteByte(c)
	}
}
