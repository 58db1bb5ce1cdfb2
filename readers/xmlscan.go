package readers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// xmlTok is the kind of token an xmlScanner returns.
type xmlTok uint8

const (
	tokStart xmlTok = iota + 1 // <name ...> or <name .../>
	tokEnd                     // </name>
	tokOther                   // text, CDATA, comment, processing instruction, declaration
)

var (
	// errTokenTooLong is returned by xmlScanner when one token passes its
	// limit.
	errTokenTooLong = errors.New("XML token too long")
	// errXMLCut is returned by xmlScanner when the input ends inside a tag,
	// comment or CDATA section.
	errXMLCut = errors.New("the XML ends inside a tag")
)

// scanBufSize is the xmlScanner's buffer: tags longer than this are copied
// aside, text of any length streams through it.
const scanBufSize = 64 << 10

// keepMax bounds the text an xmlScanner gathers for the caller: a cell's
// value, an XML declaration.
const keepMax = 1024

// xmlScanner splits XML into tokens keeping nothing but the last tag, so
// that its memory is bounded by its limit whatever the input, unlike
// encoding/xml, which holds a whole text run however long.
//
// It fails, with a *xmlSyntaxError, on what encoding/xml in its strict mode
// (excelize's) fails on: a character outside XML's range or invalid UTF-8
// in text or an attribute value, an unknown entity, "]]>" in text, '<' in
// an attribute value, an attribute without a quoted value, an invalid name,
// an end tag that does not match its start tag. (Names are checked as
// ASCII; processing instructions, comments and declarations are not
// checked.) excelize would stop at such XML without a word.
type xmlScanner struct {
	rd       io.Reader
	rerr     error // the reader's error, met once the buffer is drained
	buf      []byte
	pos, end int   // unread bytes are buf[pos:end]
	base     int64 // input offset of buf[0]
	inTag    bool  // the '<' of the next token has been consumed
	long     []byte

	// limit bounds the bytes of the next token; the caller may change it
	// between tokens.
	limit int64
	// tokStartOff is the input offset of the last token's first byte.
	tokStartOff int64
	// textLen is the length of the last token's character data or CDATA
	// section as written (an entity counts its bytes), 0 for other tokens,
	// and textBlank tells whether it is only XML white space.
	textLen   int64
	textBlank bool
	// teeFrom is the input offset from which consumed bytes are copied to
	// tee, or -1 (see startTee).
	teeFrom int64
	tee     []byte
	// tag is the last start or end tag between < and >, without the / of
	// an end tag or of a self-closing tag. It is valid until the next call.
	tag         []byte
	selfClosing bool
	// local is the last tag's local name, and attrs the last start tag's
	// attributes, by local name.
	local []byte
	attrs []xmlAttr
	// keep asks for character data and CDATA sections to be added to
	// text, which the caller resets: encoding/xml joins them into one
	// value, leaving out comments and processing instructions.
	keep bool
	text kept
	pi   kept // the body of the last processing instruction

	// names holds the names of the open elements, one after the other,
	// and ends where each one ends.
	names []byte
	ends  []int
	// checked skips the checks of names and text, for XML that a scanner
	// has already read without an error (a second pass).
	checked bool
	// foreign is set by an XML declaration of an encoding other than
	// UTF-8, which excelize translates: bytes past ASCII are then taken as
	// they are.
	foreign bool
}

// xmlAttr is an attribute of a start tag: its local name and raw value.
type xmlAttr struct{ name, value []byte }

// xmlSyntaxError is what an xmlScanner fails with on XML that encoding/xml
// would not read.
type xmlSyntaxError struct{ msg string }

func (e *xmlSyntaxError) Error() string { return "malformed XML: " + e.msg }

func syntaxErrorf(format string, args ...any) error {
	return &xmlSyntaxError{fmt.Sprintf(format, args...)}
}

// Bounds of what an xmlScanner keeps of the open elements, far above
// a sheet's (worksheet, sheetData, row, c, is, r, rPr...).
const (
	maxXMLDepth     = 10000 // encoding/xml's bound when decoding
	maxXMLNameBytes = 1 << 20
)

func newXMLScanner(r io.Reader, limit int64) *xmlScanner {
	return &xmlScanner{rd: r, buf: make([]byte, scanBufSize), limit: limit, teeFrom: -1}
}

// offset returns the number of bytes consumed.
func (s *xmlScanner) offset() int64 { return s.base + int64(s.pos) }

// fill moves the unread bytes to the front of the buffer and reads more. It
// reports false when nothing more could be read (rerr tells why).
func (s *xmlScanner) fill() bool {
	if s.rerr != nil {
		return false
	}
	if s.pos > 0 {
		if s.teeFrom >= 0 {
			s.tee = append(s.tee, s.buf[s.teeFrom-s.base:s.pos]...)
			s.teeFrom = s.base + int64(s.pos)
		}
		s.base += int64(s.pos)
		s.end = copy(s.buf, s.buf[s.pos:s.end])
		s.pos = 0
	}
	for range 100 {
		n, err := s.rd.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.rerr = err
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
	s.rerr = io.ErrNoProgress
	return false
}

// cut returns the error for an input that ends inside a token.
func (s *xmlScanner) cut() error {
	if s.rerr == nil || errors.Is(s.rerr, io.EOF) {
		return errXMLCut
	}
	return s.rerr
}

func (s *xmlScanner) isName(n string) bool { return string(s.local) == n }

// attr returns the raw value of the last start tag's attribute whose local
// name is local.
func (s *xmlScanner) attr(local string) ([]byte, bool) {
	for _, a := range s.attrs {
		if string(a.name) == local {
			return a.value, true
		}
	}
	return nil, false
}

// next returns the next token, or io.EOF at the end of the input. A token
// longer than limit is errTokenTooLong, an input that ends inside a tag is
// errXMLCut; errors of the input are returned as they are.
func (s *xmlScanner) next() (xmlTok, error) {
	s.textLen, s.textBlank = 0, true
	if !s.inTag {
		s.tokStartOff = s.offset()
		n, err := s.readText()
		if err != nil {
			return 0, err
		}
		if n > 0 {
			s.textLen = n
			return tokOther, nil
		}
		if !s.inTag {
			if errors.Is(s.rerr, io.EOF) {
				return 0, io.EOF
			}
			return 0, s.rerr
		}
	}
	s.inTag = false
	s.tokStartOff = s.offset() - 1
	return s.readTag()
}

// readText consumes character data up to and including the next '<', or
// to the end of the input.
func (s *xmlScanner) readText() (int64, error) {
	var n int64
	for {
		seg := s.buf[s.pos:s.end]
		i := bytes.IndexByte(seg, '<')
		whole := i >= 0
		if whole {
			seg = seg[:i]
		} else if s.rerr == nil {
			// What may be the start of an entity, of "]]>" or of a
			// character stays for the next look, with more input.
			seg = seg[:textCut(seg)]
		}
		n += int64(len(seg))
		if n > s.limit {
			return n, errTokenTooLong
		}
		if !s.checked {
			if err := checkText(seg, textData, s.foreign); err != nil {
				return n, err
			}
		}
		s.textBlank = s.textBlank && isXMLSpace(seg)
		if s.keep {
			s.text.add(seg)
		}
		s.pos += len(seg)
		if whole {
			s.pos++
			s.inTag = true
			return n, nil
		}
		if !s.fill() && s.pos == s.end {
			return n, nil
		}
	}
}

// isXMLSpace reports whether b is only XML white space.
func isXMLSpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// startTee starts copying the bytes consumed from now on; stopTee returns
// them. The copy is valid until the next startTee.
func (s *xmlScanner) startTee() {
	s.tee, s.teeFrom = s.tee[:0], s.offset()
}

func (s *xmlScanner) stopTee() []byte {
	if s.teeFrom >= 0 {
		s.tee = append(s.tee, s.buf[s.teeFrom-s.base:s.pos]...)
		s.teeFrom = -1
	}
	return s.tee
}

// maxEntity bounds an entity or character reference an xmlScanner
// reads (the longest meaningful one, "&#x10FFFF;", has 10 bytes).
const maxEntity = 64

// textCut returns how much of seg, text that continues past it, can be
// checked now: all but an entity without its ';', up to two ']' that may
// begin "]]>", and a character cut short.
func textCut(seg []byte) int {
	cut := len(seg)
	if a := bytes.LastIndexByte(seg, '&'); a >= 0 && a >= cut-maxEntity && bytes.IndexByte(seg[a:], ';') < 0 {
		cut = a
	}
	for j := 0; j < 2 && cut > 0 && seg[cut-1] == ']'; j++ {
		cut--
	}
	return runeCut(seg, cut)
}

// runeCut moves cut back to the start of a character that seg[:cut] holds
// only part of.
func runeCut(seg []byte, cut int) int {
	for k := 1; k <= utf8.UTFMax-1 && k <= cut; k++ {
		if utf8.RuneStart(seg[cut-k]) {
			if !utf8.FullRune(seg[cut-k : cut]) {
				return cut - k
			}
			break
		}
	}
	return cut
}

// textSpecial marks the bytes checkText must look at.
var textSpecial = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c >= utf8.RuneSelf || c == '&' || c == ']' || c == '<'
	}
	return t
}()

// Kinds of text, for what an xmlScanner checks in them.
type textKind uint8

const (
	textData    textKind = iota // character data
	textAttr                    // an attribute value
	textCDATA                   // a CDATA section: characters only
	textComment                 // a comment: no "--"
	textPI                      // a processing instruction
	textOther                   // a comment in a directive
)

// checkText checks character data, an attribute value or a CDATA section
// as encoding/xml does; bytes past ASCII are not checked when foreign (see
// xmlScanner.foreign).
func checkText(b []byte, kind textKind, foreign bool) error {
	for i := 0; i < len(b); {
		c := b[i]
		if !textSpecial[c] {
			i++
			continue
		}
		switch {
		case kind == textCDATA && (c == '&' || c == ']' || c == '<'):
		case c == '&':
			n, err := checkEntity(b[i:])
			if err != nil {
				return err
			}
			i += n
			continue
		case c == ']':
			if kind == textData && bytes.HasPrefix(b[i:], []byte("]]>")) {
				return syntaxErrorf("unescaped ]]> not in CDATA section")
			}
		case c == '<':
			if kind == textAttr {
				return syntaxErrorf("unescaped < inside quoted string")
			}
		case c < utf8.RuneSelf:
			return syntaxErrorf("illegal character code %U", rune(c))
		case foreign:
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return syntaxErrorf("invalid UTF-8")
			}
			if !inXMLRange(r) {
				return syntaxErrorf("illegal character code %U", r)
			}
			i += size
			continue
		}
		i++
	}
	return nil
}

// checkEntity checks the entity or character reference at the start of b
// (at its '&') as encoding/xml does, returning its length.
func checkEntity(b []byte) (int, error) {
	bad := func() (int, error) {
		// Quote what encoding/xml would: '&', a name or a reference, and
		// the ';' if there is one.
		end := 1
		for end < len(b) && end <= maxEntity && (isNameByte(b[end]) || b[end] == '#' || b[end] >= utf8.RuneSelf) {
			end++
		}
		if end < len(b) && b[end] == ';' {
			return 0, syntaxErrorf("invalid character entity %s", b[:end+1])
		}
		return 0, syntaxErrorf("invalid character entity %s (no semicolon)", b[:end])
	}
	semi := bytes.IndexByte(b[:min(len(b), maxEntity+1)], ';')
	if semi < 0 {
		return bad()
	}
	ent := b[1:semi]
	if len(ent) > 0 && ent[0] == '#' {
		digits, base := string(ent[1:]), 10
		if strings.HasPrefix(digits, "x") {
			digits, base = digits[1:], 16
		}
		// As encoding/xml reads it.
		v, err := strconv.ParseUint(digits, base, 64)
		if err != nil || v > utf8.MaxRune {
			return bad()
		}
		// encoding/xml checks the text the reference stands for; a
		// surrogate stands for U+FFFD.
		if r := rune(v); !inXMLRange(r) && !(0xD800 <= r && r <= 0xDFFF) {
			return 0, syntaxErrorf("illegal character code %U", r)
		}
		return semi + 1, nil
	}
	switch string(ent) {
	case "lt", "gt", "amp", "apos", "quot":
		return semi + 1, nil
	}
	return bad()
}

func inXMLRange(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

// splitName splits a name off the start of b, as encoding/xml reads one,
// and returns its local name too: as in encoding/xml, a prefix counts only
// with a name after it.
func splitName(b []byte) (name, local, rest []byte) {
	i, colon := 0, -1
	for i < len(b) && (b[i] >= utf8.RuneSelf || isNameByte(b[i])) {
		if b[i] == ':' && colon < 0 {
			colon = i
		}
		i++
	}
	name, local = b[:i], b[:i]
	if colon > 0 && colon < i-1 {
		local = b[colon+1 : i]
	}
	return name, local, b[i:]
}

func isNameByte(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '_' || c == ':' || c == '.' || c == '-'
}

// checkName is checkName unless the XML is checked.
func (s *xmlScanner) checkName(name []byte, what string) error {
	if s.checked {
		return nil
	}
	return checkName(name, what)
}

// checkName checks an element or attribute name as encoding/xml does, for
// names in ASCII; other names need only be valid UTF-8.
func checkName(name []byte, what string) error {
	if len(name) == 0 {
		return syntaxErrorf("expected %s name", what)
	}
	colons, ascii := 0, true
	for _, c := range name {
		switch {
		case c == ':':
			colons++
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	c := name[0]
	if colons > 1 || c < utf8.RuneSelf && !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || c == '_' || c == ':') || !ascii && !utf8.Valid(name) {
		return syntaxErrorf("invalid XML name: %s", name)
	}
	return nil
}

// trimSpace drops XML white space from the start of b: bytes.TrimLeft
// builds its set of bytes at every call, and this runs for every attribute.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	return b
}

// trimSpaceRight drops XML white space from the end of b (see trimSpace).
func trimSpaceRight(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}

// parseStartTag reads the attributes of a start tag (between < and > or
// />) into attrs, checking the tag as encoding/xml does, and pushes its
// name on the open elements unless it closes itself.
func (s *xmlScanner) parseStartTag() error {
	s.attrs = s.attrs[:0]
	name, local, rest := splitName(s.tag)
	s.local = local
	if err := s.checkName(name, "element"); err != nil {
		return err
	}
	for {
		rest = trimSpace(rest)
		if len(rest) == 0 {
			break
		}
		var attr, local []byte
		attr, local, rest = splitName(rest)
		if err := s.checkName(attr, "attribute"); err != nil {
			return err
		}
		rest = trimSpace(rest)
		if len(rest) == 0 || rest[0] != '=' {
			return syntaxErrorf("attribute name without = in element")
		}
		rest = trimSpace(rest[1:])
		if len(rest) == 0 || rest[0] != '"' && rest[0] != '\'' {
			return syntaxErrorf("unquoted or missing attribute value in element")
		}
		end := bytes.IndexByte(rest[1:], rest[0])
		if end < 0 {
			return syntaxErrorf("unquoted or missing attribute value in element")
		}
		value := rest[1 : 1+end]
		if !s.checked {
			if err := checkText(value, textAttr, s.foreign); err != nil {
				return err
			}
		}
		s.attrs = append(s.attrs, xmlAttr{local, value})
		rest = rest[end+2:]
	}
	if s.selfClosing {
		return nil
	}
	if len(s.ends) >= maxXMLDepth || len(s.names)+len(name) > maxXMLNameBytes {
		return syntaxErrorf("elements nested too deep")
	}
	s.names = append(s.names, name...)
	s.ends = append(s.ends, len(s.names))
	return nil
}

// parseEndTag reads the name of an end tag and checks it closes the
// element open last.
func (s *xmlScanner) parseEndTag() error {
	name, local, rest := splitName(s.tag)
	s.local = local
	if err := s.checkName(name, "element"); err != nil {
		return err
	}
	if len(rest) > 0 {
		return syntaxErrorf("invalid characters between </%s and >", name)
	}
	n := len(s.ends)
	if n == 0 {
		return syntaxErrorf("unexpected end element </%s>", name)
	}
	start := 0
	if n > 1 {
		start = s.ends[n-2]
	}
	if open := s.names[start:s.ends[n-1]]; !bytes.Equal(open, name) {
		return syntaxErrorf("element <%s> closed by </%s>", open, name)
	}
	s.names, s.ends = s.names[:start], s.ends[:n-1]
	return nil
}

// kept is text gathered for the caller, at most keepMax bytes of it.
type kept struct {
	b    []byte
	over bool // there was more
}

func (k *kept) add(b []byte) {
	if room := keepMax - len(k.b); len(b) > room {
		b, k.over = b[:room], true
	}
	k.b = append(k.b, b...)
}

func (k *kept) reset() { k.b, k.over = k.b[:0], false }

// ensure makes n bytes available at pos, unless the input ends first.
func (s *xmlScanner) ensure(n int) bool {
	for s.end-s.pos < n {
		if !s.fill() {
			return false
		}
	}
	return true
}

func (s *xmlScanner) hasPrefix(p string) bool {
	return s.ensure(len(p)) && string(s.buf[s.pos:s.pos+len(p)]) == p
}

// readTag consumes the rest of a tag, comment, CDATA section or declaration
// whose '<' has been consumed.
func (s *xmlScanner) readTag() (xmlTok, error) {
	s.tag, s.local, s.selfClosing = nil, nil, false
	if !s.ensure(1) {
		return 0, s.cut()
	}
	switch s.buf[s.pos] {
	case '/':
		s.pos++
		if err := s.readBody(false); err != nil {
			return 0, err
		}
		s.tag = trimSpaceRight(s.tag)
		if err := s.parseEndTag(); err != nil {
			return 0, err
		}
		return tokEnd, nil
	case '?':
		return tokOther, s.readInstruction()
	case '!':
		switch {
		case s.hasPrefix("!--"):
			return tokOther, s.readThrough("-->", 3, textComment)
		case s.hasPrefix("![CDATA["):
			return tokOther, s.readThrough("]]>", len("![CDATA["), textCDATA)
		case s.hasPrefix("!-") || s.hasPrefix("!["):
			return 0, syntaxErrorf("invalid sequence after <!")
		default:
			return tokOther, s.readDirective()
		}
	}
	if err := s.readBody(true); err != nil {
		return 0, err
	}
	if n := len(s.tag); n > 0 && s.tag[n-1] == '/' {
		s.tag, s.selfClosing = s.tag[:n-1], true
	}
	if err := s.parseStartTag(); err != nil {
		return 0, err
	}
	return tokStart, nil
}

// readBody consumes a tag up to its '>', skipping '>' in quotes when quotes
// is set. It leaves the tag in tag, without the '>'.
func (s *xmlScanner) readBody(quotes bool) error {
	var quote byte
	scanned := 0 // bytes of buf[pos:] already looked at
	s.long = s.long[:0]
	for {
		for k, c := range s.buf[s.pos+scanned : s.end] {
			switch {
			case quote != 0:
				if c == quote {
					quote = 0
				}
			case c == '>':
				end := s.pos + scanned + k
				if int64(len(s.long)+end-s.pos) > s.limit {
					return errTokenTooLong
				}
				if len(s.long) > 0 {
					s.tag = append(s.long, s.buf[s.pos:end]...)
				} else {
					s.tag = s.buf[s.pos:end]
				}
				s.pos = end + 1
				return nil
			case quotes && (c == '"' || c == '\''):
				quote = c
			}
		}
		scanned = s.end - s.pos
		if int64(len(s.long)+scanned) > s.limit {
			return errTokenTooLong
		}
		if s.pos == 0 && s.end == len(s.buf) {
			// The tag fills the buffer: it continues aside.
			s.long = append(s.long, s.buf[s.pos:s.end]...)
			s.pos, scanned = s.end, 0
		}
		if !s.fill() {
			return s.cut()
		}
	}
}

// readThrough consumes skip bytes, then everything up to and including
// term, gathering what is between as kind says; it checks the characters
// of a CDATA section and that a comment holds no "--".
func (s *xmlScanner) readThrough(term string, skip int, kind textKind) error {
	s.pos += skip
	var n int64
	var prev byte // the last byte consumed
	for {
		seg := s.buf[s.pos:s.end]
		i := bytes.Index(seg, []byte(term))
		if i >= 0 {
			seg = seg[:i]
		} else {
			// The last bytes may begin the terminator, or be part of a
			// character: they stay for the next look.
			seg = seg[:runeCut(seg, max(len(seg)-(len(term)-1), 0))]
		}
		if n += int64(len(seg)); n > s.limit {
			return errTokenTooLong
		}
		switch kind {
		case textCDATA:
			if err := checkText(seg, textCDATA, s.foreign); err != nil {
				return err
			}
			s.textLen = n
			s.textBlank = s.textBlank && isXMLSpace(seg)
			if s.keep {
				s.text.add(seg)
			}
		case textPI:
			s.pi.add(seg)
		case textComment:
			if len(seg) > 0 && (prev == '-' && seg[0] == '-' || bytes.Contains(seg, []byte("--")) || i >= 0 && seg[len(seg)-1] == '-') ||
				len(seg) == 0 && i >= 0 && prev == '-' {
				return syntaxErrorf(`invalid sequence "--" not allowed in comments`)
			}
		}
		if len(seg) > 0 {
			prev = seg[len(seg)-1]
		}
		s.pos += len(seg)
		if i >= 0 {
			s.pos += len(term)
			return nil
		}
		if !s.fill() {
			return s.cut()
		}
	}
}

// getc consumes one byte.
func (s *xmlScanner) getc() (byte, bool) {
	if !s.ensure(1) {
		return 0, false
	}
	s.pos++
	return s.buf[s.pos-1], true
}

// readDirective consumes a <!DOCTYPE ...> or other directive after its
// '<', as encoding/xml does: '>' ends it outside quotes and nested < >, and
// comments inside are skipped. Directives are rare, so bytes are taken one
// by one.
func (s *xmlScanner) readDirective() error {
	var quote byte
	depth := 0
	start := s.offset()
	for {
		b, ok := s.getc()
		if !ok {
			return s.cut()
		}
		if s.offset()-start > s.limit {
			return errTokenTooLong
		}
		switch {
		case quote == 0 && b == '>' && depth == 0:
			return nil
		case quote != 0:
			if b == quote {
				quote = 0
			}
		case b == '\'' || b == '"':
			quote = b
		case b == '>':
			depth--
		case b == '<':
			if s.hasPrefix("!--") {
				if err := s.readThrough("-->", 3, textOther); err != nil {
					return err
				}
				continue
			}
			depth++
		}
	}
}

// readInstruction consumes a processing instruction after its '<'. It
// checks the XML declaration as encoding/xml does: version 1.0,
// and an encoding that is UTF-8 or that excelize can translate, in which
// case bytes past ASCII are no longer checked.
func (s *xmlScanner) readInstruction() error {
	s.pos++ // '?'
	s.pi.reset()
	if err := s.readThrough("?>", 0, textPI); err != nil {
		return err
	}
	target, _, rest := splitName(s.pi.b)
	if err := checkName(target, "target"); err != nil {
		return syntaxErrorf("expected target name after <?")
	}
	if string(target) != "xml" {
		return nil
	}
	if s.pi.over {
		// A declaration this long is not one anything writes; its version
		// and encoding are not checked.
		return nil
	}
	if v := procInst("version", rest); v != "" && v != "1.0" {
		return syntaxErrorf("unsupported version %q; only version 1.0 is supported", v)
	}
	if enc := procInst("encoding", rest); enc != "" && !strings.EqualFold(enc, "utf-8") {
		s.foreign = true
	}
	return nil
}

// procInst returns the value of param in the body of a processing
// instruction, found as encoding/xml finds it: the first "param=" followed
// by a quote.
func procInst(param string, body []byte) string {
	s, param := string(body), param+"="
	for {
		k := strings.Index(s, param)
		if k < 0 || k+len(param) >= len(s) {
			return ""
		}
		q := s[k+len(param)]
		s = s[k+len(param)+1:]
		if q == '\'' || q == '"' {
			v, _, ok := strings.Cut(s, string(q))
			if !ok {
				return ""
			}
			return v
		}
	}
}
