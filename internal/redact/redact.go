package redact

import (
	"net/url"
	"strings"
)

// Scrub returns err with every occurrence of the secrets (of 3 bytes or
// more) replaced by xxxxx; errors.Is and errors.As still see the original.
func Scrub(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := msg
	for _, s := range secrets {
		if len(s) >= 3 {
			clean = strings.ReplaceAll(clean, s, "xxxxx")
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
