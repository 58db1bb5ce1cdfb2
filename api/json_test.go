package api

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// jsonEqual compares two JSON texts as values (member order and spacing do
// not matter).
func jsonEqual(t testing.TB, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("first text: %v", err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("second text: %v", err)
	}
	return reflect.DeepEqual(va, vb)
}

// TestGoldenRoundTrip decodes the full sample answer, unknown members
// included, and checks that it re-encodes without loss.
func TestGoldenRoundTrip(t *testing.T) {
	in, err := os.ReadFile("testdata/verify_response.json")
	if err != nil {
		t.Fatal(err)
	}
	var r VerifyResponse
	if err := json.Unmarshal(in, &r); err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, '\n')
	if !jsonEqual(t, in, out) {
		t.Errorf("re-encoding lost or changed something:\n%s", out)
	}

	const golden = "testdata/verify_response.golden.json"
	if *update {
		if err := os.WriteFile(golden, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(out, want) {
		t.Errorf("re-encoding differs from %s (go test -update rewrites it):\n%s", golden, out)
	}

	// Spot checks that the named members landed in their fields.
	if r.Action != ActionSuggest || r.Information.Details.Region != DetailAdded ||
		r.Address.Postcode == nil || r.Address.Postcode.Value != "A96 X2Y3" ||
		len(r.Address.Highlights) != len(r.Address.Label) || r.Data.Location == nil ||
		r.Data.Location.Latitude != 53.2943012 || r.Input.City.Value != "Dún Laoghaire" ||
		len(r.Links) != 1 || r.Links[0].Rel != "self" {
		t.Errorf("decoded fields wrong: %+v", r)
	}
	for _, k := range []string{"requestId", "meta"} {
		if _, ok := r.Extra[k]; !ok {
			t.Errorf("Extra lacks %q: %v", k, r.Extra)
		}
	}
	for _, k := range []string{"boundaries", "building"} {
		if _, ok := r.Data.Extra[k]; !ok {
			t.Errorf("Data.Extra lacks %q: %v", k, r.Data.Extra)
		}
	}
	if len(r.Extra) != 2 || len(r.Data.Extra) != 2 {
		t.Errorf("Extra holds named members: %v / %v", r.Extra, r.Data.Extra)
	}
}

func TestDecodeVariants(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		check func(t *testing.T, r VerifyResponse)
	}{
		{"unknown nested member ignored", `{"type":"verify","information":{"status":"Verified","newFlag":true},"address":{"label":["x"],"zone":1}}`,
			func(t *testing.T, r VerifyResponse) {
				if r.Information.Status != StatusVerified || r.Extra != nil {
					t.Errorf("%+v", r)
				}
			}},
		{"null data", `{"action":"Confirm","data":null}`,
			func(t *testing.T, r VerifyResponse) {
				if r.Data.Location != nil || r.Data.Extra != nil {
					t.Errorf("%+v", r.Data)
				}
			}},
		{"address without optional members", `{"action":"Confirm","address":{"label":["Main St"],"highlights":[[]]}}`,
			func(t *testing.T, r VerifyResponse) {
				if r.Address.City != nil || r.Address.ID != "" || len(r.Address.Highlights[0]) != 0 {
					t.Errorf("%+v", r.Address)
				}
			}},
		{"data without location", `{"data":{"census":{"sa":"A268"}}}`,
			func(t *testing.T, r VerifyResponse) {
				if r.Data.Location != nil || string(r.Data.Extra["census"]) != `{"sa":"A268"}` {
					t.Errorf("%+v", r.Data)
				}
			}},
		{"case variant of a named member is not extra", `{"Action":"Accept"}`,
			func(t *testing.T, r VerifyResponse) {
				if r.Action != ActionAccept || r.Extra != nil {
					t.Errorf("%+v", r)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r VerifyResponse
			if err := json.Unmarshal([]byte(tt.in), &r); err != nil {
				t.Fatal(err)
			}
			tt.check(t, r)
			if _, err := json.Marshal(r); err != nil {
				t.Errorf("re-encode: %v", err)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, in := range []string{`[]`, `{"action":1}`, `{"data":[]}`, `{"data":{"location":"x"}}`, `{`, `"verify"`} {
		var r VerifyResponse
		if err := json.Unmarshal([]byte(in), &r); err == nil {
			t.Errorf("Unmarshal(%s): no error", in)
		}
	}
}

func TestMarshalExtra(t *testing.T) {
	tests := []struct {
		name    string
		r       VerifyResponse
		want    string // substring of the encoding
		wantErr bool
	}{
		{"extra after named", VerifyResponse{Extra: map[string]json.RawMessage{"z": json.RawMessage(`1`), "a": json.RawMessage(` {"b" : 2} `)}},
			`"links":null,"a":{"b":2},"z":1}`, false},
		{"clash with a named member is dropped", VerifyResponse{Action: "Accept", Extra: map[string]json.RawMessage{"action": json.RawMessage(`"Reject"`)}},
			`"action":"Accept"`, false},
		{"invalid raw JSON", VerifyResponse{Extra: map[string]json.RawMessage{"x": json.RawMessage(`{`)}}, "", true},
		{"empty data with extra", VerifyResponse{Data: Data{Extra: map[string]json.RawMessage{"k": json.RawMessage(`true`)}}},
			`"data":{"k":true}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.r)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if !strings.Contains(string(b), tt.want) {
				t.Errorf("got %s, want it to contain %s", b, tt.want)
			}
			if strings.Contains(string(b), "Reject") {
				t.Errorf("clashing extra member encoded: %s", b)
			}
		})
	}
}
