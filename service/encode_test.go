package service

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
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

// reflectEncode is how encoding/json encodes an answer: the reference the hand
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

// TestAnswerEncoding holds the encoding of the verify answer to
// encoding/json's (as the service wrote it before) over the answers the
// service gives for the sample customers and for every 8th reference
// record, under several integrations, and checks that each comes back
// unchanged through api.AppendVerifyResponse and api.DecodeVerifyResponse,
// as a journal stores and reads it. Hand-made answers with awkward strings
// and numbers are api's tests.
func TestAnswerEncoding(t *testing.T) {
	ix := sampleIndex(t)
	s := newTestService(t, ix, integrationVariants())
	forms := sampleForms(t)
	for i, f := range recordForms(ix) {
		if i%8 == 0 {
			forms = append(forms, f)
		}
	}
	n := 0
	for _, it := range s.byKey {
		for _, form := range forms {
			resp, ok := answerOf(t, s, it, form)
			if !ok {
				continue
			}
			checkVerifyEncoding(t, &resp)
			b := api.AppendVerifyResponse(nil, &resp)
			got, err := api.DecodeVerifyResponse(b)
			if err != nil {
				t.Fatalf("DecodeVerifyResponse(%q): %v", b, err)
			}
			if !reflect.DeepEqual(got, &resp) {
				t.Fatalf("round trip of\n%#v\ngave\n%#v\nthrough %q", &resp, got, b)
			}
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
