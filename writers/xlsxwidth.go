package writers

// maxSizedCols bounds the columns of a sheet that get a width of their own;
// the others keep the default width. excelize's StreamWriter.SetColWidth
// rewrites every column already set at each call (flatCols, issue 755 of
// excelize), so setting n columns one call at a time costs n³ steps: 16,384
// columns took over 15 minutes. With this bound a sheet is sized in a
// fraction of a second however wide it is (512 columns of alternating
// widths, the worst case, take about 0.1 s).
const maxSizedCols = 512

// colWidther is what setColWidths needs of a StreamWriter.
type colWidther interface {
	SetColWidth(minVal, maxVal int, width float64) error
}

// setColWidths gives the columns the widths of widths (indexed from 0), in
// as few calls as there are runs of equal width among the sized columns.
// When there are more than maxSizedCols columns, the columns for which
// sized reports true are sized first, then the others from the left, up to
// maxSizedCols; the rest keep the sheet's default width. Runs are set last
// column first: StreamWriter puts each call's columns before those set
// already, and Excel reports a file whose columns are out of order corrupt.
func setColWidths(sw colWidther, widths []float64, sized func(col int) bool) error {
	keep := sizedColumns(len(widths), sized)
	for end := len(widths); end > 0; {
		if !keep(end - 1) {
			end--
			continue
		}
		start := end - 1
		for start > 0 && keep(start-1) && widths[start-1] == widths[end-1] {
			start--
		}
		if err := sw.SetColWidth(start+1, end, widths[end-1]); err != nil {
			return err
		}
		end = start
	}
	return nil
}

// sizedColumns returns which of n columns get a width of their own: all
// of them up to maxSizedCols, else those preferred by sized and then the
// first others, maxSizedCols in all.
func sizedColumns(n int, sized func(col int) bool) func(col int) bool {
	if n <= maxSizedCols {
		return func(int) bool { return true }
	}
	preferred := 0
	for i := range n {
		if sized(i) {
			preferred++
		}
	}
	// The first others: columns 0 to firstOthers-1 that sized does not
	// prefer make up the rest of the budget.
	room := max(maxSizedCols-preferred, 0)
	firstOthers := 0
	for ; firstOthers < n && room > 0; firstOthers++ {
		if !sized(firstOthers) {
			room--
		}
	}
	return func(col int) bool { return col < firstOthers || sized(col) }
}
