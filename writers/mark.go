package writers

// MarkChanges renders a matched address label for a person: the highlighted
// parts of each line (address.highlights, [start, length] in Unicode
// characters) wrapped in [ ], lines joined with ", ", exactly as the CSV
// review file writes matched_label. Out-of-range pairs are clamped.
func MarkChanges(label []string, highlights [][]int) string {
	return bracketLabel(label, highlights)
}
