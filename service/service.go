package service

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"math"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/gazetteer"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
	"golang.org/x/time/rate"
)

// Matcher matches one address against reference data; *gazetteer.Index
// implements it. Match must be safe for concurrent use.
type Matcher interface {
	Match(gazetteer.Query) gazetteer.Match
}

// DefaultMaxBodyBytes is the largest verify request body accepted by default.
const DefaultMaxBodyBytes = 64 << 10

// MinSecretLen is the shortest signing secret New accepts.
const MinSecretLen = 16

// Option configures a Service.
type Option func(*config)

type config struct {
	secret  []byte
	log     zerolog.Logger
	maxBody int64
	baseURL string
}

// WithSigningSecret sets the secret that signs tokens (at least MinSecretLen
// bytes). Replicas given the same secret and keys accept each other's
// tokens; without it each Service draws a random secret.
func WithSigningSecret(secret []byte) Option {
	return func(c *config) { c.secret = bytes.Clone(secret) }
}

// WithLogger sets the logger. Requests are logged at debug level, without
// query strings, bodies or headers; failures at error level.
func WithLogger(log zerolog.Logger) Option {
	return func(c *config) { c.log = log }
}

// WithMaxBodyBytes sets the largest request body accepted (413 beyond it).
func WithMaxBodyBytes(n int64) Option {
	return func(c *config) { c.maxBody = n }
}

// WithBaseURL sets the public base URL used in links (for example behind a
// proxy); by default links are built from the request's Host.
func WithBaseURL(u string) Option {
	return func(c *config) { c.baseURL = u }
}

// Service is the address-verification service as an http.Handler.
type Service struct {
	m       Matcher
	sign    signer
	log     zerolog.Logger
	maxBody int64
	baseURL string

	byKey map[string]*integration
	byKID map[[kidLen]byte]*integration
	// scale rounds coordinates to the reference's decimals: a street
	// centroid is a mean, and a mean of 53.9456 and 53.94577 is
	// 53.94568500000002.
	scale float64
}

// integration is an Integration with what the service derives from it.
type integration struct {
	Integration
	kid     [kidLen]byte
	ttl     time.Duration
	allowed map[string]bool // nil: every country
	limiter *rate.Limiter   // nil: unlimited
}

// New returns a Service answering from m for the given integrations.
func New(m Matcher, integrations []Integration, opts ...Option) (*Service, error) {
	if m == nil {
		return nil, errors.New("service: nil matcher")
	}
	if len(integrations) == 0 {
		return nil, errors.New("service: no integrations")
	}
	c := config{log: zerolog.Nop(), maxBody: DefaultMaxBodyBytes}
	for _, o := range opts {
		o(&c)
	}
	if c.secret == nil {
		c.secret = make([]byte, 32)
		if _, err := rand.Read(c.secret); err != nil {
			return nil, fmt.Errorf("service: signing secret: %w", err)
		}
	}
	if len(c.secret) < MinSecretLen {
		return nil, fmt.Errorf("service: signing secret shorter than %d bytes", MinSecretLen)
	}
	if c.maxBody <= 0 {
		return nil, errors.New("service: max body size must be positive")
	}
	s := &Service{
		m: m, sign: newSigner(c.secret), log: c.log,
		maxBody: c.maxBody, baseURL: strings.TrimRight(c.baseURL, "/"),
		byKey: make(map[string]*integration, len(integrations)),
		byKID: make(map[[kidLen]byte]*integration, len(integrations)),
		scale: math.Pow10(coordDecimals(m)),
	}
	for i, in := range integrations {
		if err := checkKey(in.Key); err != nil {
			return nil, fmt.Errorf("service: integration %d (%q): %w", i+1, in.Name, err)
		}
		if err := in.check(); err != nil {
			return nil, fmt.Errorf("service: integration %d (%q): %w", i+1, in.Name, err)
		}
		if _, dup := s.byKey[in.Key]; dup {
			return nil, fmt.Errorf("service: integration %d (%q): duplicate key", i+1, in.Name)
		}
		it := &integration{Integration: in, kid: s.sign.keyID(in.Key), ttl: cmp.Or(in.TokenTTL, DefaultTokenTTL)}
		it.AllowedCountries = append([]string(nil), in.AllowedCountries...)
		if len(in.AllowedCountries) > 0 {
			it.allowed = make(map[string]bool, len(in.AllowedCountries))
			for _, c := range in.AllowedCountries {
				it.allowed[strings.ToUpper(strings.TrimSpace(c))] = true
			}
		}
		if in.RequestsPerSecond > 0 {
			burst := cmp.Or(in.Burst, max(1, int(math.Ceil(in.RequestsPerSecond))))
			it.limiter = rate.NewLimiter(rate.Limit(in.RequestsPerSecond), burst)
		}
		if _, clash := s.byKID[it.kid]; clash {
			// Two keys with the same 64-bit id: astronomically unlikely,
			// but a silent mix-up of integrations would be worse than this.
			return nil, fmt.Errorf("service: integration %d (%q): key id collision, change the key", i+1, in.Name)
		}
		s.byKey[in.Key] = it
		s.byKID[it.kid] = it
	}
	return s, nil
}

// Decimals of coordinates when the matcher cannot tell those of its
// reference (about 11 cm), and the most a reference is taken to have.
const (
	defaultCoordDecimals = 6
	maxCoordDecimals     = 9
)

// coordSample is how many reference records coordDecimals looks at: a
// reference is written by one program, with one precision.
const coordSample = 10000

// coordDecimals returns the decimals of the reference's coordinates, as
// written (the shortest form that reads back), when m can list its records.
func coordDecimals(m Matcher) int {
	rs, ok := m.(interface {
		Records(func(*gazetteer.Record) bool)
	})
	if !ok {
		return defaultCoordDecimals
	}
	most, seen := -1, 0
	rs.Records(func(r *gazetteer.Record) bool {
		if r.HasLocation {
			most = max(most, decimals(r.Latitude), decimals(r.Longitude))
			seen++
		}
		return seen < coordSample
	})
	if most < 0 {
		return defaultCoordDecimals
	}
	return min(most, maxCoordDecimals)
}

// decimals counts the digits after the point of f's shortest form.
func decimals(f float64) int {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

// round rounds a coordinate to the reference's decimals.
func (s *Service) round(f float64) float64 {
	return math.Round(f*s.scale) / s.scale
}

// ServeHTTP routes a request. A panic in a handler becomes a 500 answer.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	status := 0
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error().Str("path", r.URL.Path).Str("panic", fmt.Sprint(v)).
				Bytes("stack", debug.Stack()).Msg("panic serving request")
			status = s.writeError(w, errInternal)
		}
		if e := s.log.Debug(); e.Enabled() {
			e.Str("method", r.Method).Str("path", r.URL.Path).Int("status", status).
				Dur("took", time.Since(start)).Msg("request")
		}
	}()
	switch r.URL.Path {
	case "/3.0/verify":
		status = s.serve(w, r, "GET, HEAD, POST", s.verify)
	case "/3.0/createtoken":
		status = s.serve(w, r, "GET, HEAD", s.createToken)
	case "/healthz":
		status = s.serve(w, r, "GET, HEAD", healthz)
	default:
		status = s.writeError(w, errNotFound)
	}
}

// serve calls h when r's method is one of allow (an Allow header value),
// and answers 405 otherwise.
func (s *Service) serve(w http.ResponseWriter, r *http.Request, allow string, h func(http.ResponseWriter, *http.Request) int) int {
	for m := range strings.SplitSeq(allow, ", ") {
		if m == r.Method {
			return h(w, r)
		}
	}
	w.Header().Set("Allow", allow)
	return s.writeError(w, errMethodNotAllowed)
}

func healthz(w http.ResponseWriter, _ *http.Request) int {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("ok\n"))
	return http.StatusOK
}

// createToken exchanges an API key (HTTP Basic user name) for a token.
func (s *Service) createToken(w http.ResponseWriter, r *http.Request) int {
	key, pass, ok := r.BasicAuth()
	if !ok || key == "" {
		w.Header().Set("WWW-Authenticate", `Basic realm="addrclean"`)
		return s.writeError(w, errMissingAPIKey)
	}
	it := s.lookupKey(key)
	if it == nil || pass != "" {
		w.Header().Set("WWW-Authenticate", `Basic realm="addrclean"`)
		return s.writeError(w, errUnknownAPIKey)
	}
	now := time.Now()
	if e := s.limit(w, it, now); e != nil {
		return s.writeError(w, e)
	}
	tok, err := s.sign.issue(it.kid, now.Add(it.ttl))
	if err != nil {
		s.log.Error().Err(err).Msg("issuing a token")
		return s.writeError(w, errInternal)
	}
	txn, err := uuid.NewRandom()
	if err != nil {
		s.log.Error().Err(err).Msg("transaction id")
		return s.writeError(w, errInternal)
	}
	b, _ := jsonv2.Marshal(api.TokenResponse{Token: tok, Type: "Token Create", TransactionID: txn.String()}) // strings: cannot fail
	writeBody(w, http.StatusOK, append(b, '\n'))
	return http.StatusOK
}

// lookupKey finds an integration by key in constant time per candidate, so
// response timing does not reveal how much of a key was right.
func (s *Service) lookupKey(key string) *integration {
	if it, ok := s.byKey[key]; ok && subtle.ConstantTimeCompare([]byte(it.Key), []byte(key)) == 1 {
		return it
	}
	return nil
}

// limit applies the integration's rate limit at now; a refused request gets
// a Retry-After header and errRateLimited.
func (s *Service) limit(w http.ResponseWriter, it *integration, now time.Time) *apiError {
	if it.limiter == nil {
		return nil
	}
	res := it.limiter.ReserveN(now, 1)
	if !res.OK() {
		w.Header().Set("Retry-After", "1")
		return errRateLimited
	}
	d := res.DelayFrom(now)
	if d <= 0 {
		return nil
	}
	res.CancelAt(now)
	secs := max(1, int64(math.Ceil(d.Seconds())))
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	return errRateLimited
}

// bufPool holds the buffers of answers, so a busy service does not
// allocate one per request: those the handler encodes into, and those
// localTransport hands the client until it closes the body.
var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func (s *Service) writeVerify(w http.ResponseWriter, resp *api.VerifyResponse) int {
	buf := bufPool.Get().(*bytes.Buffer)
	defer putBuf(buf)
	buf.Write(api.AppendVerifyResponse(buf.AvailableBuffer(), resp))
	buf.WriteByte('\n')
	writeBody(w, http.StatusOK, buf.Bytes())
	return http.StatusOK
}

func putBuf(buf *bytes.Buffer) {
	if buf.Cap() <= 1<<20 {
		buf.Reset()
		bufPool.Put(buf)
	}
}

// writeBody writes an encoded JSON answer with one Write.
func writeBody(w http.ResponseWriter, status int, b []byte) {
	// The three values share one array, as Header.Clone lays them out:
	// one allocation per answer instead of three.
	v := []string{"application/json; charset=utf-8", "no-store", strconv.Itoa(len(b))}
	h := w.Header()
	h["Content-Type"], h["Cache-Control"], h["Content-Length"] = v[0:1:1], v[1:2:2], v[2:3:3]
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeError writes the error envelope for e and returns its status.
func (s *Service) writeError(w http.ResponseWriter, e *apiError) int {
	form := api.Form{Language: "en", Message: api.Message{ID: e.id, Severity: api.SeverityError, Value: e.text}}
	b, _ := jsonv2.Marshal(errorBody{Type: "error", Form: form}) // strings and an int: cannot fail
	writeBody(w, e.status, append(b, '\n'))
	return e.status
}
