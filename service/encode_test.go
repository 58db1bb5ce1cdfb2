package service

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/gazetteer"
)

// reflectEncode is how writeJSON encodes an answer: the reference the hand
// encoders must agree with byte for byte.
func reflectEncode(t testing.TB, v any) ([]byte, error) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return buf.Bytes(), err
}

// wireVerify is api.VerifyResponse without its methods, for encoding/json.
type wireVerify api.VerifyResponse

// checkVerifyEncoding asserts that the service writes v as encoding/json
// did before the service moved to the JSON library: the same bytes.
func checkVerifyEncoding(t testing.TB, v *api.VerifyResponse) {
	t.Helper()
	want, err := reflectEncode(t, (*wireVerify)(v))
	if err != nil {
		t.Fatal(err)
	}
	// encoding/json knows no embedded fallback: it writes Extra as a member.
	want = bytes.ReplaceAll(bytes.ReplaceAll(want, []byte(`,"Extra":null`), nil), []byte(`"Extra":null`), nil)
	w := httptest.NewRecorder()
	(&Service{}).writeVerify(w, v)
	if got := w.Body.Bytes(); !bytes.Equal(got, want) {
		t.Fatalf("writeVerify differs from encoding/json\n got: %q\nwant: %q", got, want)
	}
	if got := w.Header().Get("Content-Length"); got != strconv.Itoa(len(want)) {
		t.Fatalf("Content-Length %s, body %d bytes", got, len(want))
	}
}

// integrationVariants are integrations whose settings shape the answer
// differently: every form setting, no location, PO Boxes and countries
// refused.
func integrationVariants() []Integration {
	all := NewIntegration(testKey)
	bare := NewIntegration(testKey + "-bare")
	bare.Form = FormSettings{}
	bare.Location = false
	strict := NewIntegration(testKey + "-strict")
	strict.POBoxes = false
	strict.AllowedCountries = []string{"GB"}
	strict.Form = FormSettings{City: true, Postcode: true}
	some := NewIntegration(testKey + "-some")
	some.Form = FormSettings{Lines: true, Region: true, Country: true}
	return []Integration{all, bare, strict, some}
}

// answerOf builds the verify answer the service gives for form, as verify
// does, without the token.
func answerOf(t testing.TB, s *Service, it *integration, form url.Values) (api.VerifyResponse, bool) {
	t.Helper()
	req, e := parseRequest(form)
	if e != nil {
		return api.VerifyResponse{}, false
	}
	m := s.m.Match(gazetteer.Query{Lines: req.lines, City: req.city, Region: req.region, Country: req.iso, Language: req.language})
	resp := s.answer(it, &req, &m, new(answerScratch))
	r := httptest.NewRequest(http.MethodGet, "/3.0/verify?"+form.Encode(), nil)
	resp.Links = []api.Link{{Rel: "self", Href: s.selfLink(r, &req), Title: "Verify"}}
	return resp, true
}

// sampleForms are the verify requests of every row of the sample customers
// file, mapped as the readers map them.
func sampleForms(t testing.TB) []url.Values {
	t.Helper()
	f, err := os.Open("../sample_data/customers.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	var forms []url.Values
	for _, rec := range recs[1:] {
		get := func(name string) string { return strings.TrimSpace(rec[col[name]]) }
		v := url.Values{}
		for _, l := range []string{get("Address 1"), get("Address 2"), get("Postcode")} {
			if l != "" {
				v.Add("addressLine", l)
			}
		}
		if c := get("Town"); c != "" {
			v.Set("city", c)
		}
		if r := get("County"); r != "" {
			v.Set("region", r)
		}
		c := get("Country")
		if c == "" {
			c = "IE"
		}
		v.Set("country", c)
		forms = append(forms, v)
	}
	return forms
}

// recordForms are verify requests made of the reference records themselves.
func recordForms(ix *gazetteer.Index) []url.Values {
	var forms []url.Values
	ix.Records(func(r *gazetteer.Record) bool {
		v := url.Values{}
		first := strings.TrimSpace(strings.Join([]string{r.SubBuilding, r.BuildingName}, " "))
		for _, l := range []string{r.Organisation, first, strings.TrimSpace(r.BuildingNumber + " " + r.Street), r.Locality, r.Postcode} {
			if l != "" {
				v.Add("addressLine", l)
			}
		}
		if r.City != "" {
			v.Set("city", r.City)
		}
		if r.Region != "" {
			v.Set("region", r.Region)
		}
		v.Set("country", r.Country)
		forms = append(forms, v)
		return true
	})
	return forms
}

// TestAnswerEncodingMatchesJSON holds the encoding of the verify answer to
// encoding/json's (as the service wrote it before) over every answer the
// service gives for the sample customers and for the reference records,
// under several integrations. Hand-made answers with awkward strings and
// numbers are api's tests.
func TestAnswerEncodingMatchesJSON(t *testing.T) {
	ix := sampleIndex(t)
	s := newTestService(t, ix, integrationVariants())
	forms := append(sampleForms(t), recordForms(ix)...)
	n := 0
	for _, it := range s.byKey {
		for _, form := range forms {
			resp, ok := answerOf(t, s, it, form)
			if !ok {
				continue
			}
			checkVerifyEncoding(t, &resp)
			n++
		}
	}
	if n < 1000 {
		t.Fatalf("only %d answers compared", n)
	}
	t.Logf("%d service answers compared", n)

	// Through the handler.
	tok := token(t, s, testKey)
	for _, form := range forms[:50] {
		form.Set("token", tok)
		w := do(s, http.MethodGet, "/3.0/verify?"+form.Encode(), "", nil)
		form.Del("token")
		if w.Code != http.StatusOK {
			continue
		}
		resp, _ := answerOf(t, s, s.byKey[testKey], form)
		want := append(api.AppendVerifyResponse(nil, &resp), '\n')
		if !bytes.Equal(w.Body.Bytes(), want) {
			t.Fatalf("handler body differs\n got: %q\nwant: %q", w.Body.Bytes(), want)
		}
	}
}

// resp0 is the service's answer to the first form that has one.
func resp0(t *testing.T, s *Service, forms []url.Values) api.VerifyResponse {
	t.Helper()
	for _, form := range forms {
		if resp, ok := answerOf(t, s, s.byKey[testKey], form); ok {
			return resp
		}
	}
	t.Fatal("no answer")
	return api.VerifyResponse{}
}

// TestAnswersRoundTrip: every answer the service gives for the sample
// customers and the reference records comes back unchanged through
// api.AppendVerifyResponse and api.DecodeVerifyResponse, as a journal
// stores and reads it.
func TestAnswersRoundTrip(t *testing.T) {
	ix := sampleIndex(t)
	s := newTestService(t, ix, integrationVariants())
	forms := append(sampleForms(t), recordForms(ix)...)
	n := 0
	var buf []byte
	for _, it := range s.byKey {
		for _, form := range forms {
			resp, ok := answerOf(t, s, it, form)
			if !ok {
				continue
			}
			buf = api.AppendVerifyResponse(buf[:0], &resp)
			got, err := api.DecodeVerifyResponse(buf)
			if err != nil {
				t.Fatalf("DecodeVerifyResponse(%q): %v", buf, err)
			}
			if !reflect.DeepEqual(got, &resp) {
				t.Fatalf("round trip of\n%#v\ngave\n%#v\nthrough %q", &resp, got, buf)
			}
			n++
		}
	}
	if n < 1000 {
		t.Fatalf("only %d answers compared", n)
	}
	t.Logf("%d service answers round-tripped", n)
}

func oldParseForm(s *Service, w http.ResponseWriter, r *http.Request) (url.Values, *apiError) {
	if int64(len(r.URL.RawQuery)) > s.maxBody {
		return nil, errTooLarge
	}
	if r.Method == http.MethodPost {
		if r.ContentLength > s.maxBody {
			return nil, errTooLarge
		}
		ct := r.Header.Get("Content-Type")
		if ct == "" {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		} else if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/x-www-form-urlencoded" {
			if r.ContentLength != 0 {
				return nil, errUnsupportedBody
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
	}
	if err := r.ParseForm(); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errTooLarge
		}
		return nil, invalidParam("The query or body is not validly form-encoded.")
	}
	return r.Form, nil
}

// checkParseForm asserts that parseForm and the r.ParseForm way agree on a
// request: the same error, or the same parameters.
func checkParseForm(t testing.TB, s *Service, method, rawQuery, ct, body string, cl int64) {
	t.Helper()
	mk := func() *http.Request {
		r := httptest.NewRequest(method, "/3.0/verify", strings.NewReader(body))
		r.URL.RawQuery = rawQuery
		if ct != "" {
			r.Header.Set("Content-Type", ct)
		}
		r.ContentLength = cl
		return r
	}
	wantForm, wantErr := oldParseForm(s, httptest.NewRecorder(), mk())
	var p params
	gotErr := s.parseForm(httptest.NewRecorder(), mk(), &p)
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && *gotErr != *wantErr {
		t.Fatalf("%s %q ct %q body %q cl %d: error %v, want %v", method, rawQuery, ct, body, cl, gotErr, wantErr)
	}
	if gotErr != nil {
		return
	}
	var want params
	want.lines = wantForm["addressLine"]
	for _, x := range []struct {
		name string
		dst  *string
		bit  uint8
	}{{"token", &want.token, paramToken}, {"city", &want.city, paramCity}, {"region", &want.region, paramRegion},
		{"country", &want.country, paramCountry}, {"language", &want.language, paramLanguage}} {
		if vs := wantForm[x.name]; len(vs) > 0 {
			want.set(x.bit, x.dst, vs[0])
		}
	}
	if len(p.lines) == 0 && len(want.lines) == 0 {
		p.lines, want.lines = nil, nil
	}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("%s %q ct %q body %q cl %d: params %+v, want %+v", method, rawQuery, ct, body, cl, p, want)
	}
}

var formCases = []string{
	"", "addressLine=1+Main+St&addressLine=Dublin&country=IE&token=abc",
	"addressLine=%zz", "a=b;c", "addressLine=%E2%80%A8&city=D%C3%BAn+Laoghaire&region=&language=ga",
	"address%4Cine=x&%74oken=t&country=Ireland&country=GB&city=a&city=b",
	"&&addressLine&=x&token=&token=second", "addressLine=%ff%00&country=%", "x=%2", "k=v%",
	"addressLine=a+b%2Bc%26d%3De", strings.Repeat("&", 10001), strings.Repeat("a=b&", 9999) + "token=t",
	strings.Repeat("a&", 10000),
}

// TestParseFormMatchesParseForm holds the direct form parser to
// r.ParseForm over queries, bodies and content types.
func TestParseFormMatchesParseForm(t *testing.T) {
	s := newTestService(t, fixtures(), nil, WithMaxBodyBytes(64<<10))
	cts := []string{"", formType, "application/x-www-form-urlencoded; charset=utf-8", "Application/X-WWW-Form-Urlencoded",
		"application/x-www-form-urlencoded; charset", "text/plain", "multipart/form-data; boundary=x", "bogus/"}
	for _, q := range formCases {
		for _, b := range formCases {
			for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodHead} {
				for _, ct := range cts {
					for _, cl := range []int64{int64(len(b)), 0, -1} {
						checkParseForm(t, s, m, q, ct, b, cl)
					}
				}
			}
		}
	}
	small := newTestService(t, fixtures(), nil, WithMaxBodyBytes(16))
	for _, b := range []string{"country=IE&addressLine=x", "short=1", "a=" + strings.Repeat("x", 20)} {
		for _, cl := range []int64{int64(len(b)), 0, -1, 5} {
			checkParseForm(t, small, http.MethodPost, "token=t", "", b, cl)
			checkParseForm(t, small, http.MethodPost, strings.Repeat("q", 17), "", b, cl)
		}
	}
}

// FuzzParseFormMatchesParseForm holds the direct form parser to
// r.ParseForm on fuzzed queries and bodies.
func FuzzParseFormMatchesParseForm(f *testing.F) {
	for i, c := range formCases[:10] {
		f.Add(c, formCases[(i+3)%10], uint8(i))
	}
	s := newTestService(f, fixtures(), nil, WithMaxBodyBytes(4096))
	cts := []string{"", formType, "application/x-www-form-urlencoded; charset", "text/plain"}
	f.Fuzz(func(t *testing.T, q, body string, sel uint8) {
		method := []string{http.MethodGet, http.MethodPost, http.MethodPost, http.MethodHead}[sel&3]
		ct := cts[sel>>2&3]
		cl := []int64{int64(len(body)), 0, -1, int64(len(body)) / 2}[sel>>4&3]
		checkParseForm(t, s, method, q, ct, body, cl)
	})
}
