package gazetteer

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/addrclean/addrclean/countries"
	"github.com/addrclean/addrclean/internal/rowlimit"
)

// Columns is the header of the reference CSV format, in its documented
// order (see FORMAT.md). Load accepts the columns in any order.
var Columns = []string{
	"id", "organisation", "sub_building", "building_name", "building_number",
	"street", "locality", "city", "region", "postcode", "country",
	"latitude", "longitude", "type",
}

// AllColumns is Columns followed by the optional columns added for Royal
// Mail PAF (FORMAT.md), as the reference converters write them.
var AllColumns = append(slices.Clone(Columns),
	"building_id", "department", "dependent_street", "double_dependent_locality", "po_box")

const (
	colID = iota
	colOrganisation
	colSubBuilding
	colBuildingName
	colBuildingNumber
	colStreet
	colLocality
	colCity
	colRegion
	colPostcode
	colCountry
	colLatitude
	colLongitude
	colType
	colBuildingID
	colDepartment
	colDependentStreet
	colDoubleDependentLocality
	colPOBox
	numCols
)

// columnAliases are header spellings accepted besides the documented ones.
var columnAliases = map[string]int{
	"organization": colOrganisation, "org": colOrganisation,
	"subbuilding": colSubBuilding, "building": colBuildingName,
	"number": colBuildingNumber, "town": colCity, "county": colRegion,
	"eircode": colPostcode, "lat": colLatitude, "lon": colLongitude,
	"lng": colLongitude, "address_type": colType,
	"department_name": colDepartment, "dependent_thoroughfare": colDependentStreet,
	"dependant_thoroughfare": colDependentStreet, "double_dependant_locality": colDoubleDependentLocality,
	"po_box_number": colPOBox, "pobox": colPOBox,
}

// maxRowErrors bounds how many bad rows the error of a refused file names,
// so that a wrong file does not produce a million-line message.
const maxRowErrors = 5

// Limits of a reference row (FORMAT.md, "Limits"): a row over one is a bad
// row, and the file is refused naming it by line, as for any bad row. They
// are far above any address (PAF's longest field is 80 characters, the
// longest place name in Britain 58 letters) and keep a hostile file from
// costing more than its size: a row is read whole before it is checked,
// so MaxRowBytes bounds what one row holds in memory.
const (
	// MaxRowBytes is the longest row, in bytes of the file, its line end
	// and any blank lines before it included.
	MaxRowBytes = 64 << 10
	// MaxFieldBytes is the longest cell of a column Load reads (columns
	// it ignores count only towards the row).
	MaxFieldBytes = 1024
	// MaxWordBytes is the longest word of such a cell: a run of letters
	// and digits, that is of anything but white space and ASCII
	// punctuation.
	MaxWordBytes = 256
)

// loadBuffer is the size of Load's read buffer, and so how far the CSV
// reader may read ahead of the row it is on.
const loadBuffer = 64 << 10

// ErrBadHeader is returned (wrapped) when the header lacks a required column.
var ErrBadHeader = errors.New("reference: bad header")

// LoadFile loads a reference CSV file; see Load.
func LoadFile(ctx context.Context, path string) (*Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	defer f.Close()
	ix, err := Load(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ix, nil
}

// Load reads a reference CSV (format in FORMAT.md) and builds the index. A
// file with bad rows, rows over the limits (MaxRowBytes, MaxFieldBytes,
// MaxWordBytes) among them, is refused with an error naming the first of
// them by line. Load stops with ctx's error (wrapped) as soon as ctx is
// done, whether it is reading rows, waiting for r or building the index.
func Load(ctx context.Context, r io.Reader) (*Index, error) {
	// The row limit sits under the buffer: a row longer than it is
	// refused once the limit and one buffer are read, not held whole.
	lr := rowlimit.New(r, MaxRowBytes, loadBuffer)
	br := bufio.NewReaderSize(lr, loadBuffer)
	in := rowInput{lr: lr}
	if b, err := br.Peek(3); err == nil && string(b) == "\ufeff" {
		_, _ = br.Discard(3)
		in.bom = 3
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	in.cr = cr
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: empty file", ErrBadHeader)
		}
		return nil, fmt.Errorf("reference: header: %w", err)
	}
	in.mark()
	pos, err := mapHeader(header)
	if err != nil {
		return nil, err
	}
	b := newBuilder()
	// A file with bad rows is refused as a whole: a half-loaded reference
	// gives wrong answers quietly.
	var badRows []string
	nBad := 0
	bad := func(line int, err error) {
		nBad++
		if len(badRows) < maxRowErrors {
			badRows = append(badRows, fmt.Sprintf("line %d: %v", line, err))
		}
	}
	// Reading, checking and splitting the rows into words runs on its own
	// goroutine, ahead of the index: loading the reference is the whole
	// start of a run, with a second core otherwise idle. The rows come
	// in file order, so errors are reported as they always were. Done
	// ends the loop at once, even with the reader blocked on r.
	rows := make(chan []loadRow, 4)
	go readRows(ctx, &in, header, &pos, rows)
	for {
		var batch []loadRow
		ok := false
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("reference: %w", ctx.Err())
		case batch, ok = <-rows:
		}
		if !ok {
			break
		}
		for i := range batch {
			row := &batch[i]
			switch {
			case row.fatal != nil:
				// The reader stopped: drain nothing more, it sent its last.
				return nil, row.fatal
			case row.err != nil:
				bad(row.line, row.err)
			case row.skip:
			default:
				if err := b.add(&row.rec, &row.words); err != nil {
					bad(row.line, err)
				}
			}
		}
	}
	if nBad > len(badRows) {
		badRows = append(badRows, "...")
	}
	if nBad > 0 {
		return nil, fmt.Errorf("reference: %d bad row(s); %s", nBad, strings.Join(badRows, "; "))
	}
	return b.finish(ctx)
}

// rowInput is the CSV reader of Load with the row limit under it.
type rowInput struct {
	cr  *csv.Reader
	lr  *rowlimit.Reader
	bom int64 // bytes dropped before the CSV reader's first
	end int64 // where the last row read ends, in bytes of the file
}

// mark tells the row limit that a row has been read whole and returns
// its length.
func (in *rowInput) mark() int64 {
	off := in.bom + in.cr.InputOffset()
	n := off - in.end
	in.end = off
	in.lr.Mark(off)
	return n
}

// loadRow is one row of the reference as readRows hands it to Load: a
// record and its words, a bad row, a row to skip, or the error that ended
// the reading.
type loadRow struct {
	line  int
	rec   Record
	words recWords
	err   error // a bad row
	skip  bool  // a blank row
	fatal error // the reading failed: the last row sent
}

// loadBatch is how many rows go to Load at once.
const loadBatch = 256

// readRows reads the rows after the header, checks them and splits their
// words, and sends them to out in batches, in file order; it closes out
// after the last. A quoting error or a row over MaxRowBytes ends the rows
// (a bad row, the last), as does a failure to read (fatal). It stops when
// ctx is done, checked at each batch.
func readRows(ctx context.Context, in *rowInput, header []string, pos *[numCols]int, out chan<- []loadRow) {
	defer close(out)
	cr := in.cr
	batch := make([]loadRow, 0, loadBatch)
	var arena []string
	stopped := false
	flush := func() {
		if len(batch) == 0 || stopped {
			return
		}
		select {
		case out <- batch:
		case <-ctx.Done():
			stopped = true // Load has returned
		}
		batch = make([]loadRow, 0, loadBatch)
	}
	// next returns the next row of the batch, sending the batch when
	// full: rows are made in place, their words pointing into them.
	next := func() *loadRow {
		if len(batch) == cap(batch) {
			flush()
		}
		batch = append(batch, loadRow{})
		return &batch[len(batch)-1]
	}
	send := func(row loadRow) { *next() = row }
	defer flush()
	for !stopped {
		if len(batch) == 0 {
			if err := ctx.Err(); err != nil {
				send(loadRow{fatal: fmt.Errorf("reference: %w", err)})
				return
			}
		}
		fields, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return
		}
		if errors.Is(err, rowlimit.ErrTooLong) {
			// The reader stopped passing the row: it cannot go on.
			line := 0
			if len(fields) > 0 {
				line, _ = cr.FieldPos(0)
			}
			var te *rowlimit.TooLongError
			if line == 0 && errors.As(err, &te) {
				line = te.Line
			}
			send(loadRow{line: line, err: fmt.Errorf("a row over %d bytes, the limit", MaxRowBytes)})
			return
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				in.mark()
				send(loadRow{line: pe.StartLine, err: pe.Err})
				if errors.Is(pe.Err, csv.ErrFieldCount) {
					continue
				}
				// A quoting error leaves the reader out of step; stop here.
				return
			}
			send(loadRow{fatal: fmt.Errorf("reference: %w", err)})
			return
		}
		if n := in.mark(); n > MaxRowBytes {
			send(loadRow{line: line, err: fmt.Errorf("a row of %d bytes, over the limit of %d", n, MaxRowBytes)})
			continue
		}
		if len(fields) != len(header) {
			if len(fields) == 1 && strings.TrimSpace(fields[0]) == "" {
				send(loadRow{skip: true})
				continue
			}
			send(loadRow{line: line, err: fmt.Errorf("%d fields, header has %d", len(fields), len(header))})
			continue
		}
		if err := checkLengths(fields, pos); err != nil {
			send(loadRow{line: line, err: err})
			continue
		}
		rec, err := parseRecord(fields, pos)
		if err != nil {
			send(loadRow{line: line, err: err})
			continue
		}
		row := next()
		row.line, row.rec = line, rec
		if len(arena) > cap(arena)-64 {
			// The rows' words share arrays rather than one each; a full
			// one stays with the rows that point into it.
			arena = make([]string, 0, 16*loadBatch)
		}
		arena = row.words.split(&row.rec, arena)
	}
}

// checkLengths checks the cells of the columns Load reads against
// MaxFieldBytes and MaxWordBytes.
func checkLengths(f []string, pos *[numCols]int) error {
	for c, i := range pos {
		if i < 0 {
			continue
		}
		v := f[i]
		if len(v) > MaxFieldBytes {
			return fmt.Errorf("column %s: %d bytes, over the limit of %d", AllColumns[c], len(v), MaxFieldBytes)
		}
		// A cell no longer than a word may be needs no scan: most cells.
		if len(v) <= MaxWordBytes {
			continue
		}
		if n := LongestWord(v); n > MaxWordBytes {
			return fmt.Errorf("column %s: a word of %d bytes, over the limit of %d", AllColumns[c], n, MaxWordBytes)
		}
	}
	return nil
}

// LongestWord returns the length in bytes of the longest word of s, as
// MaxWordBytes counts them: runs of anything but white space and ASCII
// punctuation (an apostrophe, as in "O'Connell", is part of a word).
func LongestWord(s string) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '\'' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// mapHeader finds each column's position; -1 for absent optional columns.
func mapHeader(header []string) ([numCols]int, error) {
	var pos [numCols]int
	for i := range pos {
		pos[i] = -1
	}
	for i, h := range header {
		k := strings.ToLower(strings.TrimSpace(h))
		k = strings.NewReplacer(" ", "_", "-", "_").Replace(k)
		c := slices.Index(AllColumns, k)
		if c < 0 {
			if a, ok := columnAliases[strings.ReplaceAll(k, "_", "")]; ok {
				c = a
			} else if a, ok := columnAliases[k]; ok {
				c = a
			}
		}
		if c < 0 {
			continue // unknown columns are allowed and ignored
		}
		if pos[c] >= 0 {
			return pos, fmt.Errorf("%w: column %q twice", ErrBadHeader, AllColumns[c])
		}
		pos[c] = i
	}
	for _, c := range []int{colID, colStreet, colCity, colCountry} {
		if pos[c] < 0 {
			return pos, fmt.Errorf("%w: missing column %q", ErrBadHeader, Columns[c])
		}
	}
	return pos, nil
}

// textFields points at the fields of r that a column of the same number
// holds as they are; the others (city, postcode, country, coordinates,
// type) are read and written apart.
func (r *Record) textFields() [numCols]*string {
	return [numCols]*string{
		colID: &r.ID, colOrganisation: &r.Organisation, colSubBuilding: &r.SubBuilding,
		colBuildingName: &r.BuildingName, colBuildingNumber: &r.BuildingNumber, colStreet: &r.Street,
		colLocality: &r.Locality, colRegion: &r.Region, colBuildingID: &r.BuildingID, colDepartment: &r.Department,
		colDependentStreet: &r.DependentStreet, colDoubleDependentLocality: &r.DoubleDependentLocality, colPOBox: &r.POBox,
	}
}

// parseRecord checks one row and builds its Record.
func parseRecord(f []string, pos *[numCols]int) (Record, error) {
	get := func(c int) string {
		if pos[c] < 0 {
			return ""
		}
		return strings.TrimSpace(f[pos[c]])
	}
	var r Record
	for c, p := range r.textFields() {
		if p != nil {
			*p = get(c)
		}
	}
	r.City = DisplayCase(get(colCity))
	if r.ID == "" {
		return r, errors.New("empty id")
	}
	pc := get(colPostcode)
	country, err := ReferenceCountry(get(colCountry), pc)
	if err != nil {
		return r, err
	}
	r.Country = country
	if r.Street == "" && r.BuildingName == "" && r.Organisation == "" && r.DependentStreet == "" && r.POBox == "" {
		return r, errors.New("no street, building name, organisation or PO Box")
	}
	if r.City == "" {
		return r, errors.New("empty city")
	}
	switch {
	case pc == "":
	case r.Country == "IE":
		c, ok := ParseEircode(pc)
		if !ok {
			return r, fmt.Errorf("postcode %q is not an Eircode", pc)
		}
		r.Postcode = c
	case countries.Postal(r.Country) == "GB":
		c, ok := ParseUKPostcode(pc)
		if !ok {
			return r, fmt.Errorf("postcode %q is not a UK postcode", pc)
		}
		r.Postcode = c
	default:
		r.Postcode = Tidy(pc)
	}
	lat, lon := get(colLatitude), get(colLongitude)
	if lat != "" || lon != "" {
		la, err1 := strconv.ParseFloat(lat, 64)
		lo, err2 := strconv.ParseFloat(lon, 64)
		if err1 != nil || err2 != nil || math.IsNaN(la) || math.IsNaN(lo) || la < -90 || la > 90 || lo < -180 || lo > 180 {
			return r, fmt.Errorf("bad coordinates %q, %q", lat, lon)
		}
		r.Latitude, r.Longitude, r.HasLocation = la, lo, true
	}
	switch lowerType(strings.ReplaceAll(get(colType), " ", "")) {
	case "":
		r.Type = Residential
		if r.POBox != "" {
			r.Type = POBox
		}
	case "residential":
		r.Type = Residential
	case "commercial":
		r.Type = Commercial
	case "pobox":
		r.Type = POBox
	default:
		return r, fmt.Errorf("unknown type %q (want Residential, Commercial or POBox)", get(colType))
	}
	return r, nil
}

// WriteCSVColumns writes records in the reference format, header first,
// in the given columns, in that order, each one of AllColumns; the
// generators and converters use it so that what they write is what Load
// reads.
func WriteCSVColumns(w io.Writer, columns []string, recs func(yield func(Record) bool)) error {
	cw := csv.NewWriter(w)
	pos, err := mapHeader(columns)
	if err != nil {
		return err
	}
	if err := cw.Write(columns); err != nil {
		return fmt.Errorf("reference: %w", err)
	}
	out := make([]string, len(columns))
	row := make([]string, numCols)
	var werr error
	recs(func(r Record) bool {
		for c, p := range r.textFields() {
			if p != nil {
				row[c] = *p
			}
		}
		row[colCity], row[colPostcode], row[colCountry], row[colType] = r.City, r.Postcode, r.Country, string(r.Type)
		row[colLatitude], row[colLongitude] = "", ""
		if r.HasLocation {
			row[colLatitude] = strconv.FormatFloat(r.Latitude, 'f', 6, 64)
			row[colLongitude] = strconv.FormatFloat(r.Longitude, 'f', 6, 64)
		}
		for c, i := range pos {
			if i >= 0 {
				out[i] = row[c]
			}
		}
		werr = cw.Write(out)
		return werr == nil
	})
	if werr != nil {
		return fmt.Errorf("reference: %w", werr)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("reference: %w", err)
	}
	return nil
}

// lowerType is strings.ToLower(t) for the type column, without the copy
// for the usual spellings ("Residential"): one allocation per record less.
func lowerType(t string) string {
	for _, v := range [...]string{"residential", "commercial", "pobox"} {
		// Of equal length, only ASCII folds to v (ſ and K take more bytes
		// than the s and k they fold to).
		if len(t) == len(v) && strings.EqualFold(t, v) {
			return v
		}
	}
	return strings.ToLower(t)
}

// ReferenceCountry returns the ISO alpha-2 code of the country column of
// a reference row: a two-letter code as written (in upper case), or a
// name countries.ISO knows ("England", "Wales", "Isle of Man"). "Channel
// Islands", as Royal Mail PAF writes it, is Jersey or Guernsey by the
// postcode (JE or GY); without one of those it is an error.
func ReferenceCountry(country, postcode string) (string, error) {
	c := strings.TrimSpace(country)
	if len(c) == 2 && isLetter(c[0]&^0x20) && isLetter(c[1]&^0x20) {
		return strings.ToUpper(c), nil
	}
	if strings.ReplaceAll(Fold(c), " ", "") == "channelislands" {
		pc, _ := ParsePostcode(postcode)
		switch {
		case strings.HasPrefix(pc, "JE"):
			return "JE", nil
		case strings.HasPrefix(pc, "GY"):
			return "GG", nil
		}
		return "", fmt.Errorf("country %q needs a JE or GY postcode to tell Jersey from Guernsey", c)
	}
	if iso, ok := countries.ISO(c); ok {
		return iso, nil
	}
	return "", fmt.Errorf("country %q is not an ISO alpha-2 code or a known country name", c)
}
