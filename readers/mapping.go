package readers

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/countries"
	"github.com/addrclean/addrclean/record"
	"github.com/rs/zerolog"
)

// Row-level problems of Mapped.Err.
var (
	// ErrNoAddress marks a row with no address line and no postcode. A row
	// that has a city, region or country but no line gets a *NoLineError,
	// which matches it.
	ErrNoAddress = errors.New("no address")
	// ErrNoCountry marks a row with no country and no default country.
	ErrNoCountry = errors.New("no country")
)

// NoLineError is the row error of a row that has some of an address (a
// town, a county) but no address line and no postcode: "no address" alone
// would leave the user wondering what the row held.
type NoLineError struct {
	// Had is what the row held, as "city \"York\", country \"GB\"".
	Had string
}

func (e *NoLineError) Error() string {
	return "no address line (the row has only " + e.Had + ")"
}

// Is makes errors.Is(err, ErrNoAddress) true.
func (e *NoLineError) Is(target error) bool { return target == ErrNoAddress }

// MappingSpec is how the user named the columns. Empty names are detected
// from the header; explicit names match headers ignoring case and spaces.
type MappingSpec struct {
	// LineCols are the columns sent as address lines, in order.
	LineCols []string
	// City, Region, Postcode, Country and ID name one column each.
	City, Region, Postcode, Country, ID string
	// DefaultCountry fills rows that have no country.
	DefaultCountry string
	// Language is sent with every request.
	Language string
	// Prefix chooses among sets of detected columns that differ by a prefix
	// ("Billing Street" and "Shipping Street"): only unprefixed columns and
	// those with this prefix are detected. Empty means the first prefix of
	// namePrefixes present (Billing before Shipping).
	Prefix string
}

// MappingError lists what is wrong with a column mapping, each problem with
// the flag that fixes it.
type MappingError struct {
	Problems []string
}

func (e *MappingError) Error() string {
	return "column mapping: " + strings.Join(e.Problems, "; ")
}

// field is an address element a column can be mapped to.
type field int

const (
	fieldLine field = iota
	fieldCity
	fieldRegion
	fieldPostcode
	fieldCountry
	fieldID
	numFields
)

var fieldNames = [numFields]string{"address lines", "city", "region", "postcode", "country", "id"}
var fieldFlags = [numFields]string{"--line-cols", "--city-col", "--region-col", "--postcode-col", "--country-col", "--id-col"}

// Mapper turns rows into the parameters of a verify request. Its methods are
// safe for concurrent use.
type Mapper struct {
	header          []string
	lines           []int
	single          [numFields]int // column index per single-column field, -1 when none
	detected        [numFields]bool
	notes           []string
	prefix          string // the prefix set chosen among several, "" when none was needed
	trailingCountry bool   // no country column: a country name ending the address is used
	defCountry      string
	language        string

	// countries caches country cells already resolved: a file holds few
	// distinct values, and Map may be called from several goroutines.
	mu        sync.RWMutex
	countries map[string]string
}

// maxCountryCache bounds the cache for files whose country column holds
// free text.
const maxCountryCache = 1024

// NewMapper resolves spec against header. Fields without an explicit column
// are detected from common header names, ignoring columns named explicitly;
// a missing, ambiguous or undetectable column is a *MappingError.
func NewMapper(header []string, spec MappingSpec) (*Mapper, error) {
	m := &Mapper{
		header:    slices.Clone(header),
		language:  strings.TrimSpace(spec.Language),
		countries: make(map[string]string),
	}
	for f := range m.single {
		m.single[f] = -1
	}
	var problems []string
	used := make(map[int]bool)

	for _, name := range spec.LineCols {
		idx := m.find(name)
		if len(idx) == 0 {
			problems = append(problems, m.missing(fieldLine, name))
		}
		for _, i := range idx {
			m.lines = append(m.lines, i)
			used[i] = true
		}
	}
	given := [numFields]string{fieldCity: spec.City, fieldRegion: spec.Region,
		fieldPostcode: spec.Postcode, fieldCountry: spec.Country, fieldID: spec.ID}
	for f := fieldCity; f < numFields; f++ {
		name := given[f]
		if strings.TrimSpace(name) == "" {
			continue
		}
		idx := m.find(name)
		if len(idx) == 0 {
			problems = append(problems, m.missing(f, name))
			continue
		}
		if len(idx) > 1 {
			m.notes = append(m.notes, fmt.Sprintf("%d columns are named %q: the first is the %s", len(idx), header[idx[0]], fieldNames[f]))
		}
		m.single[f] = idx[0]
		used[idx[0]] = true
	}

	// Detection, for what was not given.
	var cands [numFields][]int
	prefixOf := make(map[int]string)
	var prefixes []string // of address columns, in namePrefixes order
	for i, h := range header {
		if used[i] {
			continue
		}
		if f, p, ok := classifyPrefix(h); ok {
			cands[f] = append(cands[f], i)
			prefixOf[i] = p
			if p != "" && f != fieldID && !slices.Contains(prefixes, p) {
				prefixes = append(prefixes, p)
			}
		}
	}
	slices.SortFunc(prefixes, func(a, b string) int {
		return slices.Index(namePrefixes, a) - slices.Index(namePrefixes, b)
	})
	if want := foldName(spec.Prefix); want != "" {
		if !slices.Contains(prefixes, want) {
			problems = append(problems, fmt.Sprintf("--prefix %q: no address columns start with it; the columns are %s", spec.Prefix, m.quoteCols(nil)))
		}
		m.prefix = want
	} else if len(prefixes) > 1 {
		// Two addresses in one row (Salesforce's Billing and Shipping):
		// mixing their columns would send a street of one with the town of
		// the other, so one set is used, and the user told which.
		m.prefix = prefixes[0]
	}
	if m.prefix != "" {
		for f := range cands {
			cands[f] = slices.DeleteFunc(cands[f], func(i int) bool {
				p := prefixOf[i]
				return field(f) != fieldID && p != "" && p != m.prefix
			})
		}
		if len(prefixes) > 1 {
			var others []string
			for _, p := range prefixes {
				if p != m.prefix {
					others = append(others, prefixTitle(p))
				}
			}
			m.notes = append(m.notes, fmt.Sprintf("the columns hold %d addresses (%s): using the %s columns; pass --prefix %s for the other",
				len(prefixes), strings.Join(append([]string{prefixTitle(m.prefix)}, others...), ", "), prefixTitle(m.prefix), others[0]))
		}
	}
	if len(spec.LineCols) == 0 {
		m.lines = cands[fieldLine]
		m.detected[fieldLine] = len(m.lines) > 0
	}
	var ambiguous [numFields]bool
	for f := fieldCity; f < numFields; f++ {
		if strings.TrimSpace(given[f]) != "" {
			continue
		}
		switch c := cands[f]; {
		case len(c) == 1:
			m.single[f], m.detected[f] = c[0], true
		case len(c) > 1 && f == fieldID:
			// The id only labels rows; guessing wrong would mislead.
			m.notes = append(m.notes, fmt.Sprintf("several columns could be the id (%s): none used; pass --id-col to choose", m.quoteCols(c)))
		case len(c) > 1:
			ambiguous[f] = true
			problems = append(problems, fmt.Sprintf("several columns could be the %s (%s): pass %s with the one to use",
				fieldNames[f], m.quoteCols(c), fieldFlags[f]))
		}
	}
	// The postcode is sent once, as the last line, even when named as a line.
	if pc := m.single[fieldPostcode]; pc >= 0 {
		m.lines = slices.DeleteFunc(m.lines, func(i int) bool { return i == pc })
	}

	if def := strings.TrimSpace(spec.DefaultCountry); def != "" {
		if iso, ok := countries.ISO(def); ok {
			m.defCountry = iso
		} else {
			problems = append(problems, fmt.Sprintf("--country %q: not a country addrclean knows: give its ISO code (IE, GB, FR ...) or English name", def))
		}
	}
	if len(m.lines) == 0 && m.single[fieldPostcode] < 0 && len(spec.LineCols) == 0 {
		problems = append(problems, fmt.Sprintf("no address columns found among %s: pass --line-cols with the columns that hold the address", m.quoteCols(nil)))
	}
	// Without a country column, a country name ending the address ("...,
	// LS1 0QP, UK") says more than the default for every row.
	m.trailingCountry = m.single[fieldCountry] < 0 && strings.TrimSpace(spec.Country) == ""
	if m.single[fieldCountry] < 0 && strings.TrimSpace(spec.DefaultCountry) == "" && strings.TrimSpace(spec.Country) == "" && !ambiguous[fieldCountry] {
		problems = append(problems, "no country column found: pass --country-col with the column that holds it, or --country with the country of every row"+
			" (a country name ending the address is used where there is one)")
	}
	if len(problems) > 0 {
		return nil, &MappingError{Problems: problems}
	}
	return m, nil
}

// MapperFor is NewMapper over r's header. When no address column is found,
// the error also says where else to look: the workbook's other sheets, and
// --header-row when the header may not be the row read.
func MapperFor(r Reader, spec MappingSpec) (*Mapper, error) {
	m, err := NewMapper(r.Header(), spec)
	var me *MappingError
	if !errors.As(err, &me) || len(me.Problems) == 0 {
		return m, err
	}
	d, ok := r.(Describer)
	if !ok || !slices.ContainsFunc(me.Problems, func(p string) bool { return strings.HasPrefix(p, "no address columns") }) {
		return nil, err
	}
	info := d.Info()
	if h := r.Header(); info.Format == FormatCSV && len(h) == 1 {
		if i := strings.IndexAny(h[0], ",;\t|"); i >= 0 {
			me.Problems = append(me.Problems, fmt.Sprintf("the header is one column holding %q: pass --delimiter with the file's delimiter", h[0][i]))
		}
	}
	if info.Format == FormatXLSX && len(info.Sheets) > 1 {
		others := slices.DeleteFunc(slices.Clone(info.Sheets), func(s string) bool { return s == info.Sheet })
		me.Problems = append(me.Problems, fmt.Sprintf("sheet %q was read; the workbook also has %s: pass --sheet NAME if the addresses are there",
			info.Sheet, quoteList(others)))
	}
	me.Problems = append(me.Problems, fmt.Sprintf("the header was read from row %d: pass --header-row N if it is on another row", max(info.HeaderRow, 1)))
	return nil, err
}

// Map returns the request parameters of r: non-empty line cells (a cell of
// several lines giving several), the postcode as the last line, the country
// as an ISO code when recognised, and a row error when there is no address or
// no country.
func (m *Mapper) Map(r record.Row) Mapped {
	// Room for one line per column and the postcode: a multi-line cell is
	// the rare case that grows it.
	lines := make([]string, 0, len(m.lines)+1)
	for _, i := range m.lines {
		lines = appendLines(lines, cell(r, i))
	}
	city := strings.TrimSpace(cell(r, m.single[fieldCity]))
	region := strings.TrimSpace(cell(r, m.single[fieldRegion]))
	postcode := strings.TrimSpace(cell(r, m.single[fieldPostcode]))
	countryRaw := strings.TrimSpace(cell(r, m.single[fieldCountry]))

	label := make([]string, 0, len(lines)+4)
	label = append(label, lines...)
	for _, s := range [...]string{city, region, postcode, countryRaw} {
		if s != "" {
			label = append(label, s)
		}
	}
	if postcode != "" {
		lines = append(lines, postcode)
	}
	if len(lines) == 0 {
		lines = nil
	}
	country := m.defCountry
	if countryRaw != "" {
		country = m.country(countryRaw)
	} else if m.trailingCountry && len(lines) > 0 {
		if iso, rest, ok := trailingCountry(lines[len(lines)-1]); ok {
			country = iso
			if rest == "" {
				lines = lines[:len(lines)-1]
			} else {
				// lines may share its array with nothing else: it was made here.
				lines[len(lines)-1] = rest
			}
			if len(lines) == 0 {
				lines = nil
			}
		}
	}
	out := Mapped{
		Address: api.Address{Lines: lines, City: city, Region: region, Country: country, Language: m.language},
		Label:   strings.Join(label, ", "),
	}
	switch {
	case len(lines) == 0 && (city != "" || region != ""):
		out.Err = &NoLineError{Had: had(city, region, countryRaw)}
	case len(lines) == 0:
		out.Err = ErrNoAddress
	case country == "":
		out.Err = ErrNoCountry
	}
	return out
}

// had describes the parts of an address a row without lines holds.
func had(city, region, country string) string {
	var parts []string
	for _, p := range [...]struct{ name, v string }{{"city", city}, {"region", region}, {"country", country}} {
		if p.v != "" {
			parts = append(parts, p.name+" "+strconv.Quote(p.v))
		}
	}
	return strings.Join(parts, ", ")
}

// trailingCountry splits a country name off the end of an address line
// ("1 Park Row, Leeds, LS1 0QP, UK"): the ISO code, and the line without
// it. Two-letter codes other than UK and GB are not taken: "CO" or "NY"
// at the end of a line is more often something else.
func trailingCountry(line string) (iso, rest string, ok bool) {
	i := strings.LastIndexByte(line, ',')
	last := strings.TrimSpace(line[i+1:])
	letters := 0
	for _, r := range last {
		if unicode.IsLetter(r) {
			letters++
		}
	}
	if letters < 2 || (letters == 2 && !strings.EqualFold(last, "UK") && !strings.EqualFold(last, "GB")) {
		return "", "", false
	}
	iso, ok = countries.ISO(last)
	if !ok {
		return "", "", false
	}
	if i < 0 {
		return iso, "", true
	}
	return iso, strings.TrimRight(strings.TrimSpace(line[:i]), ","), true
}

// country returns the ISO code of a country cell, or the cell as written.
func (m *Mapper) country(raw string) string {
	m.mu.RLock()
	c, ok := m.countries[raw]
	m.mu.RUnlock()
	if ok {
		return c
	}
	c = raw
	if iso, ok := countries.ISO(raw); ok {
		c = iso
	}
	m.mu.Lock()
	if len(m.countries) < maxCountryCache {
		m.countries[raw] = c
	}
	m.mu.Unlock()
	return c
}

// ID returns the row's id cell, trimmed, or "" when no id column is mapped.
func (m *Mapper) ID(r record.Row) string {
	return strings.TrimSpace(cell(r, m.single[fieldID]))
}

// Notes returns remarks about the mapping worth a warning (duplicate column
// names, an id column left undetected).
func (m *Mapper) Notes() []string { return m.notes }

// Columns returns the mapping as flat key/value pairs for a structured log:
// line1..lineN, city, region, postcode, country, id, default_country and
// language, each present only when mapped.
func (m *Mapper) Columns() map[string]string {
	c := make(map[string]string)
	for n, i := range m.lines {
		c["line"+strconv.Itoa(n+1)] = m.header[i]
	}
	for f := fieldCity; f < numFields; f++ {
		if i := m.single[f]; i >= 0 {
			c[fieldNames[f]] = m.header[i]
		}
	}
	if m.defCountry != "" {
		c["default_country"] = m.defCountry
	}
	if m.language != "" {
		c["language"] = m.language
	}
	return c
}

// Indexes returns the header index of each column Columns names, under
// the same keys: where the header repeats a name ("Address", "Address"),
// each field keeps its own column.
func (m *Mapper) Indexes() map[string]int {
	c := make(map[string]int)
	for n, i := range m.lines {
		c["line"+strconv.Itoa(n+1)] = i
	}
	for f := fieldCity; f < numFields; f++ {
		if i := m.single[f]; i >= 0 {
			c[fieldNames[f]] = i
		}
	}
	return c
}

// MarshalZerologObject logs the mapping as the fields of Columns, so that
// logger.Info().Object("mapping", m) records it.
func (m *Mapper) MarshalZerologObject(e *zerolog.Event) {
	c := m.Columns()
	for _, k := range slices.Sorted(maps.Keys(c)) {
		e.Str(k, c[k])
	}
}

// Describe returns the mapping for people, one element per line.
func (m *Mapper) Describe() string {
	var b strings.Builder
	how := func(f field) string {
		if m.detected[f] {
			return " (detected)"
		}
		return ""
	}
	lines := "none"
	if len(m.lines) > 0 {
		lines = m.quoteCols(m.lines) + how(fieldLine)
	}
	fmt.Fprintf(&b, "  %-14s %s\n", "address lines:", lines)
	for f := fieldCity; f < numFields; f++ {
		v := "none"
		if i := m.single[f]; i >= 0 {
			v = strconv.Quote(m.header[i]) + how(f)
		}
		if f == fieldPostcode && m.single[f] >= 0 {
			v += ", sent as the last address line"
		}
		if f == fieldCountry && m.trailingCountry {
			v += "; a country name ending the address is used (\"..., LS1 0QP, UK\")"
		}
		if f == fieldCountry && m.defCountry != "" {
			v += "; rows without one: " + m.defCountry
		}
		fmt.Fprintf(&b, "  %-14s %s\n", fieldNames[f]+":", v)
	}
	if m.language != "" {
		fmt.Fprintf(&b, "  %-14s %s\n", "language:", m.language)
	}
	for _, n := range m.notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	return b.String()
}

// find returns the columns whose header equals name ignoring case and white
// space.
func (m *Mapper) find(name string) []int {
	want := foldSpace(name)
	if want == "" {
		return nil
	}
	var idx []int
	for i, h := range m.header {
		if foldSpace(h) == want {
			idx = append(idx, i)
		}
	}
	return idx
}

func (m *Mapper) missing(f field, name string) string {
	return fmt.Sprintf("%s %q: no such column; the columns are %s", fieldFlags[f], name, m.quoteCols(nil))
}

// quoteCols quotes the headers at idx, or all headers when idx is nil.
func (m *Mapper) quoteCols(idx []int) string {
	if idx == nil {
		return quoteList(m.header)
	}
	names := make([]string, len(idx))
	for n, i := range idx {
		names[n] = m.header[i]
	}
	return quoteList(names)
}

func cell(r record.Row, i int) string {
	if i < 0 || i >= len(r.Cells) {
		return ""
	}
	return r.Cells[i]
}

// appendLines appends the non-blank lines of a cell, trimmed.
func appendLines(dst []string, s string) []string {
	if strings.TrimSpace(s) == "" {
		return dst
	}
	for l := range strings.FieldsFuncSeq(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if l = strings.TrimSpace(l); l != "" {
			dst = append(dst, l)
		}
	}
	return dst
}

// foldSpace lowercases s and drops its white space (and a BOM).
func foldSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '\uFEFF' {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

// foldName lowercases s and keeps only its letters and digits, so that
// "Address Line 1", "address_line_1" and "ADDRESS-LINE1" meet.
func foldName(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, s)
}

// Header names recognised by detection, folded by foldName. Line names may
// carry a number ("address2"); those in lineNeedsNumber must.
var (
	lineNames = set("address", "addressline", "addr", "adr", "addressln", "street", "streetaddress",
		"streetline", "streetname", "fulladdress", "line", "addressstreet", "building", "buildingname",
		"buildingnumber", "housename", "housenumber", "houseno", "housenameornumber", "flat",
		"apartment", "premise", "premises", "subbuilding", "locality", "dependentlocality",
		"district", "townland", "adresse", "strasse", "straße")
	lineNeedsNumber = set("line")
	singleNames     = map[field]map[string]bool{
		fieldCity: set("city", "town", "posttown", "towncity", "citytown", "cityortown", "townorcity",
			"suburb", "municipality", "ort", "stadt", "ville"),
		fieldRegion: set("county", "state", "province", "region", "stateprovince", "provincestate",
			"stateregion", "regionstate", "countystate", "statecounty", "countyprovince",
			"stateorprovince", "countyregion", "regioncounty", "territory"),
		fieldPostcode: set("postcode", "postalcode", "zip", "zipcode", "eircode", "postcodezip",
			"zippostcode", "zippostalcode", "postalzip", "postalcodezip", "postcodeeircode",
			"eircodepostcode", "eircodepostalcode", "postzip", "pincode", "plz", "codepostal"),
		fieldCountry: set("country", "countryname", "countrycode", "countryiso", "countryregion",
			"nation", "pays"),
		fieldID: set("id", "customerid", "customerno", "customernumber", "customerref", "accountid",
			"accountno", "accountnumber", "recordid", "ref", "reference", "clientid", "contactid"),
	}
	// namePrefixes are dropped to read "Billing City" or "Mailing Street" as
	// "City" or "Street". A file with columns of several prefixes holds
	// several addresses: the first prefix in this order is used unless
	// MappingSpec.Prefix says otherwise, so Billing comes before Shipping.
	namePrefixes = []string{"billing", "mailing", "shipping", "delivery", "postal", "customer",
		"contact", "home", "primary", "physical", "residential", "business", "invoice"}
)

func set(names ...string) map[string]bool {
	s := make(map[string]bool, len(names))
	for _, n := range names {
		s[n] = true
	}
	return s
}

// classifyPrefix tells which field a header names, if any, and the prefix
// dropped to read it ("billing" for "Billing City"), "" for none.
func classifyPrefix(header string) (field, string, bool) {
	n := foldName(header)
	if f, ok := classifyFolded(n); ok {
		return f, "", true
	}
	for _, p := range namePrefixes {
		if rest, ok := strings.CutPrefix(n, p); ok && rest != "" {
			if f, ok := classifyFolded(rest); ok {
				return f, p, true
			}
		}
	}
	return 0, "", false
}

// prefixTitle spells a folded prefix as a flag value and for people.
func prefixTitle(p string) string {
	if p == "" {
		return p
	}
	return strings.ToUpper(p[:1]) + p[1:]
}

func classifyFolded(n string) (field, bool) {
	for f := fieldCity; f < numFields; f++ {
		if singleNames[f][n] {
			return f, true
		}
	}
	base := strings.TrimRightFunc(n, unicode.IsDigit)
	numbered := base != n
	if lineNames[base] && (numbered || !lineNeedsNumber[base]) {
		return fieldLine, true
	}
	return 0, false
}
