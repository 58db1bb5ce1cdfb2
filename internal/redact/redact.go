package redact

import (
	"net/url"
	"strings"
)

// Mask is what a password is replaced by.
const Mask = "xxxxx"

// minBare is the shortest secret Scrub replaces wherever it appears. A
// shorter one ("a", "ab") is a piece of every other word: it is hidden
// where it can be told from text, in the password places of the URLs and
// key=value settings a driver quotes (Text), and nowhere else.
const minBare = 3

// Scrub returns err with the passwords of every database URL and
// password=... setting in its text masked (Text), and every other
// occurrence of the secrets of 3 bytes or more replaced by Mask; errors.Is
// and errors.As still see the original.
func Scrub(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := Text(msg)
	for _, s := range secrets {
		if len(s) >= minBare {
			clean = strings.ReplaceAll(clean, s, Mask)
		}
	}
	if clean == msg {
		return err
	}
	return &scrubbed{msg: clean, err: err}
}

type scrubbed struct {
	msg string
	err error
}

func (s *scrubbed) Error() string { return s.msg }

// Unwrap keeps errors.Is working; the wrapped error's own text is not shown
// by the callers of Scrub.
func (s *scrubbed) Unwrap() error { return s.err }

// Text masks the passwords written in s, whatever their length and
// however s quotes them (Go's %q, pgx's `...`, parentheses, brackets):
//
//   - the password of each URL's user information: in scheme://AUTHORITY,
//     where the authority runs to the next '/', '?' or '#', from the first
//     ':' to the last '@' of it (the last, not the first: a password holding
//     an unescaped '@', a space or a quote is masked whole, never cut short
//     to show its end as a host);
//   - the value of each password, sslpassword or pgpassword setting (any
//     case; letters may be percent-encoded: pass%77ord) that follows the
//     start of s or a character that is not a letter, digit or '_', with
//     optional spaces or tabs around its '=':
//     a value quoted with ' or " to its closing quote, else to the next
//     '&' or white space or closing quote or bracket; a backslash escapes
//     the character after it.
//
// It is the display form of a database URL that did not parse, and of a
// message that quotes one.
func Text(s string) string {
	return maskSettings(maskUserinfo(s))
}

// maskUserinfo masks the password of the user information of each URL in s.
func maskUserinfo(s string) string {
	var b strings.Builder
	from := 0
	for i := 0; ; {
		j := strings.Index(s[i:], "://")
		if j < 0 {
			break
		}
		start := i + j + len("://")
		end := len(s)
		if n := strings.IndexAny(s[start:], "/?#"); n >= 0 {
			end = start + n
		}
		auth := s[start:end]
		if at := strings.LastIndexByte(auth, '@'); at >= 0 {
			// A ':' after an '@' is a port, or a password after a user
			// holding an '@': the latter has no white space up to the last
			// '@', the former may be followed by prose quoting an e-mail
			// address, which must stay readable ("postgres://u@h: ... ann@x").
			if c := strings.IndexByte(auth[:at], ':'); c >= 0 &&
				!(strings.IndexByte(auth[:c], '@') >= 0 && strings.ContainsAny(auth[c:at], " \t\r\n")) {
				b.WriteString(s[from : start+c+1])
				b.WriteString(Mask)
				from = start + at
			}
		}
		// The next URL may begin with the authority's last ':'
		// ("postgres://u:a@h and postgres://v:b@k": this authority ends at
		// the next "//"); from stays before it, at most at the last '@'.
		i = max(end-1, start)
	}
	if from == 0 {
		return s
	}
	b.WriteString(s[from:])
	return b.String()
}

// secretKeys are the settings (URL parameters, key=value words, the
// environment's PGPASSWORD) that hold a password, in lower case.
var secretKeys = []string{"sslpassword", "pgpassword", "password"}

// SecretKey reports whether k, a URL parameter's or a setting's name, holds
// a password.
func SecretKey(k string) bool {
	for _, key := range secretKeys {
		if strings.EqualFold(k, key) {
			return true
		}
	}
	return false
}

// maskSettings masks the value of each secret setting in s.
func maskSettings(s string) string {
	var b strings.Builder
	from := 0
	for i := 0; i < len(s); i++ {
		if i > 0 && isWord(s[i-1]) {
			continue
		}
		k, ok := keyEnd(s, i)
		if !ok {
			continue
		}
		v, ok := afterEquals(s, k)
		if !ok {
			continue
		}
		end := v + valueLen(s[v:])
		b.WriteString(s[from:v])
		b.WriteString(Mask)
		from, i = end, end-1
	}
	if from == 0 {
		return s
	}
	b.WriteString(s[from:])
	return b.String()
}

// keyEnd returns where a secret setting's name that starts at s[i] ends.
// A letter of the name may be percent-encoded, as URL parameters may be
// (pass%77ord is password to pgx and net/url).
func keyEnd(s string, i int) (int, bool) {
next:
	for _, key := range secretKeys {
		j := i
		for k := 0; k < len(key); k++ {
			switch {
			case j < len(s) && lower(s[j]) == key[k]:
				j++
			case j+2 < len(s) && s[j] == '%' && ishex(s[j+1]) && ishex(s[j+2]) && lower(unhex(s[j+1])<<4|unhex(s[j+2])) == key[k]:
				j += 3
			default:
				continue next
			}
		}
		return j, true
	}
	return 0, false
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func ishex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= lower(c) && lower(c) <= 'f' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return lower(c) - 'a' + 10
}

// afterEquals returns where the value of a setting whose name ends at i
// starts: after optional spaces or tabs, an '=', and optional spaces or
// tabs. ok is false when no '=' follows the name ("password reset").
func afterEquals(s string, i int) (int, bool) {
	i = skipBlanks(s, i)
	if i == len(s) || s[i] != '=' {
		return 0, false
	}
	return skipBlanks(s, i+1), true
}

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

func isWord(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// closers end a quoted or bracketed text that holds a setting.
const closers = "\"'`)]}>"

// closes reports whether a quote or bracket followed by rest closes the
// text around a value rather than being part of it: it is followed by the
// end, white space, another closer, '&' or punctuation.
func closes(rest string) bool {
	return rest == "" || isSpace(rest[0]) || strings.IndexByte(closers+"&:;,.", rest[0]) >= 0
}

// valueLen is the length of the setting's value at the start of s.
func valueLen(s string) int {
	if s != "" && (s[0] == '\'' || s[0] == '"') {
		// Quoted: to the closing quote. A quote followed by a letter is
		// inside the value: a %q-escaped \' doubles its backslash.
		for i := 1; i < len(s); i++ {
			switch {
			case s[i] == '\\':
				i++
			case s[i] == s[0] && closes(s[i+1:]):
				return i + 1
			}
		}
		return len(s)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\': // libpq's escape, and %q's \"
			i++
		case c == '&' || isSpace(c):
			return i
		case strings.IndexByte(closers, c) >= 0 && closes(s[i+1:]):
			return i
		}
	}
	return len(s)
}

// URLPasswords returns the passwords written in a database URL (its user
// information and its password and sslpassword parameters), as written and
// escaped, for Scrub.
func URLPasswords(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var out []string
	if p, ok := u.User.Password(); ok && p != "" {
		out = append(out, p, url.QueryEscape(p), url.PathEscape(p))
	}
	for k, vs := range u.Query() {
		if SecretKey(k) {
			for _, v := range vs {
				out = append(out, v, url.QueryEscape(v))
			}
		}
	}
	return out
}
