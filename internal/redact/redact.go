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

// Text masks the passwords written in s, whatever their length: the
// password of each URL's user information (scheme://user:PASSWORD@host)
// and the value of each password= or sslpassword= setting (URL parameter
// or key=value, quoted or not). It is the display form of a database URL
// that did not parse, and of a message that quotes one.
func Text(s string) string {
	return maskParams(maskUserinfo(s))
}

// urlEnd ends a URL inside a message: white space, and the quotes that
// Go (%q) and pgx (`...`) put around one.
const urlEnd = " \t\r\n\"`"

// maskUserinfo masks the password of the user information of each URL in
// s: from the first ':' after "://" to the last '@' before the URL ends.
// The last '@', not the first: a password holding an unescaped '@' is
// masked whole, never cut short to show its end as a host.
func maskUserinfo(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		head, rest := s[:i+3], s[i+3:]
		end := strings.IndexAny(rest, urlEnd)
		if end < 0 {
			end = len(rest)
		}
		auth := rest[:end]
		if at := strings.LastIndexByte(auth, '@'); at >= 0 {
			if c := strings.IndexByte(auth[:at], ':'); c >= 0 {
				auth = auth[:c+1] + Mask + auth[at:]
			}
		}
		b.WriteString(head)
		b.WriteString(auth)
		s = rest[end:]
	}
}

// secretKeys are the settings (URL parameters, key=value words) that hold
// a password.
var secretKeys = []string{"sslpassword=", "password="}

// maskParams masks the value of each password= and sslpassword= setting in
// s that starts a word or a URL parameter: up to the next '&' or white
// space or quote, or, quoted with ', to its closing quote.
func maskParams(s string) string {
	var b strings.Builder
	from := 0
	for i := 0; i < len(s); i++ {
		if i > 0 && !strings.ContainsRune("?&; \t\r\n\"`'(", rune(s[i-1])) {
			continue
		}
		for _, key := range secretKeys {
			if len(s)-i < len(key) || !strings.EqualFold(s[i:i+len(key)], key) {
				continue
			}
			v := i + len(key)
			end := v + valueLen(s[v:])
			b.WriteString(s[from:v])
			b.WriteString(Mask)
			from, i = end, end-1
			break
		}
	}
	b.WriteString(s[from:])
	return b.String()
}

// valueLen is the length of the setting's value at the start of s.
func valueLen(s string) int {
	if strings.HasPrefix(s, "'") {
		// A quoted key=value value: \' and \\ are escapes inside it.
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '\'':
				return i + 1
			}
		}
		return len(s)
	}
	if n := strings.IndexAny(s, "&"+urlEnd); n >= 0 {
		return n
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
		if strings.EqualFold(k, "password") || strings.EqualFold(k, "sslpassword") {
			for _, v := range vs {
				out = append(out, v, url.QueryEscape(v))
			}
		}
	}
	return out
}
