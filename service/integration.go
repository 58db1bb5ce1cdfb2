package service

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/addrclean/addrclean/countries"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"
)

// DefaultTokenTTL is the token lifetime of an integration that sets none.
const DefaultTokenTTL = 15 * time.Minute

// FormSettings says which members of the matched address an integration
// returns (the interface's "form settings"); label and highlights are always
// returned.
type FormSettings struct {
	Lines    bool
	City     bool
	Region   bool
	Postcode bool
	Country  bool
}

// AllFields is the form setting that returns every address member.
var AllFields = FormSettings{Lines: true, City: true, Region: true, Postcode: true, Country: true}

// Integration is one API key and its settings.
type Integration struct {
	// Key is the API key, sent as the HTTP Basic user name to createtoken.
	Key string
	// Name labels the integration in logs (the key never appears there).
	Name string
	// AllowedCountries are ISO alpha-2 codes; empty allows every country.
	// A match elsewhere is answered with Reject.
	AllowedCountries []string
	// POBoxes allows PO Box addresses; a PO Box match is a Reject otherwise.
	POBoxes bool
	// Location returns data.location when the match has a point.
	Location bool
	// Form selects the members of address that are returned.
	Form FormSettings
	// RequestsPerSecond limits createtoken and verify requests of this key;
	// 0 means unlimited.
	RequestsPerSecond float64
	// Burst is the number of requests allowed at once; 0 means
	// max(1, RequestsPerSecond rounded up).
	Burst int
	// TokenTTL is the lifetime of the tokens of this key; 0 means
	// DefaultTokenTTL.
	TokenTTL time.Duration
}

// NewIntegration returns an integration for key with the permissive
// defaults: every country, PO Boxes allowed, location and every address
// member returned, no rate limit, tokens valid for DefaultTokenTTL.
func NewIntegration(key string) Integration {
	return Integration{
		Key:      key,
		Name:     "default",
		POBoxes:  true,
		Location: true,
		Form:     AllFields,
		TokenTTL: DefaultTokenTTL,
	}
}

// NewDevIntegration returns a development integration with a random key of
// the form pub_ followed by a UUID-like string and the defaults of
// NewIntegration.
func NewDevIntegration() (Integration, error) {
	id, err := uuid.NewRandom()
	if err != nil {
		return Integration{}, fmt.Errorf("service: generating a development key: %w", err)
	}
	in := NewIntegration("pub_" + id.String())
	in.Name = "development"
	return in, nil
}

// Integrations are the integrations of the keys file at path (LoadKeys),
// or, when there is none (path ""), one development integration (dev
// true), whose key the caller shows once.
func Integrations(path string) (ins []Integration, dev bool, err error) {
	if path != "" {
		ins, err := LoadKeys(path)
		return ins, false, err
	}
	in, err := NewDevIntegration()
	if err != nil {
		return nil, false, err
	}
	return []Integration{in}, true, nil
}

// keysFile is the JSON keys file. Members that can default are pointers so
// that an absent member and false can be told apart.
type keysFile struct {
	Integrations []keyEntry `json:"integrations"`
}

type keyEntry struct {
	Key               string    `json:"key"`
	Name              string    `json:"name"`
	AllowedCountries  []string  `json:"allowedCountries"`
	POBoxes           *bool     `json:"poBoxes"`
	Data              *dataJSON `json:"data"`
	Form              *formJSON `json:"form"`
	RequestsPerSecond float64   `json:"requestsPerSecond"`
	Burst             int       `json:"burst"`
	TokenTTL          string    `json:"tokenTTL"`
}

type dataJSON struct {
	Location *bool `json:"location"`
}

type formJSON struct {
	Lines    *bool `json:"lines"`
	City     *bool `json:"city"`
	Region   *bool `json:"region"`
	Postcode *bool `json:"postcode"`
	Country  *bool `json:"country"`
}

func orTrue(b *bool) bool { return b == nil || *b }

// maxKeysFile bounds what LoadKeys reads: a keys file is small.
const maxKeysFile = 16 << 20

// LoadKeys reads a JSON keys file: an object whose "integrations" member
// lists the integrations, for example
//
//	{"integrations": [{
//	  "key": "pub_4b3e9a2c-1d7f-4e21-9c0a-6f5b8d2e1a37",
//	  "name": "CRM import",
//	  "allowedCountries": ["IE", "United Kingdom"],
//	  "poBoxes": false,
//	  "data": {"location": true},
//	  "form": {"lines": true, "city": true, "region": false, "postcode": true, "country": true},
//	  "requestsPerSecond": 20, "burst": 5,
//	  "tokenTTL": "10m"
//	}]}
//
// Only "key" is required; absent settings take the defaults of
// NewIntegration (every country, PO Boxes allowed, location and every
// address member returned, no rate limit, 15-minute tokens). Countries may
// be codes or names. Names are matched exactly; unknown members are errors,
// so a misspelt setting is not silently ignored, and so is a member given
// twice, so that {"key":"pub_a",...,"key":"pub_b"} is not silently pub_b.
// Errors name the file, the line and column, the member and the
// integration, never a key.
func LoadKeys(path string) ([]Integration, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("keys file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeysFile+1))
	if err != nil {
		return nil, fmt.Errorf("keys file %s: %w", path, err)
	}
	if len(data) > maxKeysFile {
		return nil, fmt.Errorf("keys file %s: larger than %d bytes", path, maxKeysFile)
	}
	ins, err := parseKeys(data)
	if err != nil {
		return nil, fmt.Errorf("keys file %s: %w", path, err)
	}
	return ins, nil
}

func parseKeys(data []byte) ([]Integration, error) {
	var kf keysFile
	// Strict, as a file of credentials must be: names match exactly, an
	// unknown member is an error (a misspelt setting is not ignored), and
	// so is a member given twice ({"key":"pub_a",...,"key":"pub_b"} must not
	// silently become pub_b).
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	if err := jsonv2.UnmarshalDecode(dec, &kf, jsonv2.RejectUnknownMembers(true)); err != nil {
		return nil, keysSyntaxError(data, err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON object")
	}
	if len(kf.Integrations) == 0 {
		return nil, errors.New(`no integrations: want {"integrations":[{"key":"pub_..."}]}`)
	}
	out := make([]Integration, 0, len(kf.Integrations))
	seen := make(map[string]int, len(kf.Integrations))
	for i, e := range kf.Integrations {
		where := fmt.Sprintf("integration %d", i+1)
		if e.Name != "" {
			where += fmt.Sprintf(" (%q)", e.Name)
		}
		in, err := e.integration()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if j, dup := seen[in.Key]; dup {
			return nil, fmt.Errorf("%s: same key as integration %d", where, j+1)
		}
		seen[in.Key] = i
		out = append(out, in)
	}
	return out, nil
}

func (e keyEntry) integration() (Integration, error) {
	in := NewIntegration(strings.TrimSpace(e.Key))
	if err := checkKey(in.Key); err != nil {
		return in, err
	}
	in.Name = cmp.Or(e.Name, "unnamed")
	for _, c := range e.AllowedCountries {
		iso, ok := countries.ISO(c)
		if !ok {
			return in, fmt.Errorf("allowedCountries: %q is not a recognised country", c)
		}
		in.AllowedCountries = append(in.AllowedCountries, iso)
	}
	in.POBoxes = orTrue(e.POBoxes)
	if e.Data != nil {
		in.Location = orTrue(e.Data.Location)
	}
	if f := e.Form; f != nil {
		in.Form = FormSettings{Lines: orTrue(f.Lines), City: orTrue(f.City), Region: orTrue(f.Region),
			Postcode: orTrue(f.Postcode), Country: orTrue(f.Country)}
	}
	in.RequestsPerSecond = e.RequestsPerSecond
	in.Burst = e.Burst
	if e.TokenTTL != "" {
		d, err := time.ParseDuration(e.TokenTTL)
		if err != nil {
			return in, fmt.Errorf("tokenTTL: %w", err)
		}
		in.TokenTTL = d
	}
	return in, in.check()
}

// checkKey reports whether a key can be sent as an HTTP Basic user name.
func checkKey(k string) error {
	if k == "" {
		return errors.New("key is empty")
	}
	if len(k) > 256 {
		return errors.New("key is longer than 256 bytes")
	}
	for i := 0; i < len(k); i++ {
		// A colon would end the Basic user name; controls and spaces do
		// not survive headers and shells.
		if c := k[i]; c <= ' ' || c == ':' || c >= 0x7f {
			return errors.New("key must be printable ASCII without spaces or colons")
		}
	}
	return nil
}

// check validates the settings of an integration (not its key).
func (in Integration) check() error {
	switch {
	case in.RequestsPerSecond < 0 || in.RequestsPerSecond != in.RequestsPerSecond:
		return errors.New("requestsPerSecond must be 0 (unlimited) or more")
	case in.Burst < 0:
		return errors.New("burst must be 0 (default) or more")
	case in.TokenTTL < 0:
		return errors.New("tokenTTL must be positive")
	case in.TokenTTL > 0 && in.TokenTTL < time.Second:
		return errors.New("tokenTTL must be at least 1s")
	}
	for _, c := range in.AllowedCountries {
		if countries.Name(c) == "" {
			return fmt.Errorf("allowedCountries: %q is not an ISO alpha-2 code", c)
		}
	}
	return nil
}

// keysSyntaxError places a decoding error of the keys file at its line and
// column, and says which member is repeated. The errors of jsonv2 name
// members and JSON types, never values: no key is shown.
func keysSyntaxError(data []byte, err error) error {
	var off int64
	var what string // for the errors a person makes by hand: a member given twice, an unknown one
	if se, ok := errors.AsType[*jsontext.SyntacticError](err); ok {
		off = se.ByteOffset
		if errors.Is(se.Err, jsontext.ErrDuplicateName) {
			what = fmt.Sprintf("member %q is given twice in %s: give each member once",
				se.JSONPointer.LastToken(), keysWhere(se.JSONPointer.Parent()))
		}
	} else if se, ok := errors.AsType[*jsonv2.SemanticError](err); ok {
		off = se.ByteOffset
		if errors.Is(se.Err, jsonv2.ErrUnknownName) {
			what = fmt.Sprintf("unknown member %q in %s (names are matched exactly)",
				se.JSONPointer.LastToken(), keysWhere(se.JSONPointer.Parent()))
		}
	} else {
		return err
	}
	line, col := lineCol(data, off)
	if what == "" {
		return fmt.Errorf("line %d column %d: %w", line, col, err)
	}
	return fmt.Errorf("line %d column %d: %s (%w)", line, col, what, err)
}

// keysWhere names the object at ptr: an integration by its number.
func keysWhere(ptr jsontext.Pointer) string {
	var toks []string
	for t := range ptr.Tokens() {
		toks = append(toks, t)
	}
	if len(toks) >= 2 && toks[0] == "integrations" {
		if n, err := strconv.Atoi(toks[1]); err == nil {
			where := fmt.Sprintf("integration %d", n+1)
			if len(toks) > 2 {
				where += ` member "` + strings.Join(toks[2:], ".") + `"`
			}
			return where
		}
	}
	if ptr == "" {
		return "the top-level object"
	}
	return string(ptr)
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}
