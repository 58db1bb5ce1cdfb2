package writers

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/addrclean/addrclean/record"
	"github.com/rs/zerolog"
	"github.com/xuri/excelize/v2"
)

// Limits of a worksheet.
const (
	xlsxMaxRows  = excelize.TotalRows      // rows per sheet, header included
	xlsxMaxChars = excelize.TotalCellChars // UTF-16 code units per cell
	xlsxMaxCols  = excelize.MaxColumns     // columns per sheet
)

// ErrTooWide is wrapped by the error of NewEnriched and NewReview when an
// XLSX output would have more columns than a worksheet holds: it is
// refused before any row is verified, not after the calls are paid.
var ErrTooWide = errors.New("more columns than an XLSX sheet holds")

// sampleRows is how many rows are held back to size the columns before the
// first row is written (StreamWriter takes widths only before SetRow).
const sampleRows = 100

// Column widths, in characters.
const (
	minWidth = 8
	maxWidth = 60
)

// Fill colours of the action cell, per action.
var actionFills = map[string]string{
	"Accept":    "C6EFCE", // green
	"Suggest":   "FFEB9C", // amber
	"Confirm":   "F4B084", // orange (FCE4D6 was nearly white on most screens)
	"Reject":    "FFC7CE", // light red
	ActionError: "D9D9D9", // grey, with a dark red bold font
}

// The fonts of the styled cells name their family and size: a font that
// names none is shown in a serif face by LibreOffice. Calibri 11 is the
// default font of the workbooks excelize writes.
const (
	fontFamily = "Calibri"
	fontSize   = 11
	// lineHeight is the height in points of one line of Calibri 11, and
	// maxRowHeight the most Excel allows.
	lineHeight   = 15
	maxRowHeight = 409
)

// highlightFont marks the changed parts of matched_label, removedFont the
// parts of the input the match lacks.
var (
	highlightFont = excelize.Font{Bold: true, Color: "FF0000", Family: fontFamily, Size: fontSize}
	removedFont   = excelize.Font{Strike: true, Color: "808080", Family: fontFamily, Size: fontSize}
)

// labelWidth is the width, in characters, of the review's label columns:
// wrapped there, a long address reads on two or three lines instead of
// pushing decision off the screen.
const labelWidth = 36

// xlsxWriter writes a workbook through excelize's StreamWriter, which keeps
// rows in a temporary file, so memory stays flat until the final save
// assembles the zip.
type xlsxWriter struct {
	lay *layout
	out *output
	log zerolog.Logger
	raw bool

	f       *excelize.File
	tmp     *TempDir // f's temporary files
	sw      *excelize.StreamWriter
	base    string // first sheet's name; later sheets are "base 2", ...
	sheet   string
	sheets  int
	row     int // last row written in the current sheet
	maxRows int

	pending [][]any   // the first rows, held back to size the columns
	widths  []float64 // nil until the columns are sized

	headerStyle  int
	wrapStyle    int // a text cell of several lines
	numStyles    map[numFmtKey]int
	actionStyles map[string]int
	otherAction  int // style of an action without its own colour

	buf      []string
	vals     []any
	longWarn warner
}

func newXLSX(lay *layout, path string, opts Options) (w *xlsxWriter, err error) {
	if n := len(lay.cols); n > xlsxMaxCols {
		return nil, fmt.Errorf("%s: %w: the %d input columns and the %d added make %d, and a sheet holds %d; write CSV or JSONL instead",
			path, ErrTooWide, lay.width, n-lay.width, n, xlsxMaxCols)
	}
	out, err := openOutput(path, opts.Stdout)
	if err != nil {
		return nil, err
	}
	f, tmp, err := newWorkbook(path)
	if err != nil {
		_ = out.abort()
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = closeWorkbook(f, tmp)
			_ = out.abort()
		}
	}()
	base := map[kind]string{enriched: "Enriched", review: "Review", plain: "Final"}[lay.kind]
	if err := f.SetSheetName(f.GetSheetName(0), base); err != nil {
		return nil, fmt.Errorf("create workbook %s: %w", path, err)
	}
	w = &xlsxWriter{
		lay: lay, out: out, log: opts.Logger, raw: opts.RawCells,
		f: f, tmp: tmp, base: base, sheet: base, sheets: 1, maxRows: xlsxMaxRows,
		actionStyles: make(map[string]int, len(actionFills)),
		numStyles:    make(map[numFmtKey]int),
	}
	if err := w.makeStyles(); err != nil {
		return nil, fmt.Errorf("create workbook %s: %w", path, err)
	}
	if w.sw, err = f.NewStreamWriter(base); err != nil {
		return nil, fmt.Errorf("create workbook %s: %w", path, err)
	}
	return w, nil
}

func (w *xlsxWriter) makeStyles() error {
	var err error
	w.headerStyle, err = w.f.NewStyle(&excelize.Style{
		Font:   &excelize.Font{Bold: true, Family: fontFamily, Size: fontSize},
		Fill:   excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"F2F2F2"}},
		Border: []excelize.Border{{Type: "bottom", Color: "808080", Style: 1}},
	})
	if err != nil {
		return err
	}
	// A cell of several lines is wrapped, or LibreOffice draws its lines
	// over the rows around it; setRow makes its row tall enough.
	w.wrapStyle, err = w.f.NewStyle(&excelize.Style{Alignment: &excelize.Alignment{WrapText: true, Vertical: "top"}})
	if err != nil {
		return err
	}
	for action, colour := range actionFills {
		st := &excelize.Style{Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{colour}}}
		if action == ActionError {
			st.Font = &excelize.Font{Bold: true, Color: "9C0006", Family: fontFamily, Size: fontSize}
		}
		if w.actionStyles[action], err = w.f.NewStyle(st); err != nil {
			return err
		}
	}
	w.otherAction = w.actionStyles["Confirm"]
	return nil
}

// startSheet sizes the columns, freezes the header and writes it.
func (w *xlsxWriter) startSheet() error {
	if err := setColWidths(w.sw, w.widths, w.added); err != nil {
		return err
	}
	if err := w.sw.SetPanes(w.panes()); err != nil {
		return err
	}
	header := make([]any, len(w.lay.cols))
	for i, c := range w.lay.cols {
		header[i] = excelize.Cell{StyleID: w.headerStyle, Value: w.text(c, 0, i)}
	}
	w.row = 1
	return w.sw.SetRow("A1", header, excelize.RowOpts{StyleID: w.headerStyle})
}

// panes freezes the header; in the review, also the columns through
// decision (row, the id, decision), which stay in view while a person
// scrolls right through the labels and the edit_ columns.
func (w *xlsxWriter) panes() *excelize.Panes {
	if w.lay.decision < 0 {
		return &excelize.Panes{
			Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft",
			Selection: []excelize.Selection{{SQRef: "A2", ActiveCell: "A2", Pane: "bottomLeft"}},
		}
	}
	x := w.lay.decision + 1
	// The cell to the right of decision in the first data row: where the
	// person starts.
	first, _ := excelize.CoordinatesToCellName(x+1, 2)
	decision, _ := excelize.CoordinatesToCellName(x, 2)
	return &excelize.Panes{
		Freeze: true, XSplit: x, YSplit: 1, TopLeftCell: first, ActivePane: "bottomRight",
		Selection: []excelize.Selection{
			{SQRef: decision, ActiveCell: decision, Pane: "bottomRight"},
		},
	}
}

// endSheet adds the autofilter over the written range and flushes the
// sheet. The autofilter goes on the worksheet the StreamWriter is about to
// flush, so Flush writes it after the rows.
func (w *xlsxWriter) endSheet() error {
	last, err := excelize.CoordinatesToCellName(len(w.lay.cols), w.row)
	if err != nil {
		return err
	}
	if err := w.f.AutoFilter(w.sheet, "A1:"+last, nil); err != nil {
		return err
	}
	if w.lay.kind == review {
		if err := w.addDecisionList(); err != nil {
			return err
		}
	}
	return w.sw.Flush()
}

// addDecisionList offers Decisions as a drop-down in the decision column of
// the sheet's data rows. Like the autofilter it goes on the worksheet
// before Flush, which writes it after the rows.
func (w *xlsxWriter) addDecisionList() error {
	col, err := excelize.ColumnNumberToName(w.lay.decision + 1)
	if err != nil {
		return err
	}
	dv := excelize.NewDataValidation(true)
	dv.Sqref = fmt.Sprintf("%s2:%s%d", col, col, max(w.row, 2))
	if err := dv.SetDropList(Decisions); err != nil {
		return err
	}
	dv.SetInput("Decision", "accept: take the service's address; keep: keep the input; edit: use the edit_ columns")
	dv.SetError(excelize.DataValidationErrorStyleStop, "Decision", "Choose accept, keep or edit (or leave it empty: undecided)")
	return w.f.AddDataValidation(w.sheet, dv)
}

// size sets the column widths from the header and the held-back rows.
func (w *xlsxWriter) size() {
	w.widths = make([]float64, len(w.lay.cols))
	for i, c := range w.lay.cols {
		// Room for the autofilter button beside the header text.
		w.widths[i] = float64(utf8.RuneCountInString(c) + 4)
	}
	for _, row := range w.pending {
		for i, v := range row {
			if i >= len(w.widths) {
				break
			}
			w.widths[i] = max(w.widths[i], float64(displayWidth(v)+2))
		}
	}
	for i := range w.widths {
		w.widths[i] = min(max(w.widths[i], minWidth), maxWidth)
	}
	// The review's label columns wrap at labelWidth (see fill).
	for _, i := range []int{w.lay.inputLabel, w.lay.matched} {
		if i >= 0 {
			w.widths[i] = labelWidth
		}
	}
}

// added reports whether column col is one a person reads first: those are
// sized first in a sheet too wide to size every column. In a review they
// lead the sheet (row, the id, decision ... av_error); elsewhere they follow
// the input's columns.
func (w *xlsxWriter) added(col int) bool {
	if w.lay.kind == review {
		return col < w.lay.first
	}
	return col >= w.lay.first
}

// displayWidth is the length in characters of a cell value's longest line.
func displayWidth(v any) int {
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case excelize.Cell:
		return displayWidth(v.Value)
	case []excelize.RichTextRun:
		var b strings.Builder
		for _, r := range v {
			b.WriteString(r.Text)
		}
		s = b.String()
	case float64:
		s = formatCoord(v)
	case int:
		s = fmt.Sprint(v)
	}
	longest := 0
	for line := range strings.Lines(s) {
		longest = max(longest, utf8.RuneCountInString(line))
	}
	return longest
}

// flushPending sizes the columns, then writes the first sheet's header and
// the held-back rows.
func (w *xlsxWriter) flushPending() error {
	w.size()
	if err := w.startSheet(); err != nil {
		return err
	}
	for _, vals := range w.pending {
		if err := w.setRow(vals); err != nil {
			return err
		}
	}
	w.pending = nil
	return nil
}

// setRow writes one data row, continuing on a new sheet when this one is
// full.
func (w *xlsxWriter) setRow(vals []any) error {
	if w.row >= w.maxRows {
		if err := w.endSheet(); err != nil {
			return err
		}
		w.sheets++
		w.sheet = fmt.Sprintf("%s %d", w.base, w.sheets)
		if _, err := w.f.NewSheet(w.sheet); err != nil {
			return err
		}
		var err error
		if w.sw, err = w.f.NewStreamWriter(w.sheet); err != nil {
			return err
		}
		if err := w.startSheet(); err != nil {
			return err
		}
		w.log.Info().Str("sheet", w.sheet).Msg("sheet full; continuing on a new sheet")
	}
	w.row++
	cell, err := excelize.CoordinatesToCellName(1, w.row)
	if err != nil {
		return err
	}
	if lines := w.rowLines(vals); lines > 1 {
		return w.sw.SetRow(cell, vals, excelize.RowOpts{Height: min(float64(lines*lineHeight), maxRowHeight)})
	}
	return w.sw.SetRow(cell, vals)
}

// rowLines is the number of lines of the row's tallest wrapped cell; a
// label column's text also wraps at its width.
func (w *xlsxWriter) rowLines(vals []any) int {
	lines := 1
	for i, v := range vals {
		c, ok := v.(excelize.Cell)
		if !ok || c.StyleID != w.wrapStyle {
			continue
		}
		if s, ok := c.Value.(string); ok {
			lines = max(lines, cellLines(s))
		}
		if i == w.lay.inputLabel || i == w.lay.matched {
			// A rough count: a line holds about labelWidth characters.
			lines = max(lines, (displayWidth(c.Value)+labelWidth-3)/(labelWidth-2))
		}
	}
	return lines
}

// cellLines counts the lines of a cell as a spreadsheet shows them: CRLF,
// LF and a lone CR each end one.
func cellLines(s string) int {
	return 1 + strings.Count(s, "\n") + strings.Count(s, "\r") - strings.Count(s, "\r\n")
}

func (w *xlsxWriter) write(r Result) error {
	w.buf = w.lay.cells(r, w.buf[:0])
	return w.put(w.buf, r.Row, &r, r.Types)
}

// cells renders the row; a row with typed input cells gets one more cell
// past the layout, holding the types (encodeTypes), so that they survive
// the duplicate pass's spool of text cells.
func (w *xlsxWriter) cells(r Result, dst []string) []string {
	dst = w.lay.cells(r, dst)
	if t := encodeTypes(r.Types); t != "" {
		dst = append(dst, t)
	}
	return dst
}

func (w *xlsxWriter) writeCells(row int, cells []string) error {
	var types []record.CellType
	if n := len(w.lay.cols); len(cells) > n {
		types = decodeTypes(cells[n])
		cells = cells[:n]
	}
	return w.put(cells, row, nil, types)
}

// Separators of encodeTypes: control characters XML cannot hold, so no
// number format code read from a workbook has them.
const (
	typeFieldSep = "\x1f"
	typeCellSep  = "\x1e"
)

// encodeTypes writes the typed cells of types as one string: for each, its
// index, kind, built-in format, custom format and value; "" when none.
func encodeTypes(types []record.CellType) string {
	var b strings.Builder
	for i, t := range types {
		if t.Kind == record.KindText {
			continue
		}
		b.WriteString(strconv.Itoa(i) + typeFieldSep + strconv.Itoa(int(t.Kind)) + typeFieldSep +
			strconv.Itoa(t.NumFmt) + typeFieldSep + t.CustomFmt + typeFieldSep + t.Value + typeCellSep)
	}
	return b.String()
}

// decodeTypes reads what encodeTypes wrote; what it cannot read is text.
func decodeTypes(s string) []record.CellType {
	var types []record.CellType
	for rec := range strings.SplitSeq(s, typeCellSep) {
		f := strings.Split(rec, typeFieldSep)
		if len(f) != 5 {
			continue
		}
		i, err1 := strconv.Atoi(f[0])
		kind, err2 := strconv.Atoi(f[1])
		numFmt, err3 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil || err3 != nil || i < 0 || i >= xlsxMaxCols {
			continue
		}
		for len(types) <= i {
			types = append(types, record.CellType{})
		}
		types[i] = record.CellType{Kind: record.CellKind(kind), NumFmt: numFmt, CustomFmt: f[3], Value: f[4]}
	}
	return types
}

// numberStyle returns the style of a typed cell: its number format.
func (w *xlsxWriter) numberStyle(t record.CellType) (int, error) {
	key := numFmtKey{t.NumFmt, t.CustomFmt}
	if id, ok := w.numStyles[key]; ok {
		return id, nil
	}
	st := &excelize.Style{NumFmt: t.NumFmt}
	if t.CustomFmt != "" {
		code := t.CustomFmt
		st.CustomNumFmt = &code
	}
	id, err := w.f.NewStyle(st)
	if err != nil {
		return 0, err
	}
	if len(w.numStyles) < maxNumStyles {
		w.numStyles[key] = id
	}
	return id, nil
}

// numFmtKey names a number format.
type numFmtKey struct {
	id   int
	code string
}

// maxNumStyles bounds the number formats kept: a sheet has a handful.
const maxNumStyles = 1024

func (w *xlsxWriter) dupCols() (int, int) {
	return w.lay.first + enDuplicate, w.lay.first + enFirstRow
}

// put writes one row of text cells; r is the row's result for a review
// output (its highlights), nil for an enriched one.
func (w *xlsxWriter) put(cells []string, row int, r *Result, types []record.CellType) error {
	holding := w.widths == nil
	var vals []any
	if holding {
		vals = make([]any, len(cells)) // kept until the columns are sized
	} else {
		vals = slices.Grow(w.vals[:0], len(cells))[:len(cells)]
		w.vals = vals
	}
	w.fill(vals, cells, row, r, types)
	if holding {
		w.pending = append(w.pending, vals)
		if len(w.pending) < sampleRows {
			return nil
		}
		return w.flushPending()
	}
	return w.setRow(vals)
}

// fill converts the row's text cells into cell values: strings (never
// formulas), the row number, coordinates and duplicate counts as numbers,
// the action with its colour, the review's labels wrapped and
// matched_label as rich text (additions bold red, removals struck out).
func (w *xlsxWriter) fill(vals []any, cells []string, row int, r *Result, types []record.CellType) {
	l := w.lay
	first := l.first
	for i, s := range cells {
		in := -1
		if i < len(l.inputAt) {
			in = l.inputAt[i]
		}
		switch {
		case l.kind == review && i == l.matched && r != nil && Action(*r) != ActionError:
			label, hl := matchedHighlights(*r)
			// put renders r's cells just before: lay.rms are r's.
			if segs := segmentsWith(l.rms, label, hl); len(segs) > 0 {
				vals[i] = excelize.Cell{StyleID: w.wrapStyle, Value: w.rich(segs, row, i)}
			} else {
				vals[i] = nil
			}
		case s == "":
			vals[i] = nil // no cell at all: smaller and faster than an empty string
		case in >= 0 && in < len(types) && types[in].Kind != record.KindText:
			vals[i] = w.typed(s, types[in], row, i)
		case l.kind == review && i == 0:
			vals[i] = row
		case l.kind == enriched && (i == first+enLatitude || i == first+enLongitude):
			// formatCoord wrote the shortest form that round-trips.
			if v, err := strconv.ParseFloat(s, 64); err == nil {
				vals[i] = v
			} else {
				vals[i] = w.text(s, row, i)
			}
		case l.kind == enriched && (i == first+enDuplicate || i == first+enFirstRow):
			if v, err := strconv.Atoi(s); err == nil {
				vals[i] = v
			} else {
				vals[i] = w.text(s, row, i)
			}
		case i == l.action:
			style, ok := w.actionStyles[s]
			if !ok {
				style = w.otherAction
			}
			vals[i] = excelize.Cell{StyleID: style, Value: w.text(s, row, i)}
		case i == l.inputLabel, strings.ContainsAny(s, "\r\n"):
			vals[i] = excelize.Cell{StyleID: w.wrapStyle, Value: w.text(s, row, i)}
		default:
			vals[i] = w.text(s, row, i)
		}
	}
}

// typed is a number or date cell of the input as a number in the input's
// number format (formula neutralising is for text: a number is none);
// failing that, the text shown.
func (w *xlsxWriter) typed(s string, t record.CellType, row, col int) any {
	v, err := strconv.ParseFloat(t.Value, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return w.text(s, row, col)
	}
	style, err := w.numberStyle(t)
	if err != nil {
		return w.text(s, row, col)
	}
	return excelize.Cell{StyleID: style, Value: v}
}

// text neutralises and fits one string cell.
func (w *xlsxWriter) text(s string, row, col int) string {
	if !w.raw {
		s = neutralise(s)
	}
	if len(s) <= xlsxMaxChars { // a UTF-16 unit takes at least one byte
		return s
	}
	cut, ok := cutUTF16(s, xlsxMaxChars)
	if !ok {
		return s
	}
	w.warnLong(row, col)
	return cut
}

// rich renders highlighted segments as rich text runs, neutralised and fitted
// like text.
func (w *xlsxWriter) rich(segs []segment, row, col int) []excelize.RichTextRun {
	runs := make([]excelize.RichTextRun, 0, len(segs)+1)
	if !w.raw && len(segs) > 0 && formulaLike(segs[0].text) {
		runs = append(runs, excelize.RichTextRun{Text: "'"})
	}
	font, removed := highlightFont, removedFont
	for _, s := range segs {
		run := excelize.RichTextRun{Text: s.text}
		switch {
		case s.hi:
			run.Font = &font
		case s.removed:
			run.Font = &removed
		}
		runs = append(runs, run)
	}
	room := xlsxMaxChars
	for i := range runs {
		cut, ok := cutUTF16(runs[i].Text, room)
		if ok {
			w.warnLong(row, col)
			runs[i].Text = cut
			return runs[:i+1]
		}
		room -= utf16Len(runs[i].Text)
	}
	return runs
}

func (w *xlsxWriter) warnLong(row, col int) {
	if ok, last := w.longWarn.allow(); ok {
		ev := w.log.Warn().Int("row", row).Str("column", w.lay.cols[col]).Int("max_chars", xlsxMaxChars)
		if last {
			ev = ev.Bool("further_warnings_suppressed", true)
		}
		ev.Msg("cell too long for a spreadsheet; truncated")
	}
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// cutUTF16 returns the longest prefix of s, cut between characters, that
// fits in limit UTF-16 code units, and whether s had to be cut.
func cutUTF16(s string, limit int) (string, bool) {
	n := 0
	for i, r := range s {
		n += utf16.RuneLen(r) // RuneError (invalid byte) is one unit
		if n > limit {
			return s[:i], true
		}
	}
	return s, false
}

func (w *xlsxWriter) finish() error {
	err := w.save()
	if cerr := closeWorkbook(w.f, w.tmp); err == nil && cerr != nil {
		err = fmt.Errorf("close workbook %s: %w", w.out.path, cerr)
	}
	if err != nil {
		_ = w.out.abort()
		return err
	}
	return w.out.commit()
}

func (w *xlsxWriter) save() error {
	if w.widths == nil {
		if err := w.flushPending(); err != nil {
			return fmt.Errorf("write %s: %w", w.out.path, err)
		}
	}
	if err := w.endSheet(); err != nil {
		return fmt.Errorf("write %s: %w", w.out.path, err)
	}
	// The first sheet is already the active one. SetActiveSheet must not be
	// called here: it reads every worksheet back, which for a flushed stream
	// means parsing the whole sheet into memory.
	if err := w.f.Write(w.out.w); err != nil {
		return fmt.Errorf("save workbook %s: %w", w.out.path, err)
	}
	return nil
}

func (w *xlsxWriter) discard() error {
	_ = closeWorkbook(w.f, w.tmp)
	return w.out.abort()
}
