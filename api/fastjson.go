package api

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A verify answer is decoded for every row of a run, and decoding it with
// encoding/json (reflection, a token walk for the unknown members) was about
// a quarter of the CPU of a whole run. fastDecodeVerifyResponse is a small
// hand-written reader for exactly the shapes of the wire types in types.go.
//
// It is a pure shortcut: whenever it meets anything it does not decode
// exactly as encoding/json would (a syntax error, a type mismatch, a number
// out of range, a duplicate member, a member name that only matches a field
// case-insensitively, very deep nesting...), it reports false and the caller
// decodes the answer with encoding/json instead, which then gives the same
// result, or the same error, as it always did. FuzzFastDecodeMatchesJSON
// checks that whatever it accepts decodes to the same value.
//
// What it reproduces of encoding/json (into a zero VerifyResponse):
//   - null for any member leaves it zero (a nil pointer, slice or map);
//   - [] gives an empty, non-nil slice;
//   - strings are unescaped as encoding/json does, invalid UTF-8 and lone
//     surrogates becoming U+FFFD;
//   - ints parse with strconv.ParseInt (no fraction, no exponent), floats
//     with strconv.ParseFloat;
//   - unknown members of the answer and of data keep their raw JSON in
//     Extra (a later duplicate replacing an earlier one), unknown members
//     elsewhere are skipped; Extra stays nil when there are none.
func fastDecodeVerifyResponse(b []byte) (VerifyResponse, bool) {
	d := fastReader{s: string(b)}
	var v VerifyResponse
	if !d.verifyResponse(&v) {
		return VerifyResponse{}, false
	}
	d.ws()
	if d.i != len(d.s) {
		return VerifyResponse{}, false
	}
	return v, true
}

// fastReader reads JSON from s. Strings without escapes are substrings of s,
// so decoding an answer costs one copy of its text rather than one
// allocation per string. Every method reports false for anything it does not
// handle; the reader is then abandoned.
type fastReader struct {
	s     string
	i     int
	depth int

	// The members of an answer behind pointers, and the numbers of its
	// highlights, share one allocation each rather than one per member
	// or per highlight.
	parts *answerParts
	nums  []int
}

// answerParts holds the pointer members of one answer, and room for the
// elements of its arrays of usual sizes (spare), which would otherwise be
// one allocation each.
type answerParts struct {
	city, region, postcode Value
	country                Country
	location               Location

	lines      spare[Line]
	strings    spare[string]
	highlights spare[[]int]
	links      spare[Link]
	lineBuf    [8]Line
	stringBuf  [16]string
	hlBuf      [8][]int
	linkBuf    [1]Link
}

// spare is the unused part of an array of elements.
type spare[T any] struct{ free []T }

// take returns room for elements; give hands back how many of them the
// slice taken from it uses, when it did not outgrow it.
func (s *spare[T]) take() []T { return s.free[:0:len(s.free)] }

func (s *spare[T]) give(used []T) {
	if len(used) <= len(s.free) {
		s.free = s.free[len(used):]
	}
}

func (d *fastReader) answerParts() *answerParts {
	if d.parts == nil {
		p := new(answerParts)
		p.lines.free, p.strings.free = p.lineBuf[:], p.stringBuf[:]
		p.highlights.free, p.links.free = p.hlBuf[:], p.linkBuf[:]
		d.parts = p
	}
	return d.parts
}

// maxSkipDepth bounds the nesting of skipped values; deeper ones are left to
// encoding/json (whose own limit is 10000).
const maxSkipDepth = 1000

func (d *fastReader) ws() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, or 0 at the end.
func (d *fastReader) peek() byte {
	d.ws()
	if d.i < len(d.s) {
		return d.s[d.i]
	}
	return 0
}

// literal consumes lit (true, false or null) at the current position.
func (d *fastReader) literal(lit string) bool {
	if strings.HasPrefix(d.s[d.i:], lit) {
		d.i += len(lit)
		return true
	}
	return false
}

// null consumes a null if one comes next, and reports whether it did.
func (d *fastReader) null() bool {
	return d.peek() == 'n' && d.literal("null")
}

// begin consumes the opening delimiter c ('{' or '[').
func (d *fastReader) begin(c byte) bool {
	if d.peek() != c {
		return false
	}
	d.i++
	return true
}

// member reads the name of the next member of an object whose '{' has been
// consumed: first tells whether a member was read before. It returns more
// false at the closing brace (consumed).
func (d *fastReader) member(first bool) (key string, more, ok bool) {
	c := d.peek()
	if c == '}' {
		d.i++
		return "", false, true
	}
	if !first {
		if c != ',' {
			return "", false, false
		}
		d.i++
		c = d.peek()
	}
	if c != '"' {
		return "", false, false
	}
	key, ok = d.str()
	if !ok || d.peek() != ':' {
		return "", false, false
	}
	d.i++
	return key, true, true
}

// elem moves to the next element of an array whose '[' has been consumed,
// and returns more false at the closing bracket (consumed).
func (d *fastReader) elem(first bool) (more, ok bool) {
	c := d.peek()
	if c == ']' {
		d.i++
		return false, true
	}
	if !first {
		if c != ',' {
			return false, false
		}
		d.i++
	}
	return true, true
}

// str reads a string whose opening quote is at the current position.
func (d *fastReader) str() (string, bool) {
	start := d.i + 1
	for i := start; i < len(d.s); {
		c := d.s[i]
		switch {
		case c == '"':
			d.i = i + 1
			return d.s[start:i], true
		case c == '\\' || c < ' ':
			return d.strSlow(start)
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRuneInString(d.s[i:])
			if r == utf8.RuneError && size == 1 {
				return d.strSlow(start)
			}
			i += size
		}
	}
	return "", false
}

// strSlow unescapes the string starting at start (after its quote) as
// encoding/json's unquote does.
func (d *fastReader) strSlow(start int) (string, bool) {
	s := d.s
	b := make([]byte, 0, 64)
	for i := start; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			d.i = i + 1
			return string(b), true
		case c < ' ':
			return "", false
		case c == '\\':
			if i+1 >= len(s) {
				return "", false
			}
			switch s[i+1] {
			case '"', '\\', '/':
				b = append(b, s[i+1])
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r := hex4(s, i+2)
				if r < 0 {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r2 := hex4(s, i+2); r2 >= 0 && i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							b = utf8.AppendRune(b, dec)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
				continue
			default:
				return "", false
			}
			i += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			b = utf8.AppendRune(b, r) // invalid UTF-8 becomes U+FFFD
			i += size
		}
	}
	return "", false
}

// hex4 parses the four hex digits at s[i:i+4], or returns -1.
func hex4(s string, i int) rune {
	if i < 0 || i+4 > len(s) {
		return -1
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// number reads a JSON number and reports whether it has a fraction or an
// exponent.
func (d *fastReader) number() (lit string, isInt, ok bool) {
	s, i := d.s, d.i
	start := i
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	default:
		return "", false, false
	}
	isInt = true
	if i < len(s) && s[i] == '.' {
		isInt = false
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return "", false, false
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		isInt = false
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return "", false, false
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	d.i = i
	return s[start:i], isInt, true
}

// skip consumes any JSON value, checking its syntax.
func (d *fastReader) skip() bool {
	switch d.peek() {
	case '"':
		_, ok := d.str()
		return ok
	case '{':
		if d.depth++; d.depth > maxSkipDepth {
			return false
		}
		d.i++
		for first := true; ; first = false {
			_, more, ok := d.member(first)
			if !ok {
				return false
			}
			if !more {
				break
			}
			if !d.skip() {
				return false
			}
		}
		d.depth--
		return true
	case '[':
		if d.depth++; d.depth > maxSkipDepth {
			return false
		}
		d.i++
		for first := true; ; first = false {
			more, ok := d.elem(first)
			if !ok {
				return false
			}
			if !more {
				break
			}
			if !d.skip() {
				return false
			}
		}
		d.depth--
		return true
	case 't':
		return d.literal("true")
	case 'f':
		return d.literal("false")
	case 'n':
		return d.literal("null")
	default:
		_, _, ok := d.number()
		return ok
	}
}

// raw consumes any value and returns a copy of its text.
func (d *fastReader) raw() (json.RawMessage, bool) {
	d.ws()
	start := d.i
	if !d.skip() {
		return nil, false
	}
	return json.RawMessage(d.s[start:d.i]), true
}

// unknown handles a member of a nested object that names no field: it is
// skipped, unless encoding/json would match it to one of names
// case-insensitively, or it is not ASCII (folding is then not ours to judge).
func (d *fastReader) unknown(key string, names ...string) bool {
	for i := 0; i < len(key); i++ {
		if key[i] >= utf8.RuneSelf {
			return false
		}
	}
	for _, n := range names {
		if strings.EqualFold(key, n) {
			return false
		}
	}
	return d.skip()
}

// foldsTo reports whether decodeObject would match key, which is none of
// the lower-case names exactly, to one of them through strings.ToLower.
func foldsTo(key string, names ...string) bool {
	for i := 0; i < len(key); i++ {
		if key[i] >= utf8.RuneSelf {
			lower := strings.ToLower(key)
			for _, n := range names {
				if lower == n {
					return true
				}
			}
			return false
		}
	}
	for _, n := range names {
		if strings.EqualFold(key, n) { // ASCII: the same as comparing ToLower(key)
			return true
		}
	}
	return false
}

// once records member bit in seen and reports false if it was already
// there: encoding/json decodes a repeated member into the same field again,
// merging objects, which is left to it.
func once(seen *uint32, bit uint32) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

func (d *fastReader) string(dst *string) bool {
	switch d.peek() {
	case '"':
		s, ok := d.str()
		*dst = s
		return ok
	case 'n':
		return d.literal("null")
	}
	return false
}

func (d *fastReader) bool(dst *bool) bool {
	switch d.peek() {
	case 't':
		*dst = true
		return d.literal("true")
	case 'f':
		*dst = false
		return d.literal("false")
	case 'n':
		return d.literal("null")
	}
	return false
}

func (d *fastReader) int(dst *int) bool {
	if d.null() {
		return true
	}
	lit, isInt, ok := d.number()
	if !ok || !isInt {
		return false
	}
	n, err := strconv.ParseInt(lit, 10, strconv.IntSize)
	if err != nil {
		return false
	}
	*dst = int(n)
	return true
}

func (d *fastReader) float(dst *float64) bool {
	if d.null() {
		return true
	}
	lit, _, ok := d.number()
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return false
	}
	*dst = f
	return true
}

// object decodes a JSON object (null leaves the destination as it is),
// handing each member's key to field, which decodes the value; field must not
// keep the closure, so it stays on the caller's stack.
func (d *fastReader) object(field func(key string) bool) bool {
	if d.null() {
		return true
	}
	return d.members(field)
}

// members is object for a value that must be an object (null is not).
func (d *fastReader) members(field func(key string) bool) bool {
	if !d.begin('{') {
		return false
	}
	for first := true; ; first = false {
		key, more, ok := d.member(first)
		if !ok {
			return false
		}
		if !more {
			return true
		}
		if !field(key) {
			return false
		}
	}
}

// array decodes a JSON array into *dst, each element with elem: null leaves
// *dst as it is and [] gives an empty, non-nil slice, as encoding/json does.
func array[T any](d *fastReader, dst *[]T, room *spare[T], elem func(*fastReader, *T) bool) bool {
	if d.null() {
		return true
	}
	if !d.begin('[') {
		return false
	}
	out := room.take()
	for first := true; ; first = false {
		more, ok := d.elem(first)
		if !ok {
			return false
		}
		if !more {
			break
		}
		var zero T
		out = append(out, zero)
		if !elem(d, &out[len(out)-1]) {
			return false
		}
	}
	if out == nil {
		out = []T{} // [] with no room left: empty, non-nil
	}
	room.give(out)
	// Capped, so that appending to one array cannot reach the next.
	*dst = out[:len(out):len(out)]
	return true
}

// strings decodes a []string.
func (d *fastReader) strings(dst *[]string) bool {
	return array(d, dst, &d.answerParts().strings, (*fastReader).string)
}

// ints decodes a []int, as array does, into d.nums.
func (d *fastReader) ints(dst *[]int) bool {
	if d.null() {
		return true
	}
	if !d.begin('[') {
		return false
	}
	if d.nums == nil {
		d.nums = make([]int, 0, 16) // never nil: [] gives an empty, non-nil slice
	}
	start := len(d.nums)
	for first := true; ; first = false {
		more, ok := d.elem(first)
		if !ok {
			return false
		}
		if !more {
			break
		}
		var n int
		if !d.int(&n) {
			return false
		}
		d.nums = append(d.nums, n)
	}
	// Capped, so that appending to one highlight cannot reach the next.
	*dst = d.nums[start:len(d.nums):len(d.nums)]
	return true
}

// highlights decodes a [][]int.
func (d *fastReader) highlights(dst *[][]int) bool {
	return array(d, dst, &d.answerParts().highlights, (*fastReader).ints)
}

func (d *fastReader) lines(dst *[]Line) bool {
	return array(d, dst, &d.answerParts().lines, (*fastReader).line)
}

func (d *fastReader) line(dst *Line) bool {
	var seen uint32
	return d.object(func(key string) bool {
		switch key {
		case "key":
			return once(&seen, 1) && d.string(&dst.Key)
		case "value":
			return once(&seen, 2) && d.string(&dst.Value)
		default:
			return d.unknown(key, "key", "value")
		}
	})
}

func (d *fastReader) value(dst *Value) bool {
	var seen uint32
	return d.object(func(key string) bool {
		switch key {
		case "value":
			return once(&seen, 1) && d.string(&dst.Value)
		default:
			return d.unknown(key, "value")
		}
	})
}

// valuePtr decodes a *Value into v: null leaves it nil.
func (d *fastReader) valuePtr(dst **Value, v *Value) bool {
	if d.null() {
		return true
	}
	*dst = v
	return d.value(v)
}

func (d *fastReader) country(dst *Country) bool {
	var seen uint32
	return d.object(func(key string) bool {
		switch key {
		case "language":
			return once(&seen, 1) && d.string(&dst.Language)
		case "value":
			return once(&seen, 2) && d.string(&dst.Value)
		case "iso":
			return once(&seen, 4) && d.string(&dst.ISO)
		default:
			return d.unknown(key, "language", "value", "iso")
		}
	})
}

func (d *fastReader) form(dst *Form) bool {
	var seen uint32
	return d.object(func(key string) bool {
		switch key {
		case "language":
			return once(&seen, 1) && d.string(&dst.Language)
		case "message":
			return once(&seen, 2) && d.message(&dst.Message)
		default:
			return d.unknown(key, "language", "message")
		}
	})
}

func (d *fastReader) message(dst *Message) bool {
	var seen uint32
	return d.object(func(key string) bool {
		switch key {
		case "id":
			return once(&seen, 1) && d.int(&dst.ID)
		case "severity":
			return once(&seen, 2) && d.string(&dst.Severity)
		case "value":
			return once(&seen, 4) && d.string(&dst.Value)
		default:
			return d.unknown(key, "id", "severity", "value")
		}
	})
}

func (d *fastReader) information(dst *Information) bool {
	var seen uint32
	return d.object(func(key string) bool {
		switch key {
		case "status":
			return once(&seen, 1) && d.string(&dst.Status)
		case "matchLevel":
			return once(&seen, 2) && d.string(&dst.MatchLevel)
		case "complete":
			return once(&seen, 4) && d.bool(&dst.Complete)
		case "subBuilding":
			return once(&seen, 8) && d.string(&dst.SubBuilding)
		case "addressLinesAmended":
			return once(&seen, 16) && d.bool(&dst.AddressLinesAmended)
		case "cityAmended":
			return once(&seen, 32) && d.bool(&dst.CityAmended)
		case "regionAmended":
			return once(&seen, 64) && d.bool(&dst.RegionAmended)
		case "postcodeAmended":
			return once(&seen, 128) && d.bool(&dst.PostcodeAmended)
		case "details":
			return once(&seen, 256) && d.details(&dst.Details)
		default:
			return d.unknown(key, "status", "matchLevel", "complete", "subBuilding", "addressLinesAmended",
				"cityAmended", "regionAmended", "postcodeAmended", "details")
		}
	})
}

func (d *fastReader) details(dst *Details) bool {
	var seen uint32
	return d.object(func(key string) bool {
		switch key {
		case "organization":
			return once(&seen, 1) && d.string(&dst.Organization)
		case "street":
			return once(&seen, 2) && d.string(&dst.Street)
		case "addressLines":
			return once(&seen, 4) && d.string(&dst.AddressLines)
		case "subBuildingNumber":
			return once(&seen, 8) && d.string(&dst.SubBuildingNumber)
		case "buildingNumber":
			return once(&seen, 16) && d.string(&dst.BuildingNumber)
		case "city":
			return once(&seen, 32) && d.string(&dst.City)
		case "region":
			return once(&seen, 64) && d.string(&dst.Region)
		case "postcode":
			return once(&seen, 128) && d.string(&dst.Postcode)
		default:
			return d.unknown(key, "organization", "street", "addressLines", "subBuildingNumber",
				"buildingNumber", "city", "region", "postcode")
		}
	})
}

func (d *fastReader) input(dst *InputAddress) bool {
	var seen uint32
	return d.object(func(key string) bool {
		switch key {
		case "lines":
			return once(&seen, 1) && d.lines(&dst.Lines)
		case "city":
			return once(&seen, 2) && d.value(&dst.City)
		case "region":
			return once(&seen, 4) && d.value(&dst.Region)
		case "postcode":
			return once(&seen, 8) && d.value(&dst.Postcode)
		case "country":
			return once(&seen, 16) && d.country(&dst.Country)
		case "label":
			return once(&seen, 32) && d.strings(&dst.Label)
		default:
			return d.unknown(key, "lines", "city", "region", "postcode", "country", "label")
		}
	})
}

func (d *fastReader) address(dst *MatchedAddress) bool {
	var seen uint32
	return d.object(func(key string) bool {
		var ok bool
		switch key {
		case "id":
			ok = once(&seen, 1) && d.string(&dst.ID)
		case "language":
			ok = once(&seen, 2) && d.string(&dst.Language)
		case "charset":
			ok = once(&seen, 4) && d.string(&dst.Charset)
		case "variation":
			ok = once(&seen, 8) && d.string(&dst.Variation)
		case "lines":
			ok = once(&seen, 16) && d.lines(&dst.Lines)
		case "city":
			ok = once(&seen, 32) && d.valuePtr(&dst.City, &d.answerParts().city)
		case "region":
			ok = once(&seen, 64) && d.valuePtr(&dst.Region, &d.answerParts().region)
		case "postcode":
			ok = once(&seen, 128) && d.valuePtr(&dst.Postcode, &d.answerParts().postcode)
		case "country":
			ok = once(&seen, 256)
			if ok && !d.null() {
				dst.Country = &d.answerParts().country
				ok = d.country(dst.Country)
			}
		case "label":
			ok = once(&seen, 512) && d.strings(&dst.Label)
		case "highlights":
			ok = once(&seen, 1024) && d.highlights(&dst.Highlights)
		default:
			ok = d.unknown(key, "id", "language", "charset", "variation", "lines", "city", "region",
				"postcode", "country", "label", "highlights")
		}
		return ok
	})
}

// data decodes data as (*Data).UnmarshalJSON does: members other than
// location keep their raw JSON in Extra.
func (d *fastReader) data(dst *Data) bool {
	var seen uint32
	return d.object(func(key string) bool {
		var ok bool
		switch {
		case key == "location":
			ok = once(&seen, 1)
			if ok && !d.null() {
				dst.Location = &d.answerParts().location
				ok = d.location(dst.Location)
			}
		case foldsTo(key, "location"):
			return false // decodeObject matches it to location too
		default:
			var raw json.RawMessage
			if raw, ok = d.raw(); ok {
				if dst.Extra == nil {
					dst.Extra = make(map[string]json.RawMessage, 4)
				}
				dst.Extra[key] = raw
			}
		}
		return ok
	})
}

func (d *fastReader) location(dst *Location) bool {
	var seen uint32
	return d.members(func(key string) bool {
		var ok bool
		switch key {
		case "latitude":
			ok = once(&seen, 1) && d.float(&dst.Latitude)
		case "longitude":
			ok = once(&seen, 2) && d.float(&dst.Longitude)
		case "crs":
			ok = once(&seen, 4) && d.string(&dst.CRS)
		case "accuracy":
			ok = once(&seen, 8) && d.string(&dst.Accuracy)
		default:
			ok = d.unknown(key, "latitude", "longitude", "crs", "accuracy")
		}
		return ok
	})
}

func (d *fastReader) links(dst *[]Link) bool {
	return array(d, dst, &d.answerParts().links, (*fastReader).link)
}

func (d *fastReader) link(dst *Link) bool {
	var seen uint32
	return d.object(func(key string) bool {
		switch key {
		case "rel":
			return once(&seen, 1) && d.string(&dst.Rel)
		case "href":
			return once(&seen, 2) && d.string(&dst.Href)
		case "title":
			return once(&seen, 4) && d.string(&dst.Title)
		default:
			return d.unknown(key, "rel", "href", "title")
		}
	})
}

// verifyResponse decodes the answer as (*VerifyResponse).UnmarshalJSON does;
// a top-level null is left to it.
func (d *fastReader) verifyResponse(dst *VerifyResponse) bool {
	var seen uint32
	return d.members(func(key string) bool {
		var ok bool
		switch key {
		case "type":
			ok = once(&seen, 1) && d.string(&dst.Type)
		case "action":
			ok = once(&seen, 2) && d.string((*string)(&dst.Action))
		case "form":
			ok = once(&seen, 4) && d.form(&dst.Form)
		case "information":
			ok = once(&seen, 8) && d.information(&dst.Information)
		case "input":
			ok = once(&seen, 16) && d.input(&dst.Input)
		case "address":
			ok = once(&seen, 32) && d.address(&dst.Address)
		case "data":
			ok = once(&seen, 64) && d.data(&dst.Data)
		case "links":
			ok = once(&seen, 128) && d.links(&dst.Links)
		default:
			if foldsTo(key, "type", "action", "form", "information", "input", "address", "data", "links") {
				return false // decodeObject matches it to a named member too
			}
			var raw json.RawMessage
			if raw, ok = d.raw(); ok {
				if dst.Extra == nil {
					dst.Extra = make(map[string]json.RawMessage, 4)
				}
				dst.Extra[key] = raw
			}
		}
		return ok
	})
}
