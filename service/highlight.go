package service

import "unicode"

// highlights returns, for every label line, the [start, length] span (in
// Unicode characters) of what differs from the closest input line, or an
// empty span when the line is there already (ignoring case). The interface
// allows one pair per line, so several changes in a line become one span;
// the span is widened to whole words, which is what a reader looks at.
func highlights(label, input []string) [][]int {
	out := make([][]int, len(label))
	in := make([][]rune, len(input))
	for i, s := range input {
		in[i] = []rune(s)
	}
	for i, l := range label {
		out[i] = highlightLine([]rune(l), in)
	}
	return out
}

func highlightLine(a []rune, input [][]rune) []int {
	n := len(a)
	if n == 0 {
		return []int{}
	}
	bestPre, bestSuf := 0, 0
	for _, b := range input {
		pre := 0
		for pre < n && pre < len(b) && sameFold(a[pre], b[pre]) {
			pre++
		}
		if pre == n && len(b) == n {
			return []int{}
		}
		suf := 0
		for suf < min(n, len(b))-pre && sameFold(a[n-1-suf], b[len(b)-1-suf]) {
			suf++
		}
		if pre+suf > bestPre+bestSuf {
			bestPre, bestSuf = pre, suf
		}
	}
	// A line that shares less than half its characters with every input
	// line is new: highlight all of it rather than a meaningless middle.
	if 2*(bestPre+bestSuf) < n {
		return []int{0, n}
	}
	start, end := bestPre, n-bestSuf
	if start >= end {
		// The label line is the input line with something removed: there
		// is nothing in the line to point at.
		return []int{}
	}
	for start > 0 && !isSep(a[start-1]) {
		start--
	}
	for end < n && !isSep(a[end]) {
		end++
	}
	return []int{start, end - start}
}

func sameFold(x, y rune) bool {
	return x == y || unicode.ToLower(x) == unicode.ToLower(y)
}

func isSep(r rune) bool {
	return unicode.IsSpace(r) || r == ','
}
