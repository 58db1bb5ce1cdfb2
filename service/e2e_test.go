package service

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/gazetteer"
	sampledata "github.com/addrclean/addrclean/sample_data"
)

var (
	sampleOnce sync.Once
	sampleIx   *gazetteer.Index
	sampleErr  error
)

// sampleIndex loads the bundled sample reference once per test binary.
func sampleIndex(t testing.TB) *gazetteer.Index {
	t.Helper()
	sampleOnce.Do(func() { sampleIx, sampleErr = gazetteer.Load(context.Background(), sampledata.Reference()) })
	if sampleErr != nil {
		t.Fatalf("loading the sample reference: %v", sampleErr)
	}
	return sampleIx
}

// findRecord returns the first sample record that pred accepts.
func findRecord(t testing.TB, ix *gazetteer.Index, pred func(*gazetteer.Record) bool) *gazetteer.Record {
	t.Helper()
	var found *gazetteer.Record
	ix.Records(func(r *gazetteer.Record) bool {
		if pred(r) {
			found = r
			return false
		}
		return true
	})
	if found == nil {
		t.Fatal("no such record in the sample reference")
	}
	return found
}

// recordLines is a record as a client would send it: its lines, town and
// postcode.
func recordLines(r *gazetteer.Record) []string {
	return append(r.Lines(), r.City, r.Postcode)
}

// TestEndToEndSample runs the service over the real gazetteer and the
// bundled sample reference; the records are looked up rather than written
// here, so regenerating the sample does not break the test.
func TestEndToEndSample(t *testing.T) {
	ix := sampleIndex(t)
	dun := findRecord(t, ix, func(r *gazetteer.Record) bool {
		return r.City == "Dún Laoghaire" && r.BuildingNumber != "" && r.Street != "" && r.SubBuilding == "" &&
			r.BuildingName == "" && r.Organisation == "" && r.Type != gazetteer.POBox
	})
	pobox := findRecord(t, ix, func(r *gazetteer.Record) bool { return r.Type == gazetteer.POBox })
	uk := findRecord(t, ix, func(r *gazetteer.Record) bool {
		return r.Country == "GB" && r.BuildingNumber != "" && r.Street != "" && r.SubBuilding == "" && r.BuildingName == ""
	})
	neighbour := findRecord(t, ix, func(r *gazetteer.Record) bool {
		return r.City == dun.City && r.Postcode != "" && r.Postcode != dun.Postcode && r.Street != dun.Street
	})
	// A typo in the street name: its third letter dropped.
	typo := dun.BuildingNumber + " " + dun.Street[:2] + dun.Street[3:]
	ieOnly := NewIntegration("pub_ie")
	ieOnly.AllowedCountries = []string{"IE"}
	noPO := NewIntegration("pub_nopo")
	noPO.POBoxes = false
	s := newTestService(t, ix, []Integration{NewIntegration(testKey), ieOnly, noPO})
	untidy := []string{strings.ToLower(dun.BuildingNumber + " " + strings.Replace(dun.Street, "Avenue", "Ave", 1)), "dun laoghaire"}
	tests := []struct {
		name, key string
		lines     []string
		country   string
		actions   []api.Action // any of these
		id        string
		msg       int
		check     func(t *testing.T, v api.VerifyResponse)
	}{
		{name: "exact", key: testKey, lines: recordLines(dun), country: "IE",
			actions: []api.Action{api.ActionAccept}, id: dun.ID,
			check: func(t *testing.T, v api.VerifyResponse) {
				if v.Data.Location == nil || v.Data.Location.Accuracy != "BUILDING" {
					t.Errorf("location %+v", v.Data.Location)
				}
			}},
		{name: "untidy", key: testKey, lines: untidy, country: "Ireland",
			actions: []api.Action{api.ActionAccept, api.ActionSuggest}, id: dun.ID,
			check: func(t *testing.T, v api.VerifyResponse) {
				// "Dún" gains a fada: a change of form, which leaves the
				// town Unchanged and so unmarked.
				for i, l := range v.Address.Label {
					if l == "Dún Laoghaire" {
						if h := v.Address.Highlights[i]; len(h) != 0 || v.Information.Details.City != "Unchanged" {
							t.Errorf("highlight of %q = %v with city %s, want none and Unchanged", l, h, v.Information.Details.City)
						}
						return
					}
				}
				t.Errorf("no Dún Laoghaire line in %q", v.Address.Label)
			}},
		{name: "street typo", key: testKey, lines: []string{typo, dun.City}, country: "IE",
			actions: []api.Action{api.ActionSuggest}, id: dun.ID, msg: MsgCorrected},
		{name: "wrong postcode", key: testKey, lines: []string{dun.BuildingNumber + " " + dun.Street, dun.City, neighbour.Postcode}, country: "IE",
			actions: []api.Action{api.ActionSuggest}, id: dun.ID, msg: MsgCorrected,
			check: func(t *testing.T, v api.VerifyResponse) {
				if !v.Information.PostcodeAmended || v.Address.Postcode == nil || v.Address.Postcode.Value != dun.Postcode {
					t.Errorf("postcode not corrected: %+v", v.Information)
				}
			}},
		{name: "street only", key: testKey, lines: []string{dun.Street, dun.City}, country: "IE",
			actions: []api.Action{api.ActionConfirm}, msg: MsgPartialStreet,
			check: func(t *testing.T, v api.VerifyResponse) {
				if v.Data.Location == nil || v.Data.Location.Accuracy != "STREET" {
					t.Errorf("location %+v", v.Data.Location)
				}
			}},
		{name: "town only", key: testKey, lines: []string{dun.City}, country: "IE",
			actions: []api.Action{api.ActionConfirm}, msg: MsgPartialLocality},
		{name: "po box allowed", key: testKey, lines: recordLines(pobox), country: "IE",
			actions: []api.Action{api.ActionAccept}, id: pobox.ID},
		{name: "po box rejected", key: "pub_nopo", lines: recordLines(pobox), country: "IE",
			actions: []api.Action{api.ActionReject}, id: pobox.ID, msg: MsgRejectPOBox},
		{name: "unmatched po box rejected", key: "pub_nopo", lines: []string{"PO Box 9999", "Dublin 15"}, country: "IE",
			actions: []api.Action{api.ActionReject}, msg: MsgRejectPOBox},
		{name: "unmatched po box written P.O. Box rejected", key: "pub_nopo", lines: []string{"P.O. Box 9999", "Dublin 15"}, country: "IE",
			actions: []api.Action{api.ActionReject}, msg: MsgRejectPOBox},
		{name: "unmatched po box allowed is confirm", key: testKey, lines: []string{"PO Box 9999", "Dublin 15"}, country: "IE",
			actions: []api.Action{api.ActionConfirm}},
		{name: "uk allowed", key: testKey, lines: recordLines(uk), country: "GB",
			actions: []api.Action{api.ActionAccept}, id: uk.ID},
		{name: "uk rejected", key: "pub_ie", lines: recordLines(uk), country: "United Kingdom",
			actions: []api.Action{api.ActionReject}, id: uk.ID, msg: MsgRejectCountry},
		{name: "nothing like it", key: testKey, lines: []string{"Zzyzx Qwerty Plaza"}, country: "IE",
			actions: []api.Action{api.ActionConfirm}, msg: MsgNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := query(tc.lines, "country", tc.country, "token", token(t, s, tc.key))
			v := decodeVerify(t, do(s, http.MethodGet, "/3.0/verify?"+q.Encode(), "", nil))
			ok := false
			for _, a := range tc.actions {
				ok = ok || v.Action == a
			}
			if !ok {
				t.Errorf("action %q (%s), want one of %q; label %q", v.Action, v.Form.Message.Value, tc.actions, v.Address.Label)
			}
			if v.Address.ID != tc.id {
				t.Errorf("address.id %q, want %q", v.Address.ID, tc.id)
			}
			if tc.msg != 0 && v.Form.Message.ID != tc.msg {
				t.Errorf("message %+v, want id %d", v.Form.Message, tc.msg)
			}
			if len(v.Address.Highlights) != len(v.Address.Label) {
				t.Errorf("%d highlights for %d label lines", len(v.Address.Highlights), len(v.Address.Label))
			}
			if tc.check != nil {
				tc.check(t, v)
			}
			if t.Failed() {
				t.Logf("answer: %+v", v)
			}
		})
	}
}

// TestEndToEndFlatNotInReference: a flat the reference lacks is dropped from
// the answer, so the answer is a Suggest that says so and shows it.
func TestEndToEndFlatNotInReference(t *testing.T) {
	ix := sampleIndex(t)
	r := findRecord(t, ix, func(r *gazetteer.Record) bool {
		return r.Country == "IE" && r.SubBuilding == "" && r.BuildingName == "" && r.Organisation == "" &&
			r.BuildingNumber != "" && r.Street != "" && r.Type == gazetteer.Residential
	})
	s := newTestService(t, ix, []Integration{NewIntegration(testKey)})
	tok := token(t, s, testKey)
	for _, lines := range [][]string{
		{"Apt 5, " + r.BuildingNumber + " " + r.Street, r.City},
		{"Unit 5", r.BuildingNumber + " " + r.Street, r.City},
	} {
		q := query(lines, "country", "IE", "token", tok)
		v := decodeVerify(t, do(s, http.MethodGet, "/3.0/verify?"+q.Encode(), "", nil))
		if v.Action != api.ActionSuggest || v.Address.ID != r.ID || v.Information.Details.SubBuildingNumber != "Ignored" {
			t.Errorf("%q: action %s id %q subBuildingNumber %q", lines, v.Action, v.Address.ID, v.Information.Details.SubBuildingNumber)
		}
		// The flat is gone from the label: the lines are amended, but
		// there is nothing left to mark, and the unchanged street is not.
		if !v.Information.AddressLinesAmended || len(v.Address.Highlights) == 0 || len(v.Address.Highlights[0]) != 0 {
			t.Errorf("%q: addressLinesAmended %v, highlights %v", lines, v.Information.AddressLinesAmended, v.Address.Highlights)
		}
	}
}

// TestEndToEndContactLine: a "c/o" line is set aside (Accept, organization
// Ignored); a line that is neither address nor contact is a Suggest whose
// message says input was not used.
func TestEndToEndContactLine(t *testing.T) {
	ix := sampleIndex(t)
	r := findRecord(t, ix, func(r *gazetteer.Record) bool {
		return r.Country == "IE" && r.SubBuilding == "" && r.BuildingName == "" && r.Organisation == "" &&
			r.BuildingNumber != "" && r.Street != "" && r.Type == gazetteer.Residential
	})
	s := newTestService(t, ix, []Integration{NewIntegration(testKey)})
	tok := token(t, s, testKey)
	addr := []string{r.BuildingNumber + " " + r.Street, r.City, r.Postcode}
	for _, contact := range []string{"c/o Mary Byrne", "FAO Accounts", "ATTN: J. Smith", "Attn Jane Doe", "For the attention of Mr Byrne", "Care of Tom Walsh"} {
		q := query(append([]string{contact}, addr...), "country", "IE", "token", tok)
		v := decodeVerify(t, do(s, http.MethodGet, "/3.0/verify?"+q.Encode(), "", nil))
		if v.Action != api.ActionAccept || v.Address.ID != r.ID || v.Information.Details.Organization != "Ignored" || v.Form.Message.ID != MsgVerifiedTidied {
			t.Errorf("%q: action %s id %q organization %q message %+v", contact, v.Action, v.Address.ID, v.Information.Details.Organization, v.Form.Message)
		}
	}
	q := query(append([]string{"Ring bell twice"}, addr...), "country", "IE", "token", tok)
	v := decodeVerify(t, do(s, http.MethodGet, "/3.0/verify?"+q.Encode(), "", nil))
	if v.Action != api.ActionSuggest || v.Address.ID != r.ID || v.Form.Message != msgCorrectedUnused {
		t.Errorf("note line: action %s id %q message %+v", v.Action, v.Address.ID, v.Form.Message)
	}
}

// checkHighlightsMatchFlags fails when a label line is highlighted but the
// amended flag of what it shows is false, or when an amended element is
// not highlighted. The label is the address lines, then the city, region
// and postcode that are not empty.
func checkHighlightsMatchFlags(t *testing.T, name string, v api.VerifyResponse) {
	t.Helper()
	a, info := v.Address, v.Information
	if len(a.Highlights) != len(a.Label) {
		t.Fatalf("%s: %d highlights for %d label lines", name, len(a.Highlights), len(a.Label))
	}
	i := len(a.Lines)
	for n := 0; n < i; n++ {
		if len(a.Highlights[n]) > 0 && !info.AddressLinesAmended {
			t.Errorf("%s: line %q highlighted %v, but addressLinesAmended is false", name, a.Label[n], a.Highlights[n])
		}
	}
	for _, el := range []struct {
		name    string
		v       *api.Value
		amended bool
	}{{"city", a.City, info.CityAmended}, {"region", a.Region, info.RegionAmended}, {"postcode", a.Postcode, info.PostcodeAmended}} {
		if el.v == nil || el.v.Value == "" {
			continue
		}
		if marked := len(a.Highlights[i]) > 0; marked != el.amended {
			t.Errorf("%s: %s %q highlighted %v, but %sAmended is %v", name, el.name, a.Label[i], a.Highlights[i], el.name, el.amended)
		}
		i++
	}
}

// TestHighlightsFollowAmendedFlags: the two answers of issue 14, where a
// highlight marked unchanged text.
func TestHighlightsFollowAmendedFlags(t *testing.T) {
	s := newTestService(t, sampleIndex(t), []Integration{NewIntegration(testKey)})
	tok := token(t, s, testKey)
	for _, tt := range []struct {
		name   string
		lines  []string
		kv     []string
		street string // the label line that must not be highlighted
	}{
		{"flat dropped", []string{"Flat 10", "Orchard Avenue"}, []string{"country", "GB", "city", "York"}, "Orchard Avenue"},
		{"abbreviations spelled out", []string{"apt 7 abbey crt, 16 emmet pk"}, []string{"country", "IE"}, "Abbey Court"},
	} {
		q := query(tt.lines, append(tt.kv, "token", tok)...)
		v := decodeVerify(t, do(s, http.MethodGet, "/3.0/verify?"+q.Encode(), "", nil))
		checkHighlightsMatchFlags(t, tt.name, v)
		found := false
		for i, l := range v.Address.Label {
			if l == tt.street {
				found = true
				if len(v.Address.Highlights[i]) != 0 {
					t.Errorf("%s: %q highlighted %v; details %+v", tt.name, l, v.Address.Highlights[i], v.Information.Details)
				}
			}
		}
		if !found {
			t.Errorf("%s: no %q in the label %q", tt.name, tt.street, v.Address.Label)
		}
	}
}

// TestCoordinatesRoundedToReference: a street centroid is a mean of the
// reference's points and showed floating-point noise (53.94568500000002).
func TestCoordinatesRoundedToReference(t *testing.T) {
	s := newTestService(t, sampleIndex(t), []Integration{NewIntegration(testKey)})
	tok := token(t, s, testKey)
	q := query([]string{"Flat 10", "Orchard Avenue"}, "country", "GB", "city", "York", "token", tok)
	v := decodeVerify(t, do(s, http.MethodGet, "/3.0/verify?"+q.Encode(), "", nil))
	if v.Data.Location == nil {
		t.Fatalf("no location in %+v", v.Data)
	}
	for _, f := range []float64{v.Data.Location.Latitude, v.Data.Location.Longitude} {
		if d := decimals(f); d > 6 {
			t.Errorf("coordinate %v has %d decimals; the sample reference has 6", f, d)
		}
	}
}

type recordsMatcher struct {
	fakeMatcher
	recs []gazetteer.Record
}

func (m *recordsMatcher) Records(yield func(*gazetteer.Record) bool) {
	for i := range m.recs {
		if !yield(&m.recs[i]) {
			return
		}
	}
}

func TestCoordDecimals(t *testing.T) {
	tests := []struct {
		name string
		m    Matcher
		want int
	}{
		{"no records to look at", &fakeMatcher{}, defaultCoordDecimals},
		{"no locations", &recordsMatcher{recs: []gazetteer.Record{{}}}, defaultCoordDecimals},
		{"four decimals", &recordsMatcher{recs: []gazetteer.Record{{HasLocation: true, Latitude: 53.1, Longitude: -6.2501}}}, 4},
		{"capped", &recordsMatcher{recs: []gazetteer.Record{{HasLocation: true, Latitude: 53.123456789012, Longitude: 1}}}, maxCoordDecimals},
	}
	for _, tt := range tests {
		if got := coordDecimals(tt.m); got != tt.want {
			t.Errorf("%s: coordDecimals = %d, want %d", tt.name, got, tt.want)
		}
	}
}
