package gazetteer

import (
	"strings"
)

// routingKeys are the 139 Eircode routing keys. An Eircode whose first three
// characters are not one of them is not an Eircode, however well formed.
var routingKeys = [...]string{
	"A41", "A42", "A45", "A63", "A67", "A75", "A81", "A82", "A83", "A84",
	"A85", "A86", "A91", "A92", "A94", "A96", "A98", "C15", "D01", "D02",
	"D03", "D04", "D05", "D06", "D6W", "D07", "D08", "D09", "D10", "D11",
	"D12", "D13", "D14", "D15", "D16", "D17", "D18", "D20", "D22", "D24",
	"E21", "E25", "E32", "E34", "E41", "E45", "E53", "E91", "F12", "F23",
	"F26", "F28", "F31", "F35", "F42", "F45", "F52", "F56", "F91", "F92",
	"F93", "F94", "H12", "H14", "H16", "H18", "H23", "H53", "H54", "H62",
	"H65", "H71", "H91", "K32", "K34", "K36", "K45", "K56", "K67", "K78",
	"N37", "N39", "N41", "N91", "P12", "P14", "P17", "P24", "P25", "P31",
	"P32", "P36", "P43", "P47", "P51", "P56", "P61", "P67", "P72", "P75",
	"P81", "P85", "R14", "R21", "R32", "R35", "R42", "R45", "R51", "R56",
	"R93", "R95", "T12", "T23", "T34", "T45", "T56", "V14", "V15", "V23",
	"V31", "V35", "V42", "V92", "V93", "V94", "V95", "W12", "W23", "W34",
	"W91", "X35", "X42", "X91", "Y14", "Y21", "Y25", "Y34", "Y35",
}

var routingKeySet = func() map[string]bool {
	m := make(map[string]bool, len(routingKeys))
	for _, k := range routingKeys {
		m[k] = true
	}
	return m
}()

// PostcodeKind tells which postcode system a postcode belongs to.
type PostcodeKind int

// Postcode kinds.
const (
	NoPostcode PostcodeKind = iota
	Eircode
	UKPostcode
)

// compactUpper upper-cases ASCII letters and drops spaces, so "d02 x285" and
// "D02X285" compare equal, writing into buf; it gives up (returns nil) on
// anything that cannot be part of a postcode, which keeps the parsers cheap
// on ordinary words.
func compactUpper(buf *[16]byte, s string) []byte {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			continue
		case c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		default:
			return nil
		}
		if n == len(buf) {
			return nil
		}
		buf[n] = c
		n++
	}
	return buf[:n]
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'A' && c <= 'Z' }

// eircodeIDChar reports whether c may appear in the unique identifier of an
// Eircode: digits and the letters A C D E F H K N P R T V W X Y.
func eircodeIDChar(c byte) bool {
	return isDigit(c) || strings.IndexByte("ACDEFHKNPRTVWXY", c) >= 0
}

// ParseEircode returns the canonical form of an Eircode ("D02 X285": routing
// key, one space, unique identifier) written with any case and spacing; ok is
// false unless the routing key is one of the 139 and the identifier is valid.
func ParseEircode(s string) (canonical string, ok bool) {
	var buf [16]byte
	c := compactUpper(&buf, s)
	if len(c) != 7 || !routingKeySet[string(c[:3])] {
		return "", false
	}
	for i := 3; i < 7; i++ {
		if !eircodeIDChar(c[i]) {
			return "", false
		}
	}
	return string(c[:3]) + " " + string(c[3:]), true
}

// ParseUKPostcode returns the canonical form of a UK postcode ("SW1A 1AA":
// outward code, one space, inward code) written with any case and spacing;
// ok is false when it does not have the shape of a UK postcode.
func ParseUKPostcode(s string) (canonical string, ok bool) {
	var buf [16]byte
	c := compactUpper(&buf, s)
	n := len(c)
	if n < 5 || n > 7 {
		return "", false
	}
	if string(c) == "GIR0AA" {
		return "GIR 0AA", true
	}
	out, in := c[:n-3], c[n-3:]
	if !isDigit(in[0]) || !ukInwardLetter(in[1]) || !ukInwardLetter(in[2]) {
		return "", false
	}
	if !ukOutward(string(out)) {
		return "", false
	}
	return string(out) + " " + string(in), true
}

// ukInwardLetter excludes C I K M O V, which the inward code never uses.
func ukInwardLetter(c byte) bool {
	return isLetter(c) && strings.IndexByte("CIKMOV", c) < 0
}

// ukOutward checks the outward code shapes A9, A99, AA9, AA99, A9A and AA9A
// with the letter rules of the first two positions.
func ukOutward(o string) bool {
	if len(o) < 2 || len(o) > 4 || !isLetter(o[0]) || strings.IndexByte("QVX", o[0]) >= 0 {
		return false
	}
	i := 1
	if isLetter(o[1]) {
		if strings.IndexByte("IJZ", o[1]) >= 0 {
			return false
		}
		i = 2
	}
	if i >= len(o) || !isDigit(o[i]) {
		return false
	}
	rest := o[i+1:]
	switch len(rest) {
	case 0:
		return true
	case 1:
		return isDigit(rest[0]) || isLetter(rest[0])
	}
	return false
}

// ParsePostcode recognises s as an Eircode or a UK postcode and returns its
// canonical form and kind; kind is NoPostcode when it is neither.
func ParsePostcode(s string) (canonical string, kind PostcodeKind) {
	if c, ok := ParseEircode(s); ok {
		return c, Eircode
	}
	if c, ok := ParseUKPostcode(s); ok {
		return c, UKPostcode
	}
	return "", NoPostcode
}

// PostcodeArea returns the coarse blocking key of a canonical postcode: the
// routing key of an Eircode, the outward code (district) of a UK postcode.
func PostcodeArea(canonical string) string {
	if i := strings.IndexByte(canonical, ' '); i > 0 {
		return canonical[:i]
	}
	return ""
}

// foundPostcode is a postcode found inside a line of text: its canonical
// form and where it was, so the rest of the line can still be matched.
type foundPostcode struct {
	canonical string
	kind      PostcodeKind
	start     int // byte offsets into the line
	end       int
}

// findPostcode looks for an Eircode or UK postcode in a line, as one word or
// as two adjacent words ("D02 X285", "sw1a 1aa"). Words are separated by
// spaces and commas; the last match wins because postcodes come last.
func findPostcode(line string) (foundPostcode, bool) {
	type word struct{ s, e int }
	var words [24]word
	n := 0
	i := 0
	for i < len(line) && n < len(words) {
		for i < len(line) && isPostcodeSep(line[i]) {
			i++
		}
		if i >= len(line) {
			break
		}
		s := i
		for i < len(line) && !isPostcodeSep(line[i]) {
			i++
		}
		words[n] = word{s, i}
		n++
	}
	for k := n - 1; k >= 0; k-- {
		w := words[k]
		if k+1 < n {
			w2 := words[k+1]
			if l1, l2 := w.e-w.s, w2.e-w2.s; l1 >= 2 && l1 <= 4 && l2 >= 3 && l2 <= 4 {
				if c, kind := ParsePostcode(line[w.s:w2.e]); kind != NoPostcode {
					return foundPostcode{c, kind, w.s, w2.e}, true
				}
			}
		}
		if l := w.e - w.s; l >= 5 && l <= 8 {
			if c, kind := ParsePostcode(line[w.s:w.e]); kind != NoPostcode {
				return foundPostcode{c, kind, w.s, w.e}, true
			}
		}
	}
	return foundPostcode{}, false
}

func isPostcodeSep(c byte) bool {
	return c == ' ' || c == ',' || c == '\t' || c == ';' || c == '.' || c == '\n' || c == '\r'
}

// dublinDistrictKey maps a postal district written as "Dublin 2", "Dublin
// 06", "D2", "D02", "Dublin 6W" (already tokenised and folded) to the
// canonical town key "dublin 2"/"dublin 6w"; ok is false otherwise.
func dublinDistrictKey(num string) (string, bool) {
	num = strings.TrimLeft(num, "0")
	// The routing keys say which districts exist: D01 to D24 and D6W.
	rk := "D" + strings.ToUpper(num)
	if len(num) == 1 {
		rk = "D0" + num
	}
	if !routingKeySet[rk] {
		return "", false
	}
	return "dublin " + num, true
}
