package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	jsonv2 "github.com/go-json-experiment/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// Default settings of a Client.
const (
	// DefaultTimeout bounds each HTTP request of the default HTTP client.
	DefaultTimeout = 30 * time.Second
	// DefaultUserAgent is sent unless WithUserAgent says otherwise.
	DefaultUserAgent = "addrclean-api/1 (+https://github.com/addrclean/addrclean)"
	// maxBody bounds how much of an answer is read; a verify answer is a
	// few kilobytes.
	maxBody = 4 << 20
)

// Client calls the token and verify endpoints of one service with one API
// key. It is safe for concurrent use; all goroutines share one token.
type Client struct {
	base      string   // without trailing slash
	baseShown string   // base for messages: any user info redacted
	auth      Secret   // "Basic ..." header value
	secrets   []Secret // the key in every form it could be echoed in
	hc        *http.Client
	userAgent string
	method    string
	log       zerolog.Logger

	tokens *tokenSource
	stats  clientStats

	// The header values of a verify request, shared by every request:
	// net/http only reads them.
	hdrUA []string

	// tokParam caches the escaped token parameter of the current token.
	tokParam atomic.Pointer[tokenParam]
}

// tokenParam holds what is made of a token once for all the requests
// that use it: the parameter "token=<escaped token>&" and the forms
// redaction looks for.
type tokenParam struct {
	tok, param Secret
	forms      []string
}

var (
	hdrAccept = []string{"application/json"}
	hdrForm   = []string{"application/x-www-form-urlencoded"}
)

// Option configures a Client in New.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (timeouts, proxy, TLS). The default
// has a DefaultTimeout timeout, keeps enough idle connections for many
// workers, and does not follow redirects; a client given here should not
// follow them either (set CheckRedirect to return http.ErrUseLastResponse),
// or a redirected GET carries the token to wherever it points.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.hc = hc
		}
	}
}

// WithUserAgent sets the User-Agent header of every request.
func WithUserAgent(ua string) Option {
	return func(c *Client) { c.userAgent = ua }
}

// WithMethod sets the HTTP method of verify requests: http.MethodPost (the
// default) sends the token and the address form-encoded in the body, where
// proxies do not log it; http.MethodGet sends them in the URL query.
func WithMethod(method string) Option {
	return func(c *Client) { c.method = strings.ToUpper(method) }
}

// WithTokenLifetime tells the client how long a token lives, so it fetches
// a new one a little before that age (a tenth of the lifetime, at most a
// minute, early) instead of waiting for a 401. Zero turns this off.
func WithTokenLifetime(d time.Duration) Option {
	return func(c *Client) { c.tokens.lifetime = max(d, 0) }
}

// WithLogger sets the logger; the client logs a debug line when it creates
// or refreshes a token, never the token or the key.
func WithLogger(l zerolog.Logger) Option {
	return func(c *Client) { c.log = l }
}

// New returns a Client for the service at baseURL (for example
// "https://api.example.com"; the endpoints are baseURL+"/3.0/...") that
// authenticates with key. It makes no request: the first Verify fetches the
// token.
func New(baseURL string, key Secret, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		// url.Parse quotes the input, which may carry user info.
		return nil, errors.New("api: base URL does not parse")
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("api: base URL %q: want http:// or https:// and a host", u.Redacted())
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("api: base URL %q: must not have a query or fragment", u.Redacted())
	}
	if strings.TrimSpace(key.Reveal()) == "" {
		return nil, errors.New("api: no API key")
	}
	basic := base64.StdEncoding.EncodeToString([]byte(key.Reveal() + ":"))
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	c := &Client{
		base:      u.String(),
		baseShown: u.Redacted(),
		auth:      Secret("Basic " + basic),
		secrets:   []Secret{key, Secret(basic)},
		hc:        NewHTTPClient(64, DefaultTimeout),
		userAgent: DefaultUserAgent,
		method:    http.MethodPost,
		log:       zerolog.Nop(),
	}
	c.tokens = &tokenSource{fetch: c.createToken, stats: &c.stats}
	for _, o := range opts {
		o(c)
	}
	if c.method != http.MethodPost && c.method != http.MethodGet {
		return nil, fmt.Errorf("api: method %q: want GET or POST", c.method)
	}
	c.tokens.log = c.log
	c.hdrUA = []string{c.userAgent}
	return c, nil
}

// NewHTTPClient returns an http.Client fit for the service: idle connections
// kept for maxIdle concurrent callers (the default of 2 per host makes every
// caller beyond the second open a new connection per request), the given
// overall timeout (0 for none, when the caller bounds each request with its
// context), and redirects refused, since a redirect would carry the token to
// wherever it points; the client reports the 3xx as a wrong base URL.
func NewHTTPClient(maxIdle int, timeout time.Duration) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = max(tr.MaxIdleConns, maxIdle)
	tr.MaxIdleConnsPerHost = maxIdle
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// String describes the client by its base URL and method, never its key.
func (c *Client) String() string {
	return "api.Client{" + c.method + " " + c.baseShown + "}"
}

// Format prints String for every verb. Without it %+v would walk the
// unexported fields, and fmt does not call Secret's methods on unexported
// fields: the key would print in full.
func (c *Client) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, c.String()) }

// ClientStats counts the requests of a Client, for a run's summary.
type ClientStats struct {
	// TokenRequests is the number of createtoken requests sent.
	TokenRequests int64
	// TokenRefreshes is the number of tokens replaced by a new one (after
	// a 401 or ahead of the lifetime hint); the first token is not one.
	TokenRefreshes int64
	// VerifyRequests is the number of verify requests sent, retries
	// included.
	VerifyRequests int64
	// TokenRetries is the number of verify requests repeated with a new
	// token after a 401.
	TokenRetries int64
}

type clientStats struct {
	tokenRequests, tokenRefreshes, verifyRequests, tokenRetries atomic.Int64
}

// Stats returns the counts so far.
func (c *Client) Stats() ClientStats {
	return ClientStats{
		TokenRequests:  c.stats.tokenRequests.Load(),
		TokenRefreshes: c.stats.tokenRefreshes.Load(),
		VerifyRequests: c.stats.verifyRequests.Load(),
		TokenRetries:   c.stats.tokenRetries.Load(),
	}
}

// Verify sends one address to the verify endpoint and returns the answer,
// whatever its action. The answer holds no trace of the token, even from a
// service that echoes the request: token parameters are removed from the
// links and any other occurrence of the token reads "[REDACTED]".
//
// The address must have a non-empty line and a country, or the error wraps
// ErrInvalidAddress and nothing is sent. A 401 makes the client refresh the
// shared token (once, however many requests got one) and retry once; a 401
// to a token fetched after Verify was called wraps ErrUnauthorized. Other
// failures are a *StatusError, a *RateLimitedError or a transport error;
// Classify tells what to do about any of them.
func (c *Client) Verify(ctx context.Context, a Address) (*VerifyResponse, error) {
	resp, _, err := c.verify(ctx, a, false)
	return resp, err
}

// VerifyAnswer is Verify that also returns the answer's JSON when the
// service's body is it: a body that decoded to the answer with nothing
// redacted, which DecodeVerifyResponse gives back as the same answer. It
// is nil otherwise (the caller encodes the answer with
// AppendVerifyResponse). A run that stores answers (its journal, cache and
// dedup spill) thus keeps the bytes it read instead of encoding them again.
func (c *Client) VerifyAnswer(ctx context.Context, a Address) (*VerifyResponse, []byte, error) {
	return c.verify(ctx, a, true)
}

// verify is Verify, with the answer's JSON when keep asks for it.
func (c *Client) verify(ctx context.Context, a Address, keep bool) (*VerifyResponse, []byte, error) {
	params, err := encodeAddress(a)
	if err != nil {
		return nil, nil, err
	}
	startGen := c.tokens.generation()
	var minGen uint64
	for retried := false; ; retried = true {
		tok, gen, err := c.tokens.get(ctx, minGen)
		if err != nil {
			return nil, nil, err
		}
		resp, answer, rejected, err := c.send(ctx, tok, params, keep)
		if rejected == nil {
			return resp, answer, err
		}
		// A token fetched after this call began cannot have expired: the
		// credentials themselves are refused, and a refresh cannot help.
		if gen > startGen || retried {
			return nil, nil, &authError{why: "the service refused a freshly created token", status: rejected}
		}
		c.stats.tokenRetries.Add(1)
		minGen = gen + 1
	}
}

// encodeAddress checks a and encodes its parameters in interface order,
// without the token.
func encodeAddress(a Address) (string, error) {
	var b strings.Builder
	// One allocation: the names and values, a third more for escapes.
	size := len("&city=&region=&country=&language=") + len(a.City) + len(a.Region) + len(a.Country) + len(a.Language)
	for _, l := range a.Lines {
		size += len("&addressLine=") + len(l)
	}
	b.Grow(size + size/3)
	n := 0
	for _, l := range a.Lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n++
		addParam(&b, "addressLine", l)
	}
	if n == 0 {
		return "", fmt.Errorf("%w: no address line", ErrInvalidAddress)
	}
	if strings.TrimSpace(a.Country) == "" {
		return "", fmt.Errorf("%w: no country", ErrInvalidAddress)
	}
	addOptional(&b, "city", a.City)
	addOptional(&b, "region", a.Region)
	addParam(&b, "country", a.Country)
	addOptional(&b, "language", a.Language)
	return b.String(), nil
}

func addOptional(b *strings.Builder, name, value string) {
	if strings.TrimSpace(value) != "" {
		addParam(b, name, value)
	}
}

func addParam(b *strings.Builder, name, value string) {
	if b.Len() > 0 {
		b.WriteByte('&')
	}
	b.WriteString(name)
	b.WriteByte('=')
	b.WriteString(url.QueryEscape(value))
}

// send makes one verify request. When the service refused the token it
// returns the 401 answer as rejected, with a nil error.
//
// It runs once per row: the request is built from precomputed parts, the
// answer read into a pooled buffer, and the lists of secrets to scrub from
// error text made only when there is an error.
func (c *Client) send(ctx context.Context, tok Secret, params string, keep bool) (resp *VerifyResponse, answer []byte, rejected *StatusError, err error) {
	const op = "verify"
	shown := func() string { return c.baseShown + "/3.0/verify" }
	secrets := func() []string { return c.scrubList(tok.Reveal()) }
	query := c.tokenParam(tok).param.Reveal() + params

	var req *http.Request
	if c.method == http.MethodGet {
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/3.0/verify?"+query, nil)
	} else {
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/3.0/verify", strings.NewReader(query))
		if req != nil {
			req.Header["Content-Type"] = hdrForm
		}
	}
	if err != nil {
		return nil, nil, nil, fmtErr(unwrapURL(err), secrets(), "api: %s: building request for %s: %s", op, shown(), unwrapURL(err))
	}
	req.Header["Accept"] = hdrAccept
	req.Header["User-Agent"] = c.hdrUA

	c.stats.verifyRequests.Add(1)
	// The decoded answer shares no memory with the body: its buffer is
	// reused.
	buf := bodyPool.Get().(*bytes.Buffer)
	defer putBody(buf)
	hr, body, err := c.do(req, buf)
	if err != nil {
		return nil, nil, nil, c.transportError(op, c.method, shown(), err, secrets())
	}
	switch {
	case hr.StatusCode >= 200 && hr.StatusCode < 300:
		if body.err != nil {
			return nil, nil, nil, c.transportError(op, c.method, shown(), body.err, secrets())
		}
		// The answer is written out whole (JSONL): a service that echoes
		// the request must not put the token there.
		vr, asIs, err := decodeRedacted(body.data, c.tokenParam(tok).forms)
		if err != nil {
			return nil, nil, nil, kindErr(KindTransient, err, secrets(), "api: %s: unusable answer (HTTP %d, %d bytes): %v", op, hr.StatusCode, len(body.data), err)
		}
		if keep && asIs {
			// A copy: the body's buffer is reused.
			answer = bytes.Clone(bytes.TrimSpace(body.data))
		}
		return vr, answer, nil, nil
	case hr.StatusCode == http.StatusUnauthorized:
		return nil, nil, c.statusError(op, hr, body.data, secrets()), nil
	}
	return nil, nil, nil, c.failure(op, hr, body.data, secrets())
}

// Format keeps %v of a tokenParam from printing the token.
func (p *tokenParam) Format(f fmt.State, _ rune) { _, _ = fmt.Fprint(f, "api.tokenParam") }

// tokenParam returns the parameter and forms of tok, made once per token.
func (c *Client) tokenParam(tok Secret) *tokenParam {
	if p := c.tokParam.Load(); p != nil && p.tok == tok {
		return p
	}
	p := &tokenParam{tok: tok, param: Secret("token=" + url.QueryEscape(tok.Reveal()) + "&"), forms: tokenForms(tok.Reveal())}
	c.tokParam.Store(p)
	return p
}

// bodyPool holds the buffers verify answers are read into; maxPooledBody
// keeps the odd huge answer from staying in it.
var bodyPool = sync.Pool{New: func() any { return bytes.NewBuffer(make([]byte, 0, 4096)) }}

const maxPooledBody = 64 << 10

func putBody(buf *bytes.Buffer) {
	if buf.Cap() <= maxPooledBody {
		buf.Reset()
		bodyPool.Put(buf)
	}
}

func (c *Client) createToken(ctx context.Context) (string, error) {
	const op = "createtoken"
	shown := c.baseShown + "/3.0/createtoken"
	secrets := c.scrubList()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/3.0/createtoken", nil)
	if err != nil {
		return "", fmtErr(unwrapURL(err), secrets, "api: %s: building request for %s: %s", op, shown, unwrapURL(err))
	}
	req.Header.Set("Authorization", c.auth.Reveal())
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)

	c.stats.tokenRequests.Add(1)
	hr, body, err := c.do(req, new(bytes.Buffer))
	if err != nil {
		return "", c.transportError(op, http.MethodGet, shown, err, secrets)
	}
	switch {
	case hr.StatusCode == http.StatusUnauthorized:
		return "", &authError{why: "the API key was refused", status: c.statusError(op, hr, body.data, secrets)}
	case hr.StatusCode < 200 || hr.StatusCode >= 300:
		return "", c.failure(op, hr, body.data, secrets)
	case body.err != nil:
		return "", c.transportError(op, http.MethodGet, shown, body.err, secrets)
	}
	var tr TokenResponse
	if err := jsonv2.Unmarshal(body.data, &tr, wireOptions); err != nil || strings.TrimSpace(tr.Token) == "" {
		why := "no token in it"
		if err != nil {
			why = err.Error()
		}
		// A complete 200 answer without a token: the base URL points at
		// something that is not this service. Retrying will not change it.
		return "", kindErr(KindFatal, err, append(secrets, tr.Token), "api: %s: unusable answer from %s (HTTP %d, %d bytes): %s",
			op, shown, hr.StatusCode, len(body.data), why)
	}
	return tr.Token, nil
}

// readResult is a response body read in full, or as far as it went.
type readResult struct {
	data []byte
	err  error
}

// do sends req and reads the whole body into buf, so the connection can be
// reused.
func (c *Client) do(req *http.Request, buf *bytes.Buffer) (*http.Response, readResult, error) {
	hr, err := c.hc.Do(req)
	if err != nil {
		return nil, readResult{}, err
	}
	defer hr.Body.Close()
	_, err = buf.ReadFrom(io.LimitReader(hr.Body, maxBody+1))
	data := buf.Bytes()
	if err == nil && len(data) > maxBody {
		err = fmt.Errorf("answer larger than %d bytes", maxBody)
		data = data[:maxBody]
	}
	return hr, readResult{data: data, err: err}, nil
}

// scrubList returns the strings to scrub from error text: the key in its
// forms and the given tokens. It is built per call so that no plain copy of
// the key sits in the Client, where %+v would print it.
func (c *Client) scrubList(tokens ...string) []string {
	l := make([]string, 0, len(c.secrets)+len(tokens)+1)
	for _, s := range c.secrets {
		l = append(l, s.Reveal())
	}
	return append(l, tokens...)
}

// statusError builds the StatusError of an answer, its message scrubbed.
func (c *Client) statusError(op string, hr *http.Response, body []byte, secrets []string) *StatusError {
	se := newStatusError(op, hr, body, time.Now())
	se.Message = scrub(se.Message, secrets...)
	se.Location = scrub(se.Location, secrets...)
	return se
}

// failure turns a non-success answer other than 401 into its error.
func (c *Client) failure(op string, hr *http.Response, body []byte, secrets []string) error {
	se := c.statusError(op, hr, body, secrets)
	if hr.StatusCode == http.StatusTooManyRequests {
		return &RateLimitedError{RetryAfter: se.RetryAfter, Status: se}
	}
	return se
}

// transportError describes a failed exchange without the request URL that
// net/http puts in its errors: with GET that URL holds the token.
func (c *Client) transportError(op, method, shown string, err error, secrets []string) error {
	cause := unwrapURL(err)
	return fmtErr(cause, secrets, "api: %s: %s %s: %s", op, method, shown, describeCause(cause))
}

// unwrapURL drops the *url.Error layer (and with it the request URL).
func unwrapURL(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok && ue.Err != nil {
		return ue.Err
	}
	return err
}
