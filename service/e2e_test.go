package service

import (
	"context"
	"net/http"
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

// TestEndToEndSample runs the service over the real gazetteer and the
// bundled sample reference.
func TestEndToEndSample(t *testing.T) {
	ix := sampleIndex(t)
	ieOnly := NewIntegration("pub_ie")
	ieOnly.AllowedCountries = []string{"IE"}
	noPO := NewIntegration("pub_nopo")
	noPO.POBoxes = false
	s := newTestService(t, ix, []Integration{NewIntegration(testKey), ieOnly, noPO})
	tests := []struct {
		name, key string
		lines     []string
		country   string
		actions   []api.Action // any of these
		id        string
		msg       int
		check     func(t *testing.T, v api.VerifyResponse)
	}{
		{name: "exact", key: testKey, lines: []string{"1 Orchard Avenue", "Dún Laoghaire", "A96 01YD"}, country: "IE",
			actions: []api.Action{api.ActionAccept}, id: "IE00000290",
			check: func(t *testing.T, v api.VerifyResponse) {
				if v.Data.Location == nil || v.Data.Location.Accuracy != "BUILDING" {
					t.Errorf("location %+v", v.Data.Location)
				}
			}},
		{name: "untidy", key: testKey, lines: []string{"1 orchard ave", "dun laoghaire"}, country: "Ireland",
			actions: []api.Action{api.ActionAccept, api.ActionSuggest}, id: "IE00000290",
			check: func(t *testing.T, v api.VerifyResponse) {
				// "Dún" gains a fada: the first word, counted in characters.
				for i, l := range v.Address.Label {
					if l == "Dún Laoghaire" {
						if h := v.Address.Highlights[i]; len(h) != 2 || h[0] != 0 || h[1] != 3 {
							t.Errorf("highlight of %q = %v, want [0 3]", l, h)
						}
						return
					}
				}
				t.Errorf("no Dún Laoghaire line in %q", v.Address.Label)
			}},
		{name: "po box allowed", key: testKey, lines: []string{"PO Box 321", "Dublin 15", "D15 01YD"}, country: "IE",
			actions: []api.Action{api.ActionAccept}, id: "IE00000221"},
		{name: "po box rejected", key: "pub_nopo", lines: []string{"PO Box 321", "Dublin 15", "D15 01YD"}, country: "IE",
			actions: []api.Action{api.ActionReject}, id: "IE00000221", msg: MsgRejectPOBox},
		{name: "uk allowed", key: testKey, lines: []string{"1 Mulberry Way", "London", "SW1A 0AQ"}, country: "GB",
			actions: []api.Action{api.ActionAccept}, id: "GB00001324"},
		{name: "uk rejected", key: "pub_ie", lines: []string{"1 Mulberry Way", "London", "SW1A 0AQ"}, country: "United Kingdom",
			actions: []api.Action{api.ActionReject}, id: "GB00001324", msg: MsgRejectCountry},
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
