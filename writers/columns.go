package writers

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/addrclean/addrclean/api"
)

// EnrichedColumns are the columns the enriched output appends to the input
// columns, in order. Callers must not modify it.
var EnrichedColumns = []string{
	"av_action", "av_status", "av_match_level", "av_complete", "av_address_id",
	"av_line1", "av_line2", "av_line3", "av_line4",
	"av_city", "av_region", "av_postcode", "av_country", "av_country_iso",
	"av_label", "av_lines_amended", "av_city_amended", "av_region_amended", "av_postcode_amended",
	"av_latitude", "av_longitude", "av_location_accuracy", "av_message", "av_error",
}

// DuplicateColumns follow EnrichedColumns in the enriched file outputs:
// how many input rows share the row's av_address_id, and the first of them
// (1-based), both empty for a row without an id. They are known only once
// every row is in, so the file writers fill them at Close (see NewEnriched).
var DuplicateColumns = []string{"av_duplicates", "av_first_row"}

// ReviewColumns are the review's own columns every review output has had,
// in the order of ReviewValues and of the review table (the review file
// lays them out as ReviewLayout says, with ChangesColumn and the decision
// columns among them). Callers must not modify it.
var ReviewColumns = []string{
	"av_action", "av_message", "input_label", "matched_label", "av_address_id", "av_error",
}

// DecisionColumns follow ReviewColumns in the review file outputs, written
// empty for a person to fill in: DecisionColumn (see Decisions), then the
// edit_ columns (EditColumns). addrclean apply reads them back.
var DecisionColumns = []string{
	DecisionColumn, "edit_line1", "edit_line2", "edit_line3", "edit_line4",
	"edit_city", "edit_region", "edit_postcode", "edit_country",
}

// DecisionColumn is the review column where a person records a decision.
const DecisionColumn = "decision"

// The decisions a person can record in DecisionColumn.
const (
	// DecisionAccept takes the service's address.
	DecisionAccept = "accept"
	// DecisionKeep keeps the input address as it is.
	DecisionKeep = "keep"
	// DecisionEdit takes the address the person typed in the edit_ columns.
	DecisionEdit = "edit"
)

// Decisions are the values offered in DecisionColumn (the XLSX drop-down).
var Decisions = []string{DecisionAccept, DecisionKeep, DecisionEdit}

// EditColumns are the review columns holding an address typed by a person
// (DecisionEdit): lines 1 to 4, city, region, postcode, country.
var EditColumns = DecisionColumns[1:]

// CachedColumn is the last enriched column with Options.MarkCached.
const CachedColumn = "av_cached"

// ActionError is the action of a row that could not be verified.
const ActionError = "Error"

// Indexes into EnrichedColumns and ReviewColumns.
const (
	enAction    = 0
	enLatitude  = 19
	enLongitude = 20
	enError     = 23
	enDuplicate = 24 // av_duplicates, the first of DuplicateColumns
	enFirstRow  = 25 // av_first_row

)

// noResponse is av_error for a row that has neither a response nor a reason;
// a pipeline should not produce one, but the row must still say why it has
// no verdict.
const noResponse = "no verify response"

// Action returns the row's action: "Error" when Err is set or there is no
// response, the response's action otherwise.
func Action(r Result) string {
	if r.Err != "" || r.Response == nil {
		return ActionError
	}
	return string(r.Response.Action)
}

// NeedsReview reports whether a row belongs in the review output: every row
// whose action is not Accept (Suggest, Confirm, Reject, Error, and any action
// the service adds later).
func NeedsReview(r Result) bool {
	return Action(r) != string(api.ActionAccept)
}

// errorText is av_error for an Error row.
func errorText(r Result) string {
	if r.Err != "" {
		return r.Err
	}
	return noResponse
}

// kind tells the enriched, review and plain (NewRows) outputs apart, and
// names them in logs.
type kind string

const (
	enriched kind = "enriched"
	review   kind = "review"
	plain    kind = "rows"
)

// layout is the column model of one output.
type layout struct {
	kind   kind
	header []string // input header
	width  int      // number of input columns
	cols   []string // the whole output header
	// first is the index of the first appended column (enriched, plain).
	first int
	// markCached appends CachedColumn (enriched only).
	markCached bool
	// inputAt is, per output column, the input column it holds, or -1.
	inputAt []int
	// The review's columns, -1 in the other outputs; action is also the
	// enriched av_action.
	action, matched, decision, inputLabel int
	// id is the input column a review shows second (Options.IDColumn),
	// -1 when none.
	id int
	// rms are the removals of the review row cells rendered last: the
	// format marks them in matched_label without comparing the labels
	// again.
	rms []removal
}

// ReviewLayout returns the header of a review output of an input whose
// header is header, with the id column idColumn ("" for none): row, the id
// column, decision, av_action, av_changes, input_label, matched_label,
// av_message, the edit_ columns, av_address_id, av_error, then the other
// input columns in input order. What a person decides on comes first.
func ReviewLayout(header []string, idColumn string) []string {
	return newLayout(review, header, false, idColumn).cols
}

func newLayout(k kind, header []string, markCached bool, idColumn string) *layout {
	l := &layout{kind: k, header: header, width: len(header), markCached: markCached && k == enriched,
		action: -1, matched: -1, decision: -1, inputLabel: -1, id: -1}
	input := func(i int) {
		l.cols = append(l.cols, header[i])
		l.inputAt = append(l.inputAt, i)
	}
	own := func(cols ...string) {
		l.cols = append(l.cols, cols...)
		for range cols {
			l.inputAt = append(l.inputAt, -1)
		}
	}
	if k != review {
		for i := range header {
			input(i)
		}
		l.first = len(l.cols)
		if k == enriched {
			l.action = l.first + enAction
			own(EnrichedColumns...)
			own(DuplicateColumns...)
			own(ChangesColumn)
			if l.markCached {
				own(CachedColumn)
			}
		}
		return l
	}
	if idColumn != "" {
		l.id = slices.Index(header, idColumn)
	}
	own("row")
	if l.id >= 0 {
		input(l.id)
	}
	// In the order layout.cells fills them.
	n := len(l.cols)
	l.decision, l.action, l.inputLabel, l.matched = n, n+1, n+3, n+4
	own(DecisionColumn, "av_action", ChangesColumn, "input_label", "matched_label", "av_message")
	own(EditColumns...)
	own("av_address_id", "av_error")
	l.first = len(l.cols)
	for i := range header {
		if i != l.id {
			input(i)
		}
	}
	return l
}

// inputCells appends the row's cells fitted to the header width: shorter
// rows are padded with empty cells and cells past the header are dropped,
// since they would shift the appended columns.
func (l *layout) inputCells(cells []string, dst []string) []string {
	n := min(len(cells), l.width)
	dst = append(dst, cells[:n]...)
	for i := n; i < l.width; i++ {
		dst = append(dst, "")
	}
	return dst
}

// cell returns input cell i of cells, "" past their end.
func cell(cells []string, i int) string {
	if i < len(cells) {
		return cells[i]
	}
	return ""
}

// cells appends the row's text cells in column order to dst. The review's
// matched_label cell holds the plain label; formats that mark changes
// render it from the response.
func (l *layout) cells(r Result, dst []string) []string {
	switch l.kind {
	case plain:
		return l.inputCells(r.Cells, dst)
	case review:
		dst = append(dst, strconv.Itoa(r.Row))
		if l.id >= 0 {
			dst = append(dst, cell(r.Cells, l.id))
		}
		v := ReviewValues(r)
		l.rms = removalsOf(r)
		// ReviewValues are in ReviewColumns order: av_action, av_message,
		// input_label, matched_label, av_address_id, av_error. decision
		// and the edit_ columns are the person's to fill in.
		dst = append(dst, "", v[0], changesWith(r, l.rms), v[2], v[3], v[1])
		for range EditColumns {
			dst = append(dst, "")
		}
		dst = append(dst, v[4], v[5])
		for i := range l.width {
			if i != l.id {
				dst = append(dst, cell(r.Cells, i))
			}
		}
		return dst
	}
	dst = l.inputCells(r.Cells, dst)
	dst = appendEnriched(dst, r)
	// av_duplicates and av_first_row: filled when the output is complete.
	dst = append(dst, "", "", Changes(r))
	if l.markCached {
		dst = append(dst, strconv.FormatBool(r.FromCache))
	}
	return dst
}

// formatCoord writes a coordinate in the shortest form that parses back to
// the same float64, without an exponent.
func formatCoord(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func valueOf(v *api.Value) string {
	if v == nil {
		return ""
	}
	return v.Value
}

// joinLines joins the non-empty values of lines with ", ".
func joinLines(lines []api.Line) string {
	var b strings.Builder
	for _, ln := range lines {
		if ln.Value == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(labelSeparator)
		}
		b.WriteString(ln.Value)
	}
	return b.String()
}

func appendEnriched(dst []string, r Result) []string {
	if Action(r) == ActionError {
		base := len(dst)
		for range EnrichedColumns {
			dst = append(dst, "")
		}
		dst[base+enAction] = ActionError
		dst[base+enError] = errorText(r)
		return dst
	}
	v := r.Response
	a := &v.Address
	var line [4]string
	for i, ln := range a.Lines {
		if i == 3 {
			line[3] = joinLines(a.Lines[3:])
			break
		}
		line[i] = ln.Value
	}
	var country, iso string
	if a.Country != nil {
		country, iso = a.Country.Value, a.Country.ISO
	}
	var lat, lon, acc string
	if loc := v.Data.Location; loc != nil {
		lat, lon, acc = formatCoord(loc.Latitude), formatCoord(loc.Longitude), loc.Accuracy
	}
	info := &v.Information
	return append(dst,
		string(v.Action), info.Status, info.MatchLevel, strconv.FormatBool(info.Complete), a.ID,
		line[0], line[1], line[2], line[3],
		valueOf(a.City), valueOf(a.Region), valueOf(a.Postcode), country, iso,
		strings.Join(a.Label, labelSeparator),
		strconv.FormatBool(info.AddressLinesAmended), strconv.FormatBool(info.CityAmended),
		strconv.FormatBool(info.RegionAmended), strconv.FormatBool(info.PostcodeAmended),
		lat, lon, acc, v.Form.Message.Value, "",
	)
}

func appendReview(dst []string, r Result) []string {
	if Action(r) == ActionError {
		return append(dst, ActionError, "", r.InputLabel, "", "", errorText(r))
	}
	v := r.Response
	return append(dst,
		string(v.Action), v.Form.Message.Value, r.InputLabel,
		strings.Join(v.Address.Label, labelSeparator), v.Address.ID, "",
	)
}

// matchedHighlights returns the label and highlights of a review row, or
// nil for an Error row.
func matchedHighlights(r Result) ([]string, [][]int) {
	if Action(r) == ActionError {
		return nil, nil
	}
	return r.Response.Address.Label, r.Response.Address.Highlights
}

// warnLimit caps repeated warnings of one kind per output, so a bad input
// cannot flood the log.
const warnLimit = 10

// warner logs a bounded number of warnings of one kind.
type warner struct {
	n int
}

func (w *warner) allow() (ok, last bool) {
	w.n++
	return w.n <= warnLimit, w.n == warnLimit
}

// jsonKeys returns unique object keys for the header: the header name, or
// "column_N" (N the 1-based column) when it is empty, with "_N" appended
// until unique when an earlier column took the name.
func jsonKeys(header []string) []string {
	var ks keySet
	for _, h := range header {
		ks.add(h)
	}
	return ks.keys
}

// keySet hands out the object keys of jsonKeys one column at a time, so
// cells past the header (keyed as unnamed columns) follow the same rules.
type keySet struct {
	used map[string]bool
	keys []string
}

// add returns the key of the next column, named name.
func (s *keySet) add(name string) string {
	if s.used == nil {
		s.used = make(map[string]bool)
	}
	if s.keys == nil {
		s.keys = []string{}
	}
	col := len(s.keys) + 1
	k := name
	if k == "" {
		k = fmt.Sprintf("column_%d", col)
	}
	for s.used[k] {
		k = fmt.Sprintf("%s_%d", k, col)
	}
	s.used[k] = true
	s.keys = append(s.keys, k)
	return k
}

// EnrichedValues returns the values of EnrichedColumns for r as the CSV
// output writes them before neutralisation. Readers of a JSONL output use
// it to see the same columns.
func EnrichedValues(r Result) []string {
	return appendEnriched(make([]string, 0, len(EnrichedColumns)), r)
}

// ReviewValues returns the values of ReviewColumns for r, matched_label
// plain (no highlight marks).
func ReviewValues(r Result) []string {
	return appendReview(make([]string, 0, len(ReviewColumns)), r)
}
