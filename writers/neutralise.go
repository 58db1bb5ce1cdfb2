package writers

import "strconv"

// A spreadsheet that opens a CSV file, or a user who edits an XLSX cell,
// reads text starting with one of these as a formula (OWASP "CSV
// injection"), so such cells get a leading apostrophe, which spreadsheets
// show as text.
func formulaLike(s string) bool {
	if s == "" {
		return false
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
	default:
		return false
	}
	return !plainNumber(s)
}

// plainNumber reports whether s is a number a spreadsheet reads as a number:
// strconv.ParseFloat accepts it and it is written only with digits, signs,
// '.', 'e' and 'E'. The character check keeps out what ParseFloat also
// accepts but a spreadsheet reads as a name ("-Inf", "+NaN", hex floats,
// digit separators), so "-12.5" and "+1e3" stay as they are and "-Inf" is
// quoted.
func plainNumber(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '+', c == '-', c == '.', c == 'e', c == 'E':
		default:
			return false
		}
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// neutralise returns s with a leading ' when a spreadsheet would read it as
// a formula.
func neutralise(s string) string {
	if formulaLike(s) {
		return "'" + s
	}
	return s
}
