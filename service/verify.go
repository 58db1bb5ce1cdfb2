package service

import (
	"bytes"
	"cmp"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/countries"
	"github.com/addrclean/addrclean/gazetteer"
)

// Bounds of one verify request; beyond them it is a 400, not a slow answer.
const (
	maxLines    = 32
	maxParamLen = 1024
)

// request is a parsed verify request.
type request struct {
	rawLines []string // addressLine values as sent
	lines    []string // non-blank lines, trimmed
	city     string
	region   string
	country  string
	iso      string
	language string
	has      uint8 // which optional parameters were sent (hasCity ...)
}

const (
	hasCity = 1 << iota
	hasRegion
	hasLanguage
)

func (s *Service) verify(w http.ResponseWriter, r *http.Request) int {
	form, e := s.parseForm(w, r)
	if e != nil {
		return s.writeError(w, e)
	}
	tok := form.Get("token")
	if tok == "" {
		return s.writeError(w, errMissingToken)
	}
	now := time.Now()
	kid, e := s.sign.check(tok, now)
	if e != nil {
		return s.writeError(w, e)
	}
	it := s.byKID[kid]
	if it == nil {
		// Signed by us for a key that is no longer configured.
		return s.writeError(w, errInvalidToken)
	}
	if e := s.limit(w, it, now); e != nil {
		return s.writeError(w, e)
	}
	req, e := parseRequest(form)
	if e != nil {
		return s.writeError(w, e)
	}
	m := s.m.Match(gazetteer.Query{
		Lines: req.lines, City: req.city, Region: req.region,
		Country: req.iso, Language: req.language,
	})
	// The answer is built in pooled memory: it is encoded and written
	// before verify returns, and nothing keeps it.
	sc := answerPool.Get().(*answerScratch)
	defer answerPool.Put(sc)
	resp := &sc.resp // a local would escape to the heap through the encoder
	*resp = s.answer(it, &req, &m, sc)
	sc.links[0] = api.Link{Rel: "self", Href: s.selfLink(r, &req), Title: "Verify"}
	resp.Links = sc.links[:]
	return s.writeVerify(w, resp)
}

// formType is the one body format of the interface.
const formType = "application/x-www-form-urlencoded"

// parseForm reads the query and, for POST, the form-encoded body within the
// size limit: the parameters of the body first, then those of the query,
// as http.Request.ParseForm orders them. It does what ParseForm does
// without its four maps and two media-type parses per request, which were
// 5 % of an embedded run's CPU, and leaves the request as it came.
func (s *Service) parseForm(w http.ResponseWriter, r *http.Request) (url.Values, *apiError) {
	// The query is bounded like a body, so a GET cannot carry more than a
	// POST; the server's header limit is well above it.
	if int64(len(r.URL.RawQuery)) > s.maxBody {
		return nil, errTooLarge
	}
	var body url.Values
	if r.Method == http.MethodPost {
		if r.ContentLength > s.maxBody {
			return nil, errTooLarge
		}
		form, e := isForm(r.Header.Get("Content-Type"), r.ContentLength)
		if e != nil {
			return nil, e
		}
		if form {
			// Read into pooled memory: the string is the one copy kept.
			buf := bufPool.Get().(*bytes.Buffer)
			_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, s.maxBody))
			raw := buf.String()
			putBuf(buf)
			if err != nil {
				if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
					return nil, errTooLarge
				}
				return nil, errNotForm
			}
			if body, err = url.ParseQuery(raw); err != nil {
				return nil, errNotForm
			}
		}
	}
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, errNotForm
	}
	switch {
	case len(body) == 0:
		return query, nil
	case len(query) == 0:
		return body, nil
	}
	for k, vs := range query {
		body[k] = append(body[k], vs...)
	}
	return body, nil
}

// errNotForm answers a query or body that is not form-encoded.
var errNotForm = invalidParam("The query or body is not validly form-encoded.")

// isForm tells whether a POST body with Content-Type ct and length n is to
// be read as a form. Clients that forget the Content-Type header still mean
// a form: the interface has no other body format. A body of another type is
// refused, an empty one ignored; a Content-Type that does not parse fails
// even then, as ParseForm fails on it.
func isForm(ct string, n int64) (bool, *apiError) {
	if ct == "" || ct == formType {
		return true, nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	switch {
	case err == nil && mt == formType:
		return true, nil
	case n != 0:
		return false, errUnsupportedBody
	case err != nil:
		return false, errNotForm
	}
	return false, nil
}

// parseRequest validates the verify parameters of form: every
// addressLine, the first value of the others.
func parseRequest(form url.Values) (request, *apiError) {
	var req request
	req.rawLines = form["addressLine"]
	if len(req.rawLines) > maxLines {
		return req, invalidParam("Too many addressLine parameters (at most " + strconv.Itoa(maxLines) + ").")
	}
	req.lines = make([]string, 0, len(req.rawLines))
	for _, l := range req.rawLines {
		if e := checkParam("addressLine", l); e != nil {
			return req, e
		}
		if t := strings.TrimSpace(l); t != "" {
			req.lines = append(req.lines, t)
		}
	}
	for _, x := range [...]struct {
		name string
		dst  *string
		has  uint8
	}{{"city", &req.city, hasCity}, {"region", &req.region, hasRegion}, {"country", &req.country, 0}, {"language", &req.language, hasLanguage}} {
		vs := form[x.name]
		if len(vs) == 0 {
			continue
		}
		if e := checkParam(x.name, vs[0]); e != nil {
			return req, e
		}
		*x.dst = vs[0]
		req.has |= x.has
	}
	if len(req.lines) == 0 {
		return req, errMissingAddressLine
	}
	c := strings.TrimSpace(req.country)
	if c == "" {
		return req, errMissingCountry
	}
	iso, ok := countries.ISO(c)
	if !ok {
		return req, errUnknownCountry
	}
	req.iso = iso
	req.city = strings.TrimSpace(req.city)
	req.region = strings.TrimSpace(req.region)
	req.language = strings.TrimSpace(req.language)
	return req, nil
}

func checkParam(name, v string) *apiError {
	if len(v) > maxParamLen {
		return invalidParam("The " + name + " parameter is longer than " + strconv.Itoa(maxParamLen) + " bytes.")
	}
	if !utf8.ValidString(v) {
		return invalidParam("The " + name + " parameter is not valid UTF-8.")
	}
	return nil
}

// answer turns a match into the verify response under the integration's
// settings.
func (s *Service) answer(it *integration, req *request, m *gazetteer.Match, sc *answerScratch) api.VerifyResponse {
	lang := cmp.Or(req.language, "en")
	level := m.Level
	switch level {
	case gazetteer.LevelBuilding, gazetteer.LevelSubBuilding, gazetteer.LevelStreet,
		gazetteer.LevelLocality, gazetteer.LevelRegion:
	default:
		level = gazetteer.LevelNone
	}
	building := m.Record != nil && (level == gazetteer.LevelBuilding || level == gazetteer.LevelSubBuilding)
	verdict := m.Verdict
	// Accept and Suggest promise an address id: without a matched building
	// the honest answer is Confirm.
	if !building || verdict != gazetteer.VerdictAccept && verdict != gazetteer.VerdictSuggest {
		verdict = gazetteer.VerdictConfirm
	}
	parts := inputRunes(req, sc)
	assessElements(m, parts)
	// Status and message speak of any change, cosmetic ones included; the
	// amended flags (like details) only of changes in substance.
	amended := m.Tidied || m.AddressLinesAmended || m.CityAmended || m.RegionAmended || m.PostcodeAmended
	country := cmp.Or(m.Country, req.iso)

	var resp api.VerifyResponse
	resp.Type = "verify"
	resp.Action = api.Action(verdict)
	resp.Information = api.Information{
		Status:              status(verdict, level, amended),
		MatchLevel:          string(level),
		Complete:            building,
		SubBuilding:         "None",
		AddressLinesAmended: m.AddressLinesAmended,
		CityAmended:         m.CityAmended,
		RegionAmended:       m.RegionAmended,
		PostcodeAmended:     m.PostcodeAmended,
		Details: api.Details{
			Organization:      change(m.Details.Organization),
			Street:            change(m.Details.Street),
			AddressLines:      change(m.Details.AddressLines),
			SubBuildingNumber: change(m.Details.SubBuildingNumber),
			BuildingNumber:    change(m.Details.BuildingNumber),
			City:              change(m.Details.City),
			Region:            change(m.Details.Region),
			Postcode:          change(m.Details.Postcode),
		},
	}
	if building && m.Record.SubBuilding != "" {
		resp.Information.SubBuilding = m.Record.SubBuilding
	}
	resp.Form = api.Form{Language: "en", Message: message(verdict, level, m.Ambiguous, amended)}
	if verdict == gazetteer.VerdictSuggest && m.UnusedInput {
		// Nothing in the label can show a line that was left out.
		resp.Form.Message = msgCorrectedUnused
	}
	switch {
	case it.allowed != nil && !it.allowed[country]:
		resp.Action = api.ActionReject
		name := cmp.Or(countries.Name(country), country)
		resp.Form.Message = api.Message{ID: MsgRejectCountry, Severity: api.SeverityError,
			Value: "Addresses in " + name + " are not accepted by this integration."}
	case !it.POBoxes && (m.POBox || m.Record != nil && m.Record.Type == gazetteer.POBox):
		// A PO Box given is refused even when no record matched it: the
		// integration does not take PO Boxes at all.
		resp.Action = api.ActionReject
		resp.Form.Message = api.Message{ID: MsgRejectPOBox, Severity: api.SeverityError,
			Value: "PO Box addresses are not accepted by this integration."}
	}

	// input: the address as sent. The lines and labels of input and
	// address share one array each, as do the members of address, all in
	// sc.
	lines := slices.Grow(sc.lines[:0], len(req.rawLines)+len(m.Lines))
	labels := slices.Grow(sc.labels[:0], len(req.lines)+2+len(m.Lines)+3)
	sc.lines, sc.labels = lines, labels
	in := &resp.Input
	in.Lines = lines[:0:len(req.rawLines)]
	inLabel := labels[: 0 : len(req.lines)+2]
	for _, l := range req.rawLines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		in.Lines = append(in.Lines, api.Line{Key: lineKey(len(in.Lines) + 1), Value: l})
	}
	inLabel = append(inLabel, req.lines...)
	in.City.Value = req.city
	in.Region.Value = req.region
	inLabel = appendNonEmpty(inLabel, req.city, req.region)
	in.Country = api.Country{Language: "en", Value: req.country, ISO: req.iso}
	in.Label = inLabel

	// address: always returned; members per the form settings.
	a := &resp.Address
	if building && m.Record.ID != "" {
		a.ID = m.Record.ID
	}
	a.Language, a.Charset, a.Variation = lang, "Latn", "V"
	label := labels[len(req.lines)+2 : len(req.lines)+2]
	for _, l := range m.Lines {
		label = appendNonEmpty(label, l)
	}
	nLines := len(label)
	label = appendNonEmpty(label, m.City, m.Region, m.Postcode)
	if it.Form.Lines {
		a.Lines = lines[len(req.rawLines):len(req.rawLines)]
		for _, l := range m.Lines {
			if l != "" {
				a.Lines = append(a.Lines, api.Line{Key: lineKey(len(a.Lines) + 1), Value: l})
			}
		}
	}
	members := &sc.members
	*members = answerMembers{}
	if it.Form.City {
		members.city.Value = m.City
		a.City = &members.city
	}
	if it.Form.Region {
		members.region.Value = m.Region
		a.Region = &members.region
	}
	if it.Form.Postcode {
		members.postcode.Value = m.Postcode
		a.Postcode = &members.postcode
	}
	if it.Form.Country {
		members.country = api.Country{Language: "en", Value: countries.Name(country), ISO: country}
		a.Country = &members.country
	}
	a.Label = label
	a.Highlights = answerHighlights(req, m, label, nLines, parts, sc)

	if it.Location && m.Location != nil {
		if acc := accuracy(level); acc != "" {
			members.location = api.Location{Latitude: s.round(m.Location.Latitude), Longitude: s.round(m.Location.Longitude),
				CRS: "EPSG:4326", Accuracy: acc}
			resp.Data.Location = &members.location
		}
	}
	return resp
}

// assessElements fills in the details and amended flags of a city, region
// or postcode that the match returns but did not assess (details None, as
// street and locality matches leave them): Added when the input does not
// hold its text, Unchanged when it does. The highlights follow the details,
// so without this a county the answer adds would be neither flagged nor
// marked.
func assessElements(m *gazetteer.Match, parts [][]rune) {
	d := &m.Details
	unassessed := func(c gazetteer.Change) bool { return c == gazetteer.ChangeNone || c == "" }
	if !unassessed(d.City) && !unassessed(d.Region) && !unassessed(d.Postcode) {
		return
	}
	for _, el := range [...]struct {
		v       string
		c       *gazetteer.Change
		amended *bool
	}{{m.City, &d.City, &m.CityAmended}, {m.Region, &d.Region, &m.RegionAmended}, {m.Postcode, &d.Postcode, &m.PostcodeAmended}} {
		if !unassessed(*el.c) || el.v == "" {
			continue
		}
		if h := highlightLine([]rune(el.v), parts, false); h.set && h.start == 0 && h.n == utf8.RuneCountInString(el.v) {
			*el.c, *el.amended = gazetteer.ChangeAdded, true
		} else {
			*el.c = gazetteer.ChangeUnchanged
		}
	}
}

// inputRunes returns the parts of the input, as characters in sc, that
// the label is compared with: the lines split the way the gazetteer does
// before matching (at newlines, commas and semicolons, spaces tidied), so
// that a label line is compared with the part of a cell it came from, not
// with the whole cell ("Flat 2, Mill Court, 18 Main Street" is three
// parts), then the city and the region.
func inputRunes(req *request, sc *answerScratch) [][]rune {
	sc.parts = appendNonEmpty(gazetteer.SplitParts(sc.parts[:0], req.lines), req.city, req.region)
	sc.in.reset()
	for _, p := range sc.parts {
		sc.in.add(p)
	}
	return sc.in.slices()
}

// answerHighlights highlights the label: the address lines against the
// input parts (in), and the city, region and postcode lines each
// against the value the input gave for that element, so that a corrected
// town is highlighted even when its name is written in another input line.
func answerHighlights(req *request, m *gazetteer.Match, label []string, nLines int, in [][]rune, sc *answerScratch) [][]int {
	// The answer's spans share one backing array.
	out := slices.Grow(sc.out[:0], len(label))[:len(label)]
	spans := slices.Grow(sc.spans[:0], 2*len(label))[:2*len(label)]
	sc.out, sc.spans = out, spans
	clear(out)
	put := func(i int, h span) {
		if h.set {
			spans[2*i], spans[2*i+1] = h.start, h.n
			out[i] = spans[2*i : 2*i+2 : 2*i+2]
		} else {
			out[i] = spans[2*i : 2*i : 2*i]
		}
	}
	// Highlights and the amended flags tell one story: a line is marked
	// only when the address lines are amended, an element only when it was
	// changed or added. A cosmetic change (an abbreviation spelled out)
	// amends nothing and is not marked; a removal (a flat the address
	// lacks) amends the lines but leaves nothing in the label to mark.
	for i := 0; i < nLines; i++ {
		if !m.AddressLinesAmended {
			put(i, span{})
			continue
		}
		sc.line = appendRunes(sc.line[:0], label[i])
		put(i, highlightLine(sc.line, in, true))
	}
	i := nLines
	for _, el := range [...]struct {
		v, own string
		c      gazetteer.Change
	}{{m.City, req.city, m.Details.City}, {m.Region, req.region, m.Details.Region}, {m.Postcode, "", m.Details.Postcode}} {
		if el.v == "" {
			continue
		}
		if el.c == gazetteer.ChangeChanged || el.c == gazetteer.ChangeAdded {
			put(i, highlightElement(el.v, el.own, el.c, in))
		} else {
			put(i, span{})
		}
		i++
	}
	return out
}

// answerScratch is the memory of one verify answer: what answer and
// answerHighlights build it in, and their working memory.
type answerScratch struct {
	resp    api.VerifyResponse
	lines   []api.Line
	labels  []string
	members answerMembers
	out     [][]int
	spans   []int
	links   [1]api.Link

	parts []string
	in    runeArena
	line  []rune
}

// answerMembers are the members of address and data behind pointers.
type answerMembers struct {
	city, region, postcode api.Value
	country                api.Country
	location               api.Location
}

var answerPool = sync.Pool{New: func() any { return new(answerScratch) }}

func appendNonEmpty(dst []string, vs ...string) []string {
	for _, v := range vs {
		if v != "" {
			dst = append(dst, v)
		}
	}
	return dst
}

// lineKeys are the first keys, precomputed so answers do not format them.
var lineKeys = func() []string {
	ks := make([]string, maxLines+1)
	for i := range ks {
		ks[i] = "AddressLine" + strconv.Itoa(i)
	}
	return ks
}()

func lineKey(n int) string {
	if n < len(lineKeys) {
		return lineKeys[n]
	}
	return "AddressLine" + strconv.Itoa(n)
}

func change(c gazetteer.Change) string {
	switch c {
	case gazetteer.ChangeUnchanged, gazetteer.ChangeChanged, gazetteer.ChangeAdded, gazetteer.ChangeIgnored:
		return string(c)
	}
	return api.DetailNone
}

func status(v gazetteer.Verdict, level gazetteer.Level, amended bool) string {
	switch {
	case v == gazetteer.VerdictAccept && !amended:
		return api.StatusVerified
	case v == gazetteer.VerdictAccept || v == gazetteer.VerdictSuggest:
		return api.StatusCorrected
	case level == gazetteer.LevelNone:
		return api.StatusUnverified
	}
	return api.StatusPartial
}

func accuracy(l gazetteer.Level) string {
	switch l {
	case gazetteer.LevelBuilding, gazetteer.LevelSubBuilding:
		return "BUILDING"
	case gazetteer.LevelStreet:
		return "STREET"
	case gazetteer.LevelLocality:
		return "LOCALITY"
	case gazetteer.LevelRegion:
		return "REGION"
	}
	return ""
}

// Result messages with a fixed text.
var (
	msgVerified        = api.Message{ID: MsgVerified, Severity: api.SeverityInformation, Value: "Address verified."}
	msgVerifiedTidied  = api.Message{ID: MsgVerifiedTidied, Severity: api.SeverityInformation, Value: "Address verified; its formatting was corrected."}
	msgCorrected       = api.Message{ID: MsgCorrected, Severity: api.SeverityWarning, Value: "Address corrected: check the changes before using it."}
	msgCorrectedUnused = api.Message{ID: MsgCorrected, Severity: api.SeverityWarning, Value: "Address corrected: part of the input address was not used; check the changes before using it."}
	msgPartialBuilding = api.Message{ID: MsgPartialBuilding, Severity: api.SeverityWarning, Value: "Possible match: please confirm the address."}
	msgPartialStreet   = api.Message{ID: MsgPartialStreet, Severity: api.SeverityWarning, Value: "Partial match: the street was found but not the building."}
	msgPartialLocality = api.Message{ID: MsgPartialLocality, Severity: api.SeverityWarning, Value: "Partial match: the town or locality was found but not the street."}
	msgPartialRegion   = api.Message{ID: MsgPartialRegion, Severity: api.SeverityWarning, Value: "Partial match: only the region was found."}
	msgAmbiguous       = api.Message{ID: MsgAmbiguous, Severity: api.SeverityWarning, Value: "Several addresses match equally well: please confirm the address."}
	msgNotFound        = api.Message{ID: MsgNotFound, Severity: api.SeverityWarning, Value: "Address not found: please check it."}
)

func message(v gazetteer.Verdict, level gazetteer.Level, ambiguous, amended bool) api.Message {
	switch v {
	case gazetteer.VerdictAccept:
		if amended {
			return msgVerifiedTidied
		}
		return msgVerified
	case gazetteer.VerdictSuggest:
		return msgCorrected
	}
	if ambiguous {
		return msgAmbiguous
	}
	switch level {
	case gazetteer.LevelBuilding, gazetteer.LevelSubBuilding:
		return msgPartialBuilding
	case gazetteer.LevelStreet:
		return msgPartialStreet
	case gazetteer.LevelLocality:
		return msgPartialLocality
	case gazetteer.LevelRegion:
		return msgPartialRegion
	}
	return msgNotFound
}

// selfLink rebuilds the verify request as a GET URL with its parameters in
// a fixed order and without the token.
func (s *Service) selfLink(r *http.Request, req *request) string {
	var b strings.Builder
	b.Grow(128)
	if s.baseURL != "" {
		b.WriteString(s.baseURL)
	} else {
		if r.TLS != nil {
			b.WriteString("https://")
		} else {
			b.WriteString("http://")
		}
		b.WriteString(r.Host)
	}
	b.WriteString("/3.0/verify")
	sep := byte('?')
	add := func(k, v string) {
		b.WriteByte(sep)
		sep = '&'
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(v))
	}
	for _, l := range req.rawLines {
		add("addressLine", l)
	}
	if req.has&hasCity != 0 {
		add("city", req.city)
	}
	if req.has&hasRegion != 0 {
		add("region", req.region)
	}
	add("country", req.country)
	if req.has&hasLanguage != 0 {
		add("language", req.language)
	}
	return b.String()
}
