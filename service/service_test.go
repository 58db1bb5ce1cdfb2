package service

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/internal/golden"
	"github.com/rs/zerolog"
)

var (
	dunLaoghaire = &gazetteer.Record{ID: "IE-0001", BuildingNumber: "1", Street: "Main Street",
		City: "Dún Laoghaire", Region: "Co. Dublin", Postcode: "A96 X2Y3", Country: "IE",
		Latitude: 53.2946, Longitude: -6.1340, HasLocation: true, Type: gazetteer.Residential}
	poBox = &gazetteer.Record{ID: "IE-0099", BuildingName: "PO Box 12", City: "Cork", Region: "Co. Cork",
		Postcode: "T12 AB12", Country: "IE", Type: gazetteer.POBox}
	london = &gazetteer.Record{ID: "GB-0001", BuildingNumber: "10", Street: "High Street", City: "London",
		Postcode: "SW1A 1AA", Country: "GB", Latitude: 51.5, Longitude: -0.14, HasLocation: true, Type: gazetteer.Commercial}
	flat = &gazetteer.Record{ID: "IE-0002", SubBuilding: "Flat 3", BuildingNumber: "5", Street: "Main Street",
		City: "Dún Laoghaire", Region: "Co. Dublin", Postcode: "A96 X2Y4", Country: "IE", Type: gazetteer.Residential}
)

func fixtures() *fakeMatcher {
	pt := func(r *gazetteer.Record) *gazetteer.Point {
		return &gazetteer.Point{Latitude: r.Latitude, Longitude: r.Longitude}
	}
	b := func(v gazetteer.Verdict, r *gazetteer.Record, lines ...string) gazetteer.Match {
		m := gazetteer.Match{Verdict: v, Level: gazetteer.LevelBuilding, Record: r, Lines: lines,
			City: r.City, Region: r.Region, Postcode: r.Postcode, Country: r.Country, Score: 0.97}
		if r.HasLocation {
			m.Location = pt(r)
		}
		m.Details = gazetteer.Details{Organization: gazetteer.ChangeNone, Street: gazetteer.ChangeUnchanged,
			AddressLines: gazetteer.ChangeUnchanged, SubBuildingNumber: gazetteer.ChangeNone,
			BuildingNumber: gazetteer.ChangeUnchanged, City: gazetteer.ChangeUnchanged,
			Region: gazetteer.ChangeUnchanged, Postcode: gazetteer.ChangeUnchanged}
		return m
	}
	tidied := b(gazetteer.VerdictAccept, dunLaoghaire, "1 Main Street")
	tidied.AddressLinesAmended, tidied.PostcodeAmended = true, true
	tidied.Details.Postcode = gazetteer.ChangeAdded
	caseOnly := b(gazetteer.VerdictAccept, dunLaoghaire, "1 Main Street")
	caseOnly.Tidied = true // no flag: only the form changed
	suggest := b(gazetteer.VerdictSuggest, dunLaoghaire, "1 Main Street")
	suggest.AddressLinesAmended, suggest.CityAmended = true, true
	suggest.Details.Street, suggest.Details.City = gazetteer.ChangeChanged, gazetteer.ChangeChanged
	sub := b(gazetteer.VerdictAccept, flat, "Flat 3", "5 Main Street")
	sub.Level = gazetteer.LevelSubBuilding
	weak := b(gazetteer.VerdictConfirm, dunLaoghaire, "1 Main Street")
	weak.Score = 0.6
	street := gazetteer.Match{Verdict: gazetteer.VerdictConfirm, Level: gazetteer.LevelStreet,
		Lines: []string{"Main Street"}, City: "Dún Laoghaire", Region: "Co. Dublin", Country: "IE",
		Location: &gazetteer.Point{Latitude: 53.29, Longitude: -6.13}}
	ambiguous := street
	ambiguous.Ambiguous = true
	locality := gazetteer.Match{Verdict: gazetteer.VerdictConfirm, Level: gazetteer.LevelLocality,
		City: "Dún Laoghaire", Region: "Co. Dublin", Country: "IE", Location: &gazetteer.Point{Latitude: 53.29, Longitude: -6.13}}
	region := gazetteer.Match{Verdict: gazetteer.VerdictConfirm, Level: gazetteer.LevelRegion,
		Region: "Co. Dublin", Country: "IE", Location: &gazetteer.Point{Latitude: 53.3, Longitude: -6.2}}
	broken := gazetteer.Match{Verdict: gazetteer.VerdictAccept, Level: gazetteer.LevelStreet, Lines: []string{"Nowhere Road"}, Country: "IE"}
	return &fakeMatcher{byLine: map[string]gazetteer.Match{
		"1 Main Street":  b(gazetteer.VerdictAccept, dunLaoghaire, "1 Main Street"),
		"1 main st":      tidied,
		"1 MAIN STREET":  caseOnly,
		"1 Mian Street":  suggest,
		"Flat 3":         sub,
		"1 Main Str":     weak,
		"Main Street":    street,
		"Ambiguous Road": ambiguous,
		"Somewhere":      locality,
		"Dublin":         region,
		"PO Box 12":      b(gazetteer.VerdictAccept, poBox, "PO Box 12"),
		"10 High Street": b(gazetteer.VerdictAccept, london, "10 High Street"),
		"Broken":         broken,
	}}
}

func TestVerifyActions(t *testing.T) {
	ieOnly := NewIntegration("pub_ie")
	ieOnly.AllowedCountries = []string{"ie"} // codes in any case
	noPO := NewIntegration("pub_nopo")
	noPO.POBoxes = false
	noLoc := NewIntegration("pub_noloc")
	noLoc.Location = false
	s := newTestService(t, fixtures(), []Integration{NewIntegration(testKey), ieOnly, noPO, noLoc})
	tests := []struct {
		name, key   string
		lines       []string
		country     string
		action      api.Action
		msg         int
		severity    string
		status      string
		level       string
		complete    bool
		id          string
		subBuilding string
		accuracy    string
	}{
		{"accept", testKey, []string{"1 Main Street", "Dún Laoghaire"}, "IE", api.ActionAccept, MsgVerified, "Information", "Verified", "Building", true, "IE-0001", "None", "BUILDING"},
		{"accept tidied", testKey, []string{"1 main st"}, "Ireland", api.ActionAccept, MsgVerifiedTidied, "Information", "Corrected", "Building", true, "IE-0001", "None", "BUILDING"},
		{"accept case only", testKey, []string{"1 MAIN STREET"}, "IE", api.ActionAccept, MsgVerifiedTidied, "Information", "Corrected", "Building", true, "IE-0001", "None", "BUILDING"},
		{"accept sub-building", testKey, []string{"Flat 3", "5 Main St"}, "ie", api.ActionAccept, MsgVerified, "Information", "Verified", "SubBuilding", true, "IE-0002", "Flat 3", ""},
		{"suggest", testKey, []string{"1 Mian Street", "Dun Leary"}, "IE", api.ActionSuggest, MsgCorrected, "Warning", "Corrected", "Building", true, "IE-0001", "None", "BUILDING"},
		{"confirm weak building", testKey, []string{"1 Main Str"}, "IE", api.ActionConfirm, MsgPartialBuilding, "Warning", "Partial", "Building", true, "IE-0001", "None", "BUILDING"},
		{"confirm street", testKey, []string{"Main Street"}, "IE", api.ActionConfirm, MsgPartialStreet, "Warning", "Partial", "Street", false, "", "None", "STREET"},
		{"confirm ambiguous", testKey, []string{"Ambiguous Road"}, "IE", api.ActionConfirm, MsgAmbiguous, "Warning", "Partial", "Street", false, "", "None", "STREET"},
		{"confirm locality", testKey, []string{"Somewhere"}, "IE", api.ActionConfirm, MsgPartialLocality, "Warning", "Partial", "Locality", false, "", "None", "LOCALITY"},
		{"confirm region", testKey, []string{"Dublin"}, "IE", api.ActionConfirm, MsgPartialRegion, "Warning", "Partial", "Region", false, "", "None", "REGION"},
		{"confirm no match", testKey, []string{"Atlantis"}, "IE", api.ActionConfirm, MsgNotFound, "Warning", "Unverified", "None", false, "", "None", ""},
		{"accept without record is confirm", testKey, []string{"Broken"}, "IE", api.ActionConfirm, MsgPartialStreet, "Warning", "Partial", "Street", false, "", "None", ""},
		{"po box allowed", testKey, []string{"PO Box 12"}, "IE", api.ActionAccept, MsgVerified, "Information", "Verified", "Building", true, "IE-0099", "None", ""},
		{"po box rejected", "pub_nopo", []string{"PO Box 12"}, "IE", api.ActionReject, MsgRejectPOBox, "Error", "Verified", "Building", true, "IE-0099", "None", ""},
		{"country allowed", "pub_ie", []string{"1 Main Street"}, "IE", api.ActionAccept, MsgVerified, "Information", "Verified", "Building", true, "IE-0001", "None", "BUILDING"},
		{"country rejected", "pub_ie", []string{"10 High Street"}, "United Kingdom", api.ActionReject, MsgRejectCountry, "Error", "Verified", "Building", true, "GB-0001", "None", "BUILDING"},
		{"country rejected without match", "pub_ie", []string{"Atlantis"}, "FR", api.ActionReject, MsgRejectCountry, "Error", "Unverified", "None", false, "", "None", ""},
		{"no location setting", "pub_noloc", []string{"1 Main Street"}, "IE", api.ActionAccept, MsgVerified, "Information", "Verified", "Building", true, "IE-0001", "None", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := query(tc.lines, "country", tc.country, "token", token(t, s, tc.key))
			v := decodeVerify(t, do(s, http.MethodGet, "/3.0/verify?"+q.Encode(), "", nil))
			if v.Type != "verify" || v.Action != tc.action {
				t.Errorf("type/action = %q/%q, want verify/%q", v.Type, v.Action, tc.action)
			}
			if m := v.Form.Message; m.ID != tc.msg || m.Severity != tc.severity || m.Value == "" || v.Form.Language != "en" {
				t.Errorf("form = %+v, want id %d severity %s", v.Form, tc.msg, tc.severity)
			}
			in := v.Information
			if in.Status != tc.status || in.MatchLevel != tc.level || in.Complete != tc.complete || in.SubBuilding != tc.subBuilding {
				t.Errorf("information = %+v, want %s/%s/%v/%s", in, tc.status, tc.level, tc.complete, tc.subBuilding)
			}
			if v.Address.ID != tc.id {
				t.Errorf("address.id = %q, want %q", v.Address.ID, tc.id)
			}
			if len(v.Address.Highlights) != len(v.Address.Label) {
				t.Errorf("%d highlights for %d label lines", len(v.Address.Highlights), len(v.Address.Label))
			}
			gotAcc := ""
			if l := v.Data.Location; l != nil {
				gotAcc = l.Accuracy
				if l.CRS != "EPSG:4326" {
					t.Errorf("crs = %q", l.CRS)
				}
			}
			if gotAcc != tc.accuracy {
				t.Errorf("location accuracy = %q, want %q", gotAcc, tc.accuracy)
			}
			if len(v.Input.Lines) != len(tc.lines) || v.Input.Lines[0].Key != "AddressLine1" || v.Input.Lines[0].Value != tc.lines[0] {
				t.Errorf("input.lines = %+v", v.Input.Lines)
			}
			if v.Input.Country.Value != tc.country || v.Input.Postcode.Value != "" {
				t.Errorf("input country/postcode = %+v / %+v", v.Input.Country, v.Input.Postcode)
			}
			if v.Address.Language != "en" || v.Address.Charset != "Latn" || v.Address.Country == nil {
				t.Errorf("address = %+v", v.Address)
			}
		})
	}
}

// TestVerifyGolden pins whole answers; run with -update to rewrite them.
func TestVerifyGolden(t *testing.T) {
	formLite := NewIntegration("pub_lite")
	formLite.Form = FormSettings{City: true}
	formLite.Location = false
	s := newTestService(t, fixtures(), []Integration{NewIntegration(testKey), formLite}, WithBaseURL("https://av.example/"))
	tests := []struct {
		name, key string
		q         url.Values
	}{
		{"accept", testKey, query([]string{"1 Main Street", "Dún Laoghaire", "A96 X2Y3"}, "country", "IE", "region", "Co. Dublin")},
		{"suggest", testKey, query([]string{"1 Mian Street", "Dun Laoghre"}, "country", "Ireland", "language", "en")},
		{"confirm-street", testKey, query([]string{"Main Street", ""}, "country", "IRL", "city", "dun laoghaire")},
		{"no-match", testKey, query([]string{"Atlantis"}, "country", "IE")},
		{"form-settings", "pub_lite", query([]string{"1 Main Street"}, "country", "IE")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.q.Set("token", token(t, s, tc.key))
			w := do(s, http.MethodGet, "/3.0/verify?"+tc.q.Encode(), "", nil)
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, w.Body.Bytes(), "", "  "); err != nil {
				t.Fatalf("%v: %s", err, w.Body)
			}
			golden.Check(t, "verify-"+tc.name+".golden.json", pretty.Bytes())
		})
	}
}

func TestErrors(t *testing.T) {
	limited := NewIntegration("pub_limited")
	limited.RequestsPerSecond, limited.Burst = 1, 1
	s := newTestService(t, fixtures(), []Integration{NewIntegration(testKey), limited}, WithMaxBodyBytes(4096))
	tok := token(t, s, testKey)
	other, err := New(fixtures(), []Integration{NewIntegration(testKey)}, WithSigningSecret([]byte("another secret, another replica")))
	if err != nil {
		t.Fatal(err)
	}
	foreign := token(t, other, testKey)
	var expired string
	synctest.Test(t, func(t *testing.T) { // a bubble's clock starts in 2000: its tokens have long expired
		expired = token(t, newTestService(t, fixtures(), nil), testKey)
	})
	ok := func(kv ...string) string {
		return query([]string{"1 Main Street"}, append([]string{"token", tok, "country", "IE"}, kv...)...).Encode()
	}
	tests := []struct {
		name         string
		method, path string
		body         string
		hdr          map[string]string
		status, id   int
		header       string // a header that must be set
	}{
		{"missing addressLine", "GET", "/3.0/verify?" + query(nil, "token", tok, "country", "IE").Encode(), "", nil, 400, MsgMissingAddressLine, ""},
		{"blank addressLine", "GET", "/3.0/verify?" + query([]string{" ", ""}, "token", tok, "country", "IE").Encode(), "", nil, 400, MsgMissingAddressLine, ""},
		{"missing country", "GET", "/3.0/verify?" + query([]string{"x"}, "token", tok).Encode(), "", nil, 400, MsgMissingCountry, ""},
		{"unknown country", "GET", "/3.0/verify?" + query([]string{"x"}, "token", tok, "country", "Narnia").Encode(), "", nil, 400, MsgUnknownCountry, ""},
		{"bad escape", "GET", "/3.0/verify?token=" + tok + "&addressLine=%zz&country=IE", "", nil, 400, MsgInvalidParameter, ""},
		{"too many lines", "GET", "/3.0/verify?" + query(strings.Split(strings.Repeat("a,", 40), ","), "token", tok, "country", "IE").Encode(), "", nil, 400, MsgInvalidParameter, ""},
		{"line too long", "GET", "/3.0/verify?" + query([]string{strings.Repeat("a", 2000)}, "token", tok, "country", "IE").Encode(), "", nil, 400, MsgInvalidParameter, ""},
		{"invalid utf-8", "GET", "/3.0/verify?token=" + tok + "&addressLine=%ff&country=IE", "", nil, 400, MsgInvalidParameter, ""},
		{"json body", "POST", "/3.0/verify", `{"token":"x"}`, map[string]string{"Content-Type": "application/json"}, 400, MsgUnsupportedBody, ""},
		{"missing token", "GET", "/3.0/verify?" + query([]string{"x"}, "country", "IE").Encode(), "", nil, 401, MsgMissingToken, ""},
		{"garbage token", "GET", "/3.0/verify?" + query([]string{"x"}, "country", "IE", "token", "nope").Encode(), "", nil, 401, MsgInvalidToken, ""},
		{"tampered token", "GET", "/3.0/verify?" + query([]string{"x"}, "country", "IE", "token", tamper(tok)).Encode(), "", nil, 401, MsgInvalidToken, ""},
		{"other secret", "GET", "/3.0/verify?" + query([]string{"x"}, "country", "IE", "token", foreign).Encode(), "", nil, 401, MsgInvalidToken, ""},
		{"expired token", "GET", "/3.0/verify?" + query([]string{"x"}, "country", "IE", "token", expired).Encode(), "", nil, 401, MsgExpiredToken, ""},
		{"token checked before parameters", "GET", "/3.0/verify?token=nope", "", nil, 401, MsgInvalidToken, ""},
		{"no basic auth", "GET", "/3.0/createtoken", "", nil, 401, MsgMissingAPIKey, "WWW-Authenticate"},
		{"unknown key", "GET", "/3.0/createtoken", "", map[string]string{"Authorization": basic("pub_wrong")}, 401, MsgUnknownAPIKey, "WWW-Authenticate"},
		{"key with password", "GET", "/3.0/createtoken", "", map[string]string{"Authorization": "Basic " + b64(testKey+":pw")}, 401, MsgUnknownAPIKey, ""},
		{"bearer", "GET", "/3.0/createtoken", "", map[string]string{"Authorization": "Bearer " + testKey}, 401, MsgMissingAPIKey, ""},
		{"unknown path", "GET", "/3.0/nothing", "", nil, 404, MsgNotFoundPath, ""},
		{"root", "GET", "/", "", nil, 404, MsgNotFoundPath, ""},
		{"old version", "GET", "/2.0/verify?" + ok(), "", nil, 404, MsgNotFoundPath, ""},
		{"verify PUT", "PUT", "/3.0/verify?" + ok(), "", nil, 405, MsgMethodNotAllowed, "Allow"},
		{"createtoken POST", "POST", "/3.0/createtoken", "", map[string]string{"Authorization": basic(testKey)}, 405, MsgMethodNotAllowed, "Allow"},
		{"healthz DELETE", "DELETE", "/healthz", "", nil, 405, MsgMethodNotAllowed, "Allow"},
		{"body too large", "POST", "/3.0/verify", ok("city", strings.Repeat("x", 5000)), nil, 413, MsgTooLarge, ""},
		{"query too large", "GET", "/3.0/verify?" + ok("city", strings.Repeat("x", 5000)), "", nil, 413, MsgTooLarge, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := do(s, tc.method, tc.path, tc.body, tc.hdr)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("content type %q", ct)
			}
			if e := decodeError(t, w.Body.Bytes()); e.Form.Message.ID != tc.id {
				t.Errorf("id %d, want %d", e.Form.Message.ID, tc.id)
			}
			if tc.header != "" && w.Header().Get(tc.header) == "" {
				t.Errorf("no %s header", tc.header)
			}
		})
	}
}

func b64(s string) string { return strings.TrimPrefix(basic(s[:len(s)-len(":pw")]+":pw"), "Basic ") }

// tamper flips one character in the middle of a token.
func tamper(tok string) string {
	b := []byte(tok)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

func TestTokenExpiry(t *testing.T) { synctest.Test(t, testTokenExpiry) }

func testTokenExpiry(t *testing.T) {
	start := time.Now()
	in := NewIntegration(testKey)
	in.TokenTTL = 2 * time.Minute
	s := newTestService(t, fixtures(), []Integration{in})
	tok := token(t, s, testKey)
	target := "/3.0/verify?" + query([]string{"1 Main Street"}, "country", "IE", "token", tok).Encode()
	for _, step := range []struct {
		advance time.Duration
		status  int
		id      int
	}{
		{0, 200, 0},
		{time.Minute + 59*time.Second, 200, 0},
		{time.Second, 401, MsgExpiredToken},
		{time.Hour, 401, MsgExpiredToken},
	} {
		time.Sleep(step.advance)
		w := do(s, http.MethodGet, target, "", nil)
		if w.Code != step.status {
			t.Fatalf("after %v: status %d, want %d", time.Since(start), w.Code, step.status)
		}
		if step.id != 0 {
			if e := decodeError(t, w.Body.Bytes()); e.Form.Message.ID != step.id {
				t.Fatalf("id %d, want %d", e.Form.Message.ID, step.id)
			}
		}
	}
	// A fresh token works again.
	target = "/3.0/verify?" + query([]string{"1 Main Street"}, "country", "IE", "token", token(t, s, testKey)).Encode()
	if w := do(s, http.MethodGet, target, "", nil); w.Code != 200 {
		t.Fatalf("fresh token: %d", w.Code)
	}
}

func TestReplicasShareTokens(t *testing.T) {
	a := newTestService(t, fixtures(), nil)
	b := newTestService(t, fixtures(), nil)
	tok := token(t, a, testKey)
	w := do(b, http.MethodGet, "/3.0/verify?"+query([]string{"1 Main Street"}, "country", "IE", "token", tok).Encode(), "", nil)
	if w.Code != 200 {
		t.Fatalf("replica refused the token: %d %s", w.Code, w.Body)
	}
	// A replica without the key refuses the token as invalid.
	c := newTestService(t, fixtures(), []Integration{NewIntegration("pub_other")})
	w = do(c, http.MethodGet, "/3.0/verify?"+query([]string{"1 Main Street"}, "country", "IE", "token", tok).Encode(), "", nil)
	if w.Code != 401 || decodeError(t, w.Body.Bytes()).Form.Message.ID != MsgInvalidToken {
		t.Fatalf("replica without the key: %d %s", w.Code, w.Body)
	}
}

func TestTokensAreOpaqueAndDistinct(t *testing.T) {
	s := newTestService(t, fixtures(), nil)
	seen := map[string]bool{}
	for range 50 {
		w := do(s, http.MethodGet, "/3.0/createtoken", "", map[string]string{"Authorization": basic(testKey)})
		var tr api.TokenResponse
		if err := json.Unmarshal(w.Body.Bytes(), &tr); err != nil {
			t.Fatal(err)
		}
		if tr.Type != "Token Create" || len(tr.TransactionID) != 36 {
			t.Fatalf("token response %+v", tr)
		}
		if seen[tr.Token] {
			t.Fatalf("token repeated")
		}
		seen[tr.Token] = true
		if strings.Contains(tr.Token, testKey) || strings.Contains(w.Body.String(), testKey) || strings.Contains(tr.Token, "00000000") {
			t.Fatalf("key visible in the token answer")
		}
	}
}

func TestRateLimit(t *testing.T) { synctest.Test(t, testRateLimit) }

func testRateLimit(t *testing.T) {
	in := NewIntegration(testKey)
	in.RequestsPerSecond, in.Burst = 0.5, 2
	free := NewIntegration("pub_free")
	s := newTestService(t, fixtures(), []Integration{in, free})
	tok := token(t, s, testKey) // uses one of the burst of 2
	target := "/3.0/verify?" + query([]string{"1 Main Street"}, "country", "IE", "token", tok).Encode()
	if w := do(s, http.MethodGet, target, "", nil); w.Code != 200 {
		t.Fatalf("second request: %d", w.Code)
	}
	w := do(s, http.MethodGet, target, "", nil)
	if w.Code != 429 {
		t.Fatalf("third request: %d, want 429", w.Code)
	}
	if e := decodeError(t, w.Body.Bytes()); e.Form.Message.ID != MsgRateLimited {
		t.Errorf("id %d", e.Form.Message.ID)
	}
	if ra := w.Header().Get("Retry-After"); ra != "2" {
		t.Errorf("Retry-After %q, want 2", ra)
	}
	// The refused request did not use up the next slot.
	time.Sleep(2 * time.Second)
	if w := do(s, http.MethodGet, target, "", nil); w.Code != 200 {
		t.Fatalf("after Retry-After: %d", w.Code)
	}
	// Other keys are not limited by this one.
	ftarget := "/3.0/verify?" + query([]string{"1 Main Street"}, "country", "IE", "token", token(t, s, "pub_free")).Encode()
	for range 20 {
		if w := do(s, http.MethodGet, ftarget, "", nil); w.Code != 200 {
			t.Fatalf("unlimited key: %d", w.Code)
		}
	}
}

func TestGetAndPost(t *testing.T) {
	s := newTestService(t, fixtures(), nil, WithBaseURL("http://x"))
	tok := token(t, s, testKey)
	q := query([]string{"1 Mian Street", "Dun Laoghre"}, "country", "IE", "city", "Dublin")
	get := do(s, http.MethodGet, "/3.0/verify?"+q.Encode()+"&token="+tok, "", nil)
	bodyTok := do(s, http.MethodPost, "/3.0/verify", q.Encode()+"&token="+tok, nil)
	urlTok := do(s, http.MethodPost, "/3.0/verify?token="+tok, q.Encode(), nil)
	noType := do(s, http.MethodPost, "/3.0/verify", q.Encode()+"&token="+tok, map[string]string{"Content-Type": ""})
	for name, w := range map[string]int{"post token in body": bodyTok.Code, "post token in url": urlTok.Code, "post without content type": noType.Code} {
		if w != 200 {
			t.Errorf("%s: %d", name, w)
		}
	}
	for name, w := range map[string][]byte{"body": bodyTok.Body.Bytes(), "url": urlTok.Body.Bytes(), "no type": noType.Body.Bytes()} {
		if !bytes.Equal(get.Body.Bytes(), w) {
			t.Errorf("POST (%s) answer differs from GET:\n%s\n%s", name, get.Body, w)
		}
	}
}

func TestSelfLink(t *testing.T) {
	s := newTestService(t, fixtures(), nil)
	tok := token(t, s, testKey)
	q := query([]string{"1 Main Street", "Dún Laoghaire & Co"}, "country", "IE", "city", "", "language", "ga", "extra", "dropped")
	v := decodeVerify(t, do(s, http.MethodGet, "/3.0/verify?token="+tok+"&"+q.Encode(), "", nil))
	if len(v.Links) != 1 || v.Links[0].Rel != "self" {
		t.Fatalf("links %+v", v.Links)
	}
	href := v.Links[0].Href
	if strings.Contains(href, tok) || strings.Contains(href, "token") {
		t.Fatalf("self link carries the token: %s", href)
	}
	u, err := url.Parse(href)
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme != "http" || u.Host != "example.com" || u.Path != "/3.0/verify" {
		t.Errorf("self link %s", href)
	}
	got := u.Query()
	want := url.Values{"addressLine": {"1 Main Street", "Dún Laoghaire & Co"}, "country": {"IE"}, "city": {""}, "language": {"ga"}}
	if got.Encode() != want.Encode() {
		t.Errorf("self link query %v, want %v", got, want)
	}
	// Following the self link with a token gives the same answer.
	again := decodeVerify(t, do(s, http.MethodGet, href+"&token="+tok, "", nil))
	if again.Action != v.Action || again.Address.ID != v.Address.ID {
		t.Errorf("self link answers differently")
	}
}

func TestHealthz(t *testing.T) {
	s := newTestService(t, fixtures(), nil)
	w := do(s, http.MethodGet, "/healthz", "", nil)
	if w.Code != 200 || w.Body.String() != "ok\n" {
		t.Fatalf("healthz: %d %q", w.Code, w.Body)
	}
}

func TestPanicIs500(t *testing.T) {
	var logs bytes.Buffer
	s := newTestService(t, panicMatcher{}, nil, WithLogger(zerolog.New(&logs)))
	tok := token(t, s, testKey)
	w := do(s, http.MethodGet, "/3.0/verify?"+query([]string{"x"}, "country", "IE", "token", tok).Encode(), "", nil)
	if w.Code != 500 || decodeError(t, w.Body.Bytes()).Form.Message.ID != MsgInternal {
		t.Fatalf("panic: %d %s", w.Code, w.Body)
	}
	if !strings.Contains(logs.String(), "boom") || strings.Contains(logs.String(), tok) {
		t.Errorf("panic log: %s", logs.String())
	}
}

func TestLogsCarryNoSecrets(t *testing.T) {
	var logs bytes.Buffer
	s := newTestService(t, fixtures(), nil, WithLogger(zerolog.New(&logs).Level(zerolog.TraceLevel)))
	tok := token(t, s, testKey)
	do(s, http.MethodGet, "/3.0/verify?"+query([]string{"1 Main Street"}, "country", "IE", "token", tok).Encode(), "", nil)
	do(s, http.MethodPost, "/3.0/verify", query([]string{"1 Main Street"}, "country", "IE", "token", tok).Encode(), nil)
	do(s, http.MethodGet, "/3.0/verify?token="+tamper(tok), "", nil)
	do(s, http.MethodGet, "/3.0/createtoken", "", map[string]string{"Authorization": basic("pub_wrong")})
	out := logs.String()
	if !strings.Contains(out, `"status":200`) {
		t.Fatalf("no request logged at debug level: %s", out)
	}
	for _, secret := range []string{testKey, tok, tamper(tok), "pub_wrong", "1 Main Street"} {
		if strings.Contains(out, secret) {
			t.Errorf("log carries %q:\n%s", secret, out)
		}
	}
}

func TestNewValidates(t *testing.T) {
	bad := NewIntegration(testKey)
	bad.RequestsPerSecond = -1
	tests := []struct {
		name string
		m    Matcher
		ins  []Integration
		opts []Option
	}{
		{"nil matcher", nil, []Integration{NewIntegration(testKey)}, nil},
		{"no integrations", fixtures(), nil, nil},
		{"duplicate key", fixtures(), []Integration{NewIntegration(testKey), NewIntegration(testKey)}, nil},
		{"empty key", fixtures(), []Integration{NewIntegration("")}, nil},
		{"colon in key", fixtures(), []Integration{NewIntegration("a:b")}, nil},
		{"negative rate", fixtures(), []Integration{bad}, nil},
		{"short secret", fixtures(), []Integration{NewIntegration(testKey)}, []Option{WithSigningSecret([]byte("short"))}},
		{"zero body", fixtures(), []Integration{NewIntegration(testKey)}, []Option{WithMaxBodyBytes(0)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.m, tc.ins, tc.opts...); err == nil {
				t.Fatal("New accepted it")
			} else if strings.Contains(err.Error(), testKey) {
				t.Errorf("error shows the key: %v", err)
			}
		})
	}
}

func TestInputEcho(t *testing.T) {
	s := newTestService(t, fixtures(), nil)
	tok := token(t, s, testKey)
	q := query([]string{"  1 Main Street ", "", "Dún Laoghaire"}, "country", "Éire", "city", " Dublin ", "region", "Co. Dublin")
	v := decodeVerify(t, do(s, http.MethodGet, "/3.0/verify?token="+tok+"&"+q.Encode(), "", nil))
	in := v.Input
	want := []api.Line{{Key: "AddressLine1", Value: "  1 Main Street "}, {Key: "AddressLine2", Value: "Dún Laoghaire"}}
	if len(in.Lines) != 2 || in.Lines[0] != want[0] || in.Lines[1] != want[1] {
		t.Errorf("lines %+v", in.Lines)
	}
	if in.City.Value != "Dublin" || in.Region.Value != "Co. Dublin" || in.Postcode.Value != "" {
		t.Errorf("city/region/postcode %+v %+v %+v", in.City, in.Region, in.Postcode)
	}
	if in.Country != (api.Country{Language: "en", Value: "Éire", ISO: "IE"}) {
		t.Errorf("country %+v", in.Country)
	}
	if strings.Join(in.Label, "|") != "1 Main Street|Dún Laoghaire|Dublin|Co. Dublin" {
		t.Errorf("label %q", in.Label)
	}
}

func TestLineKeys(t *testing.T) {
	for _, n := range []int{1, 9, maxLines, maxLines + 1, 100} {
		if got, want := lineKey(n), "AddressLine"+strconv.Itoa(n); got != want {
			t.Errorf("lineKey(%d) = %q", n, got)
		}
	}
}

func TestAddressHighlights(t *testing.T) {
	s := newTestService(t, fixtures(), nil)
	tok := token(t, s, testKey)
	tests := []struct {
		name  string
		lines []string
		want  [][]int
	}{
		// The postcode was added (whole line); "st" became "Street" in
		// amended lines; "co" became "Co." in a region Unchanged, which is
		// not marked.
		{"tidied", []string{"1 main st", "Dún Laoghaire", "co dublin"}, [][]int{{7, 6}, {}, {}, {0, 8}}},
		{"unchanged", []string{"1 Main Street", "Dún Laoghaire", "Co. Dublin", "A96 X2Y3"}, [][]int{{}, {}, {}, {}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := decodeVerify(t, do(s, http.MethodGet, "/3.0/verify?"+query(tc.lines, "country", "IE", "token", tok).Encode(), "", nil))
			got, _ := json.Marshal(v.Address.Highlights)
			want, _ := json.Marshal(tc.want)
			if string(got) != string(want) {
				t.Errorf("highlights %s, want %s (label %q)", got, want, v.Address.Label)
			}
		})
	}
}

func TestMethods(t *testing.T) {
	s := newTestService(t, fixtures(), nil)
	tok := token(t, s, testKey)
	verify := "/3.0/verify?" + query([]string{"1 Main Street"}, "country", "IE", "token", tok).Encode()
	tests := []struct {
		method, path string
		status       int
		allow        string
	}{
		{"HEAD", verify, 200, ""},
		{"HEAD", "/healthz", 200, ""},
		{"OPTIONS", verify, 405, "GET, HEAD, POST"},
		{"DELETE", verify, 405, "GET, HEAD, POST"},
		{"PUT", "/3.0/createtoken", 405, "GET, HEAD"},
		{"POST", "/healthz", 405, "GET, HEAD"},
		// Part of an allowed method, or of the Allow value, is no method.
		{"GE", verify, 405, "GET, HEAD, POST"},
		{"HEA", "/healthz", 405, "GET, HEAD"},
		{"POST", "/nowhere", 404, ""},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path[:min(len(tc.path), 12)], func(t *testing.T) {
			w := do(s, tc.method, tc.path, "", nil)
			if w.Code != tc.status || w.Header().Get("Allow") != tc.allow {
				t.Errorf("status %d Allow %q, want %d %q", w.Code, w.Header().Get("Allow"), tc.status, tc.allow)
			}
		})
	}
}

// TestConcurrent serves many requests at once (run with -race): shared
// limiters, pooled buffers and HMAC states must not mix answers up.
func TestConcurrent(t *testing.T) { synctest.Test(t, testConcurrent) }

func testConcurrent(t *testing.T) {
	limited := NewIntegration("pub_limited")
	limited.RequestsPerSecond, limited.Burst = 1, 10
	s := newTestService(t, fixtures(), []Integration{NewIntegration(testKey), limited})
	free := "/3.0/verify?" + query([]string{"1 Mian Street"}, "country", "IE", "token", token(t, s, testKey)).Encode()
	capped := "/3.0/verify?" + query([]string{"Main Street"}, "country", "IE", "token", token(t, s, "pub_limited")).Encode()
	var wg sync.WaitGroup
	var mu sync.Mutex
	okCapped, refused := 0, 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				v := decodeVerify(t, do(s, http.MethodGet, free, "", nil))
				if v.Action != api.ActionSuggest || v.Address.ID != "IE-0001" {
					t.Errorf("free key answer %s %q", v.Action, v.Address.ID)
					return
				}
				w := do(s, http.MethodGet, capped, "", nil)
				mu.Lock()
				switch w.Code {
				case 200:
					okCapped++
				case 429:
					refused++
				default:
					t.Errorf("capped key: %d", w.Code)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// The bubble's clock stands still: the burst of 10 less the token
	// request.
	if okCapped != 9 || refused != 200-9 {
		t.Errorf("capped key: %d answered, %d refused; want 9 and %d", okCapped, refused, 200-9)
	}
}
