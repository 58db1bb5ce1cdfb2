package api

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	jsonv2 "github.com/go-json-experiment/json"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrUnauthorized means the service refused the credentials: createtoken
// answered 401 (a bad API key), or verify answered 401 to a token fetched
// after the request started, so a refresh cannot help. It is KindFatal.
var ErrUnauthorized = errors.New("api: unauthorized")

// ErrInvalidAddress means an Address was not sent because it lacks a
// non-empty line or a country. It is KindPermanent.
var ErrInvalidAddress = errors.New("api: invalid address")

// Kind tells a caller what to do about an error; Classify computes it.
type Kind int

// The kinds of error, modelled on rclone's fs/fserrors.
const (
	// KindNone is the kind of a nil error.
	KindNone Kind = iota
	// KindTransient errors may succeed if retried: 5xx answers, timeouts,
	// connection resets, truncated or non-JSON bodies, and anything not
	// recognised.
	KindTransient
	// KindRateLimited errors are 429 answers: wait (see RateLimitedError)
	// and retry without counting it as a failed attempt.
	KindRateLimited
	// KindPermanent errors are about the address itself (400, 413, 422,
	// ErrInvalidAddress): retrying cannot help, but other rows may succeed.
	KindPermanent
	// KindFatal errors stop a run: refused credentials, 403, a wrong base
	// URL (404, 405, redirects), an unusable createtoken answer, TLS
	// certificate failures and context.Canceled.
	KindFatal
)

// String returns the kind's name in lower case.
func (k Kind) String() string {
	switch k {
	case KindNone:
		return "none"
	case KindTransient:
		return "transient"
	case KindRateLimited:
		return "rate-limited"
	case KindPermanent:
		return "permanent"
	case KindFatal:
		return "fatal"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Classify returns the Kind of err. It looks through wrapping, so an error
// returned by the Client keeps its kind when a caller adds context with %w.
func Classify(err error) Kind {
	if err == nil {
		return KindNone
	}
	// Cancellation is the caller stopping the run; it wins over whatever
	// the cancelled request happened to be doing.
	if errors.Is(err, context.Canceled) {
		return KindFatal
	}
	if errors.Is(err, ErrUnauthorized) {
		return KindFatal
	}
	if errors.Is(err, ErrInvalidAddress) {
		return KindPermanent
	}
	if ke, ok := errors.AsType[*scrubbedError](err); ok && ke.kind != KindNone {
		return ke.kind
	}
	if _, ok := errors.AsType[*RateLimitedError](err); ok {
		return KindRateLimited
	}
	if se, ok := errors.AsType[*StatusError](err); ok {
		return statusKind(se.StatusCode)
	}
	if isCertificateError(err) {
		return KindFatal
	}
	// Timeouts, resets, EOFs and everything unknown: worth another try.
	return KindTransient
}

func statusKind(code int) Kind {
	switch {
	case code == http.StatusTooManyRequests:
		return KindRateLimited
	case code == http.StatusRequestTimeout, code == http.StatusTooEarly:
		return KindTransient
	case code == http.StatusBadRequest, code == http.StatusRequestEntityTooLarge,
		code == http.StatusUnprocessableEntity, code == http.StatusRequestURITooLong,
		code == http.StatusRequestHeaderFieldsTooLarge:
		return KindPermanent
	case code == http.StatusUnauthorized, code == http.StatusPaymentRequired,
		code == http.StatusForbidden, code == http.StatusNotFound,
		code == http.StatusMethodNotAllowed, code == http.StatusNotAcceptable,
		code == http.StatusProxyAuthRequired, code == http.StatusGone,
		code == http.StatusUnsupportedMediaType:
		// The request can never work as configured: wrong key, base URL
		// or method. Every row would fail the same way.
		return KindFatal
	case code >= 300 && code < 400:
		// Redirects are not followed (a POST would lose its body, a GET
		// would carry the token elsewhere): the base URL is wrong.
		return KindFatal
	case code == http.StatusNotImplemented, code == http.StatusHTTPVersionNotSupported:
		return KindFatal
	case code >= 500:
		return KindTransient
	case code >= 400:
		// Other client errors are blamed on the row, not the run.
		return KindPermanent
	}
	return KindTransient
}

func isCertificateError(err error) bool {
	var (
		unknownAuthority x509.UnknownAuthorityError
		invalid          x509.CertificateInvalidError
		hostname         x509.HostnameError
		verification     *tls.CertificateVerificationError
	)
	return errors.As(err, &unknownAuthority) || errors.As(err, &invalid) ||
		errors.As(err, &hostname) || errors.As(err, &verification)
}

// StatusError is an HTTP answer the client could not use, with the message
// of the service's error envelope when the body carried one.
type StatusError struct {
	// Op is the endpoint that answered: "createtoken" or "verify".
	Op string
	// StatusCode is the HTTP status code.
	StatusCode int
	// Message is form.message.value of the error envelope, or empty.
	Message string
	// MessageID is form.message.id of the envelope, for diagnostics only:
	// the client never branches on it.
	MessageID int
	// RetryAfter is the answer's Retry-After (a 503 may carry one), or 0.
	RetryAfter time.Duration
	// Location is where a redirect pointed (scheme, host and path only).
	Location string
}

// Error describes the status and the service's message.
func (e *StatusError) Error() string {
	s := "api: " + e.Op + ": HTTP " + strconv.Itoa(e.StatusCode)
	if t := http.StatusText(e.StatusCode); t != "" {
		s += " " + t
	}
	if e.Location != "" {
		s += " (redirected to " + e.Location + ": check the base URL)"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// RateLimitedError is a 429 answer. Wait RetryAfter (0 when the answer did
// not say) before the next request; the row itself is fine.
type RateLimitedError struct {
	// RetryAfter is parsed from the Retry-After header, given in seconds
	// or as an HTTP date; 0 if absent or unparsable.
	RetryAfter time.Duration
	// Status is the answer itself.
	Status *StatusError
}

// Error describes the limit and the wait.
func (e *RateLimitedError) Error() string {
	op, msg := "verify", ""
	if e.Status != nil {
		op, msg = e.Status.Op, e.Status.Message
	}
	s := "api: " + op + ": rate limited (HTTP 429)"
	if e.RetryAfter > 0 {
		s += ", retry after " + e.RetryAfter.String()
	}
	if msg != "" {
		s += ": " + msg
	}
	return s
}

// Unwrap returns the StatusError of the answer.
func (e *RateLimitedError) Unwrap() error {
	if e.Status == nil {
		return nil
	}
	return e.Status
}

// authError is ErrUnauthorized together with the answer that caused it.
type authError struct {
	why    string
	status *StatusError
}

func (e *authError) Error() string {
	s := "api: " + e.status.Op + ": unauthorized: " + e.why
	if e.status.Message != "" {
		s += " (HTTP " + strconv.Itoa(e.status.StatusCode) + ": " + e.status.Message + ")"
	}
	return s
}

func (e *authError) Unwrap() []error { return []error{ErrUnauthorized, e.status} }

// envelope is the error body decided in DESIGN.md.
type envelope struct {
	Type string `json:"type"`
	Form struct {
		Message Message `json:"message"`
	} `json:"form"`
}

// newStatusError builds the error of a non-success answer from its body,
// which may be anything (an HTML page from a proxy, nothing, an envelope).
func newStatusError(op string, resp *http.Response, body []byte, now time.Time) *StatusError {
	se := &StatusError{Op: op, StatusCode: resp.StatusCode}
	var env envelope
	if jsonv2.Unmarshal(body, &env, wireOptions) == nil {
		se.Message = strings.TrimSpace(env.Form.Message.Value)
		se.MessageID = env.Form.Message.ID
	}
	se.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), now)
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		if loc, err := resp.Location(); err == nil {
			// Only where it points: a redirect of a GET repeats the query,
			// and the query holds the token.
			loc.RawQuery, loc.Fragment, loc.User = "", "", nil
			se.Location = loc.String()
		}
	}
	return se
}

// maxRetryAfter keeps a huge Retry-After from overflowing a Duration.
const maxRetryAfter = time.Duration(math.MaxInt64)

// parseRetryAfter reads a Retry-After value given as delay seconds or as an
// HTTP date; it returns 0 when the value is absent, unparsable or past.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		switch {
		case math.IsNaN(secs) || secs <= 0:
			return 0
		case secs >= float64(maxRetryAfter/time.Second):
			return maxRetryAfter
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// isTruncation reports errors that mean the body stopped early.
func isTruncation(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed)
}

// describeCause names an error cause the way a user reads it, without
// repeating what the op and URL already said.
func describeCause(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out: " + err.Error()
	case isTruncation(err):
		return "connection closed early: " + err.Error()
	}
	return err.Error()
}

// scrubbedError carries a cause whose text has been cleaned of secrets.
// kind, when set, is a Kind that the cause alone would not imply (an
// unusable createtoken body is fatal, an unusable verify body transient).
type scrubbedError struct {
	kind Kind
	msg  string
	err  error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// minScrubLen is the shortest secret scrubbed from text: shorter strings
// would mangle ordinary words and numbers, and real keys and tokens are long.
const minScrubLen = 4

// scrub replaces every secret in s with [REDACTED]: raw, query-escaped, and
// escaped as in the JSON pointer of a decoding error (a member name).
func scrub(s string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) < minScrubLen {
			continue
		}
		for _, form := range [...]string{sec, url.QueryEscape(sec), pointerEscaper.Replace(sec)} {
			s = strings.ReplaceAll(s, form, redacted)
		}
	}
	return s
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// fmtErr formats an error message and scrubs it; the cause stays reachable
// for errors.Is and errors.As.
func fmtErr(cause error, secrets []string, format string, args ...any) error {
	return kindErr(KindNone, cause, secrets, format, args...)
}

// kindErr is fmtErr for an error of the given Kind, whatever its cause.
func kindErr(kind Kind, cause error, secrets []string, format string, args ...any) error {
	return &scrubbedError{kind: kind, msg: scrub(fmt.Sprintf(format, args...), secrets...), err: cause}
}
