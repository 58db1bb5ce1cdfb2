package apply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/addrclean/addrclean/countries"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/record"
	"github.com/addrclean/addrclean/runfile"
	"github.com/addrclean/addrclean/writers"
)

// FinalColumns are the columns the final file appends to the input columns.
var FinalColumns = []string{
	"final_line1", "final_line2", "final_line3", "final_line4",
	"final_city", "final_region", "final_postcode", "final_country", "final_country_name", "final_source",
}

// The values of final_source.
const (
	// SourceService is the service's address: an Accept row, or a review
	// row decided accept.
	SourceService = "service"
	// SourceInput is the input's own address (decided keep).
	SourceInput = "input"
	// SourcePerson is the address a person typed in the edit_ columns.
	SourcePerson = "person"
	// SourceUnresolved is a row nobody decided: no final address.
	SourceUnresolved = "unresolved"
)

// Undecided is the Decisions key of review rows with an empty decision.
const Undecided = "undecided"

// Options tunes Run. The zero value is usable.
type Options struct {
	// Mapping names the input's address columns, as for addrclean run; a
	// keep decision copies them. Unset fields are detected from the header.
	Mapping readers.MappingSpec
	// ReadReview tunes reading the review file (a spreadsheet may have
	// saved it in another encoding); the enriched file is read as run
	// writes it.
	ReadReview readers.Options
	// Write tunes the final file.
	Write writers.Options
	// IDColumn, when set, is the input column that names rows in problems
	// and in Report.UnresolvedIDs (tables, whose rows are known by id).
	IDColumn string
	// CheckLabels compares each review row's input_label with the address
	// in the input row now, with Mapping: a review table holds no input
	// cells, so this is how a decision on an address that has changed
	// since the run is refused.
	CheckLabels bool
}

// Report is what Run did.
type Report struct {
	// Rows is the number of rows written.
	Rows int64 `json:"rows"`
	// Sources counts rows per final_source.
	Sources map[string]int64 `json:"sources"`
	// Decisions counts the review rows per decision (accept, keep, edit,
	// undecided).
	Decisions map[string]int64 `json:"decisions"`
	// NotInReview counts rows that need review but were missing from the
	// review (a person deleted them): each is a problem, so Run refuses.
	NotInReview int64 `json:"not_in_review"`
	// NotVerified counts rows the enriched data has no result for (a
	// table row added since the run); they are unresolved.
	NotVerified int64 `json:"not_verified,omitempty"`
	// Changed counts rows the service accepted whose input address is not
	// the one it verified (with CheckLabels and an input_label in the
	// enriched data): changed since the run, they are unresolved until the
	// next run.
	Changed int64 `json:"changed,omitempty"`
	// Outside counts review rows whose id no input row has, with
	// Options.IDColumn: a review table keeps the rows of customers deleted
	// since, or outside this apply's --where; they are not applied.
	Outside int64 `json:"outside,omitempty"`
	// OutsideIDs are the first of their ids (up to 20).
	OutsideIDs []string `json:"outside_ids,omitempty"`
	// UnresolvedRows are the first unresolved row numbers (up to 20).
	UnresolvedRows []int `json:"unresolved_rows,omitempty"`
	// UnresolvedIDs are their ids, with Options.IDColumn.
	UnresolvedIDs []string `json:"unresolved_ids,omitempty"`
	// NoServiceAddress counts rows decided accept (or accepted by the
	// service) for which the service returned no verified address: they
	// are unresolved, never given an address the service did not verify.
	NoServiceAddress int64 `json:"no_service_address,omitempty"`
	// Unresolved are the first unresolved rows (up to 20) with the reason
	// each has no final address.
	Unresolved []Unresolved `json:"unresolved,omitempty"`
	// UnknownCountry counts rows whose final country (the input's, for
	// keep) is not one apply can write as an ISO code: unresolved.
	UnknownCountry int64 `json:"unknown_country,omitempty"`
	// EditedCells counts the review cells outside the address that differ
	// from the input (a person fixed a name in the sheet): the input's
	// cells are written, and Edited lists the first of them.
	EditedCells int64        `json:"edited_cells,omitempty"`
	Edited      []EditedCell `json:"edited,omitempty"`
	// MissingColumns are the input columns the review lacks (a person
	// deleted them), ExtraColumns the review's columns that are not the
	// input's (a person added them): both are ignored.
	MissingColumns []string `json:"missing_columns,omitempty"`
	ExtraColumns   []string `json:"extra_columns,omitempty"`
}

// EditedCell is a review cell outside the address that differs from the
// input's: a warning, since the input stays the source of those cells.
type EditedCell struct {
	Row    int    `json:"row"`
	ID     string `json:"id,omitempty"`
	Column string `json:"column"`
	Review string `json:"review"`
	Input  string `json:"input"`
}

// Unresolved is one row left without a final address, and why.
type Unresolved struct {
	Row    int    `json:"row"`
	ID     string `json:"id,omitempty"`
	Reason string `json:"reason"`
}

// Reasons of Unresolved.
const (
	ReasonUndecided   = "undecided"
	ReasonNotInReview = "missing from the review"
	ReasonNotVerified = "no result in the out-table (added since the run)"
	ReasonChanged     = "the address changed since the run"
)

// maxProblems is how many problems a MismatchError lists.
const maxProblems = 20

// maxListed is how many unresolved rows a Report lists.
const maxListed = 20

// Problem is one reason a review does not fit its enriched file.
type Problem struct {
	// Row is the row number the problem is about (0 when unknown).
	Row int
	// ID is the row's id, with Options.IDColumn.
	ID string
	// Msg says what is wrong.
	Msg string
}

// MismatchError is returned by Run when the review does not belong to the
// enriched file, or holds decisions that cannot be applied. Nothing is
// written.
type MismatchError struct {
	Review string
	// Of is what the review must fit: "the enriched file" when empty.
	Of       string
	Problems []Problem
	// More counts problems past those listed.
	More int
}

func (e *MismatchError) Error() string {
	var b strings.Builder
	of := cmp.Or(e.Of, "the enriched file")
	fmt.Fprintf(&b, "%s does not fit %s (%d problem(s)); nothing was written:", e.Review, of, len(e.Problems)+e.More)
	for _, p := range e.Problems {
		if p.ID != "" {
			fmt.Fprintf(&b, "\n  id %s: %s", p.ID, p.Msg)
		} else if p.Row > 0 {
			fmt.Fprintf(&b, "\n  row %d: %s", p.Row, p.Msg)
		} else {
			fmt.Fprintf(&b, "\n  %s", p.Msg)
		}
	}
	if e.More > 0 {
		fmt.Fprintf(&b, "\n  ... and %d more", e.More)
	}
	return b.String()
}

// Run writes the final file at outPath from the enriched file and the
// review file. A review that does not belong to the enriched file (a row it
// does not have for review, a changed address, a row missing) or holds
// decisions that cannot be applied is a *MismatchError, and no output is
// left behind.
func Run(ctx context.Context, enrichedPath, reviewPath, outPath string, opts Options) (Report, error) {
	en, err := runfile.OpenEnriched(ctx, enrichedPath, readers.Options{})
	if err != nil {
		return Report{}, fmt.Errorf("--enriched: %w", err)
	}
	defer en.Close()
	rv, err := runfile.OpenReview(ctx, reviewPath, opts.ReadReview)
	if err != nil {
		return Report{}, fmt.Errorf("--review: %w", err)
	}
	defer rv.Close()
	out, err := writers.NewRows(outPath, Header(en.InputHeader()), opts.Write)
	if err != nil {
		return Report{}, fmt.Errorf("-o: %w", err)
	}
	return Apply(ctx, en, rv, reviewPath, out, opts)
}

// Header is the header of the final data of an input whose header is
// input: its columns, then FinalColumns.
func Header(input []string) []string {
	return append(slices.Clone(input), FinalColumns...)
}

// bind finds the enriched file's input columns in the review, by name: a
// review is matched to its rows by row (and id), not by where its columns
// are, and columns a person added are ignored (noted in rep). Only the id
// column, when rows are known by id, must be there.
func bind(en *runfile.Enriched, rv *runfile.Review, review string, opts Options, rep *Report) error {
	missing, extra := rv.Bind(en.InputHeader())
	if opts.IDColumn != "" && slices.Contains(missing, opts.IDColumn) {
		return &MismatchError{Review: review, Problems: []Problem{{Msg: fmt.Sprintf("it has no id column %q", opts.IDColumn)}}}
	}
	rep.MissingColumns, rep.ExtraColumns = missing, extra
	return nil
}

// Apply writes the final rows of en and rv to out, whatever they are read
// from (files, tables), and closes out; on any error, a *MismatchError
// included, out is aborted. review is how messages call rv. The review's
// rows may be in any order: they are put back in row order first.
func Apply(ctx context.Context, en *runfile.Enriched, rv *runfile.Review, review string, out writers.RowWriter, opts Options) (Report, error) {
	j := &joiner{
		en: en, mismatch: &MismatchError{Review: review},
		rep: Report{Sources: map[string]int64{}, Decisions: map[string]int64{}},
		id:  -1, fileID: -1,
	}
	if err := bind(en, rv, review, opts, &j.rep); err != nil {
		_ = out.Abort()
		return Report{}, err
	}
	idCol := opts.IDColumn
	if m, err := readers.NewMapper(en.InputHeader(), opts.Mapping); err == nil {
		j.address = addressColumns(en.InputHeader(), m)
		j.keep = newKeeper(m)
		idCol = cmp.Or(idCol, m.Columns()["id"])
		if opts.CheckLabels {
			j.mapper = m
		}
	} else {
		// Only a keep decision needs the columns, unless labels are checked.
		j.keepErr = fmt.Errorf("the input's address columns are not known (%w): pass the mapping flags given to addrclean run", err)
		if opts.CheckLabels {
			_ = out.Abort()
			return Report{}, j.keepErr
		}
	}
	if opts.IDColumn != "" {
		j.mismatch.Of = "the input and out-table"
		if j.id = slices.Index(en.InputHeader(), opts.IDColumn); j.id < 0 {
			_ = out.Abort()
			return Report{}, fmt.Errorf("the input has no id column %q", opts.IDColumn)
		}
	} else if idCol != "" {
		j.fileID = index(en.InputHeader(), idCol)
	}
	o, err := newOrdered(ctx, rv)
	if err != nil {
		_ = out.Abort()
		return Report{}, fmt.Errorf("--review: %w", err)
	}
	defer o.Close()
	j.rv = o
	if err := j.run(ctx, out); err != nil {
		_ = out.Abort()
		return Report{}, err
	}
	if len(j.mismatch.Problems) > 0 {
		_ = out.Abort()
		return Report{}, j.mismatch
	}
	if err := out.Close(); err != nil {
		return Report{}, err
	}
	return j.rep, nil
}

// addressColumns marks the input columns m reads the address from: a
// review row whose cells there differ from the input's is about another
// address.
func addressColumns(header []string, m *readers.Mapper) []bool {
	is := make([]bool, len(header))
	for field, i := range m.Indexes() {
		if field != "id" && i < len(is) {
			is[i] = true
		}
	}
	return is
}

type joiner struct {
	en       *runfile.Enriched
	rv       *ordered
	mismatch *MismatchError
	rep      Report

	next    *runfile.ReviewRow // the review row read ahead, nil at the end
	lastRev int
	id      int             // index of Options.IDColumn in the input cells, -1 without
	fileID  int             // index of the file's id column (mapped or detected), -1 without
	address []bool          // the input columns of the address; nil when not known
	mapper  *readers.Mapper // with CheckLabels
	keep    *keeper
	keepErr error
	cells   []string
}

func (j *joiner) problem(row int, id string, format string, args ...any) {
	if len(j.mismatch.Problems) >= maxProblems {
		j.mismatch.More++
		return
	}
	j.mismatch.Problems = append(j.mismatch.Problems, Problem{Row: row, ID: id, Msg: fmt.Sprintf(format, args...)})
}

// warn notes a cell a person edited outside the address.
func (j *joiner) warn(row int, id, column, review, input string) {
	j.rep.EditedCells++
	if len(j.rep.Edited) < maxListed {
		j.rep.Edited = append(j.rep.Edited, EditedCell{Row: row, ID: id, Column: column, Review: review, Input: input})
	}
}

// idOf returns the id in input cells, with Options.IDColumn.
func (j *joiner) idOf(input []string) string {
	if j.id < 0 || j.id >= len(input) {
		return ""
	}
	return input[j.id]
}

// advance reads the next review row in row order. A row without a number,
// or repeated, is reported once and passed over, so it is not reported
// again as a row the enriched file does not have for review.
func (j *joiner) advance() error {
	for {
		r, err := j.rv.Next()
		if errors.Is(err, io.EOF) {
			j.next = nil
			return nil
		}
		if err != nil {
			return fmt.Errorf("--review: %w", err)
		}
		in, _ := r.Input()
		switch {
		case r.Row == 0 && j.id >= 0:
			j.rep.Outside++
			if len(j.rep.OutsideIDs) < maxListed {
				j.rep.OutsideIDs = append(j.rep.OutsideIDs, j.idOf(in))
			}
			continue
		case r.Row == 0:
			j.problem(0, "", "review line %d: row %q is not a row number", r.Line, r.RowCell())
			continue
		case r.Row == j.lastRev:
			j.problem(r.Row, j.idOf(in), "the review holds it twice (line %d again): keep one", r.Line)
			continue
		}
		j.lastRev = r.Row
		j.next = &r
		return nil
	}
}

func (j *joiner) run(ctx context.Context, out writers.RowWriter) error {
	if err := j.advance(); err != nil {
		return err
	}
	for {
		e, err := j.en.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("--enriched: %w", err)
		}
		// Enriched rows are numbered 1, 2, ... so a review row left
		// behind names a row the enriched file does not have.
		for j.next != nil && j.next.Row < e.Num {
			in, _ := j.next.Input()
			j.problem(j.next.Row, j.idOf(in), "the enriched file has no such row")
			if err := j.advance(); err != nil {
				return err
			}
		}
		var rv *runfile.ReviewRow
		if j.next != nil && j.next.Row == e.Num {
			rv = j.next
			if err := j.advance(); err != nil {
				return err
			}
		}
		final, source, reason := j.decide(e, rv)
		j.rep.Rows++
		j.rep.Sources[source]++
		if source == SourceUnresolved && len(j.rep.UnresolvedRows) < maxListed {
			id := j.idOf(e.Input())
			j.rep.UnresolvedRows = append(j.rep.UnresolvedRows, e.Num)
			if j.id >= 0 {
				j.rep.UnresolvedIDs = append(j.rep.UnresolvedIDs, id)
			}
			j.rep.Unresolved = append(j.rep.Unresolved, Unresolved{Row: e.Num, ID: id, Reason: reason})
		}
		if len(j.mismatch.Problems) > 0 {
			continue // nothing will be written; keep looking for problems
		}
		j.cells = append(append(append(j.cells[:0], e.Input()...), final[:]...), source)
		if err := out.Write(ctx, j.cells); err != nil {
			return err
		}
	}
	for j.next != nil {
		in, _ := j.next.Input()
		j.problem(j.next.Row, j.idOf(in), "the enriched file has only %d rows", j.rep.Rows)
		if err := j.advance(); err != nil {
			return err
		}
	}
	return nil
}

// address is the final address: lines 1 to 4, city, region, postcode,
// country (its ISO code), then the country's name.
type address [9]string

// Indexes into address.
const (
	aCountry     = 7
	aCountryName = 8
)

// sameRow checks that review row rv is about enriched row e: the same id
// (where rows have one) and the same address cells. A cell a person
// edited outside the address is a warning: the input stays the source of
// those cells.
func (j *joiner) sameRow(e runfile.EnrichedRow, rv *runfile.ReviewRow) bool {
	id := j.idOf(e.Input())
	cells, ok := rv.Input()
	header := j.en.InputHeader()
	if k := j.fileID; k >= 0 && ok[k] && strings.TrimSpace(cells[k]) != strings.TrimSpace(e.Input()[k]) {
		j.problem(e.Num, id, "the review row is of another record (column %q: %q in the review, %q in the enriched file): a row of another run, or a review sorted without its row column",
			header[k], cells[k], e.Input()[k])
		return false
	}
	same := true
	for i, c := range e.Input() {
		// The id matched the row already, its padding aside (char(n) ids
		// come padded from the input only).
		if !ok[i] || cells[i] == c || i == j.fileID || i == j.id {
			continue
		}
		if j.address == nil || j.address[i] {
			hint := "to change the address, decide edit and type it in the edit_ columns"
			if j.address == nil {
				hint = "the input's address columns are not known: pass the mapping flags given to addrclean run"
			}
			j.problem(e.Num, id, "the address differs from the enriched file's (column %q: %q in the review, %q in the enriched file): %s",
				header[i], cells[i], c, hint)
			same = false
			continue
		}
		j.warn(e.Num, id, header[i], cells[i], c)
	}
	return same
}

// decide works out one row's final address and its source, noting any
// problem; an unresolved row comes with the reason it has no address.
func (j *joiner) decide(e runfile.EnrichedRow, rv *runfile.ReviewRow) (address, string, string) {
	a, source, reason := j.decideAddress(e, rv)
	if source == SourceUnresolved {
		return address{}, source, reason
	}
	// final_country is always the ISO code; the name beside it.
	if c := a[aCountry]; c != "" {
		iso, ok := countries.ISO(c)
		if !ok {
			if source == SourcePerson {
				j.problem(e.Num, j.idOf(e.Input()), "edit_country %q is not a country apply knows: write its ISO code (IE, GB, FR ...)", c)
			} else {
				j.rep.UnknownCountry++
				return address{}, SourceUnresolved, fmt.Sprintf("its country %q is not one apply knows: decide edit and write the ISO code in edit_country", c)
			}
		}
		a[aCountry], a[aCountryName] = iso, countries.Name(iso)
	}
	return a, source, ""
}

func (j *joiner) decideAddress(e runfile.EnrichedRow, rv *runfile.ReviewRow) (address, string, string) {
	action := e.Get("av_action")
	id := j.idOf(e.Input())
	switch {
	case rv == nil && action == "Accept" && j.changed(e):
		j.rep.Changed++
		return address{}, SourceUnresolved, ReasonChanged
	case rv == nil && action == "Accept":
		if reason := noServiceAddress(e); reason != "" {
			j.rep.NoServiceAddress++
			return address{}, SourceUnresolved, reason
		}
		return serviceAddress(e), SourceService, ""
	case rv == nil && action == "":
		j.rep.NotVerified++
		return address{}, SourceUnresolved, ReasonNotVerified
	case rv == nil:
		j.rep.NotInReview++
		j.problem(e.Num, id, "the review has no row for it (%s): put the row back (leave decision empty for undecided)", action)
		return address{}, SourceUnresolved, ReasonNotInReview
	case action == "Accept":
		j.problem(e.Num, id, "the enriched data has it as Accept, not a row for review")
		return address{}, SourceUnresolved, ""
	case action == "":
		j.problem(e.Num, id, "the enriched data has no result for it")
		return address{}, SourceUnresolved, ""
	}
	if !j.sameRow(e, rv) {
		return address{}, SourceUnresolved, ""
	}
	if j.mapper != nil {
		if now, was := j.label(e), rv.Get("input_label"); now != was {
			j.problem(e.Num, id, "the input address changed since the run (column input_label: %q in the review, %q in the input now): run addrclean run again, then decide", was, now)
			return address{}, SourceUnresolved, ""
		}
	}
	raw := rv.Get(writers.DecisionColumn)
	decision := strings.ToLower(strings.TrimSpace(raw))
	switch decision {
	case "":
		j.rep.Decisions[Undecided]++
		return address{}, SourceUnresolved, ReasonUndecided
	case writers.DecisionAccept:
		j.rep.Decisions[decision]++
		// accept takes the address the service verified, never what it
		// echoed back for a row it could not place (a Confirm "Address
		// not found" still carries lines): no verified address, no final
		// one, and the person is told why.
		if reason := noServiceAddress(e); reason != "" {
			j.rep.NoServiceAddress++
			return address{}, SourceUnresolved, "decided accept, but " + reason + ": choose keep or edit"
		}
		return serviceAddress(e), SourceService, ""
	case writers.DecisionKeep:
		j.rep.Decisions[decision]++
		if j.keepErr != nil {
			j.problem(e.Num, id, "decided keep, but %v", j.keepErr)
			return address{}, SourceInput, ""
		}
		return j.keep.address(e.Input()), SourceInput, ""
	case writers.DecisionEdit:
		j.rep.Decisions[decision]++
		var a address
		for i, c := range writers.EditColumns {
			a[i] = strings.TrimSpace(rv.Get(c))
		}
		if a == (address{}) {
			j.problem(e.Num, id, "decided edit, but the edit_ columns are empty")
		}
		return a, SourcePerson, ""
	default:
		j.problem(e.Num, id, "decision %q (column decision): want %s, or empty for undecided", raw, strings.Join(writers.Decisions, ", "))
		return address{}, SourceUnresolved, ""
	}
}

// verifiedActions are the actions whose matched address the service
// verified (with an address id): the only addresses final_source=service
// may carry.
var verifiedActions = []string{"Accept", "Suggest", "Confirm"}

// noServiceAddress says why the row has no address the service verified,
// or "" when it has one: an action that places the row and an address id.
func noServiceAddress(e runfile.EnrichedRow) string {
	action := e.Get("av_action")
	why := ""
	switch {
	case !slices.Contains(verifiedActions, action):
		why = "the service did not verify an address (" + action
	case e.Get("av_address_id") == "":
		why = "the service returned no matched address (" + action + ", no av_address_id"
	default:
		return ""
	}
	if m := e.Get("av_message"); m != "" {
		why += ": " + m
	}
	if s := e.Get("av_error"); s != "" {
		why += ": " + s
	}
	return why + ")"
}

// changed reports whether the address the enriched data verified (its
// input_label, when it has one) is not the row's address now.
func (j *joiner) changed(e runfile.EnrichedRow) bool {
	if j.mapper == nil {
		return false
	}
	was := e.Get("input_label")
	return was != "" && was != j.label(e)
}

// label is the row's input address as run writes it in input_label.
func (j *joiner) label(e runfile.EnrichedRow) string {
	return j.mapper.Map(record.Row{Num: e.Num, Cells: e.Input()}).Label
}

// serviceAddress is the matched address of an enriched row; the country as
// its ISO code when the service gave one.
func serviceAddress(e runfile.EnrichedRow) address {
	country := cmp.Or(e.Get("av_country_iso"), e.Get("av_country"))
	return address{
		e.Get("av_line1"), e.Get("av_line2"), e.Get("av_line3"), e.Get("av_line4"),
		e.Get("av_city"), e.Get("av_region"), e.Get("av_postcode"), country, "",
	}
}

// keeper copies a row's own address out of its input cells.
type keeper struct {
	lines                           []int
	city, region, postcode, country int
	defCountry                      string
}

func newKeeper(m *readers.Mapper) *keeper {
	ix := m.Indexes()
	col := func(field string) int {
		if i, ok := ix[field]; ok {
			return i
		}
		return -1
	}
	k := &keeper{city: col("city"), region: col("region"), postcode: col("postcode"), country: col("country"),
		defCountry: m.Columns()["default_country"]}
	for n := 1; col("line"+strconv.Itoa(n)) >= 0; n++ {
		k.lines = append(k.lines, col("line"+strconv.Itoa(n)))
	}
	return k
}

// index finds a column the mapper mapped, "" for none: Mapper.Columns
// names it as the header does.
func index(header []string, name string) int {
	if name == "" {
		return -1
	}
	return slices.Index(header, name)
}

func (k *keeper) address(cells []string) address {
	get := func(i int) string {
		if i < 0 || i >= len(cells) {
			return ""
		}
		return strings.TrimSpace(cells[i])
	}
	var lines []string
	for _, i := range k.lines {
		for l := range strings.Lines(get(i)) {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
	}
	var a address
	for i, l := range lines {
		if i == 3 {
			a[3] = strings.Join(lines[3:], ", ")
			break
		}
		a[i] = l
	}
	a[4], a[5], a[6], a[7] = get(k.city), get(k.region), get(k.postcode), cmp.Or(get(k.country), k.defCountry)
	return a
}
