package api

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/internal/golden"
	"github.com/go-json-experiment/json/jsontext"
)

// answerSeeds are answers for the round-trip tests: the sample answer and
// variants with awkward strings, numbers, nulls, empty and unknown members.
func answerSeeds(t testing.TB) [][]byte {
	t.Helper()
	sample, err := os.ReadFile("testdata/verify_response.json")
	if err != nil {
		t.Fatal(err)
	}
	seeds := [][]byte{sample}
	for _, s := range []string{
		`{}`, `null`, `{"data":null}`, `{"data":{}}`, `{"Action":"x","action":"y"}`,
		`{"address":{"highlights":[[],[0,3],null]}}`, `{"address":{"lines":[],"city":{}}}`,
		`{"input":{"lines":[null,{},{"key":"k"}],"label":[null,"a",""]}}`,
		`{"links":[{"rel":"self","href":"https://x/?token=abc&a=b","title":"\u2603"}]}`,
		`{"x":[1,2,{"y":[]}],"y":{"z":{}},"z":"","w":null,"v":true,"u":false}`,
		`{"<":"&","\u00e9":"é","\"":"\\"," a ":  { "b" : [ 1 , 2 ] } }`,
		`{"data":{"location":{"latitude":1,"longitude":-2.5e-7,"crs":"WGS84","accuracy":"x","z":[1]},"k":[1,2]}}`,
		`{"type":"v` + "\xff" + `"}`, `{"t` + "\xe9" + `":1}`, `{"type":"a\u0000b\u2028\ud800"}`,
		`{"x":1e999}`, `{"x":1,"x":2}`, `[`, `{"form":{"message":{"id":12.5}}}`,
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// TestGoldenRoundTrip decodes the full sample answer, unknown members
// included, and checks that it re-encodes without loss, through
// encoding/json as the JSONL output does.
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
	var va, vb any
	if json.Unmarshal(in, &va) != nil || json.Unmarshal(out, &vb) != nil || !reflect.DeepEqual(va, vb) {
		t.Errorf("re-encoding lost or changed something:\n%s", out)
	}
	golden.Check(t, "verify_response.golden.json", out)

	// Spot checks that the named members landed in their fields.
	if r.Action != ActionSuggest || r.Information.Details.Region != DetailAdded ||
		r.Address.Postcode == nil || r.Address.Postcode.Value != "A96 X2Y3" ||
		len(r.Address.Highlights) != len(r.Address.Label) || r.Data.Location == nil ||
		r.Data.Location.Latitude != 53.2943012 || r.Input.City.Value != "Dún Laoghaire" ||
		len(r.Links) != 1 || r.Links[0].Rel != "self" {
		t.Errorf("decoded fields wrong: %+v", r)
	}
	if len(r.Extra) != 2 || r.Extra["requestId"] == nil || r.Extra["meta"] == nil {
		t.Errorf("Extra = %v", r.Extra)
	}
	if len(r.Data.Extra) != 2 || r.Data.Extra["boundaries"] == nil || r.Data.Extra["building"] == nil {
		t.Errorf("Data.Extra = %v", r.Data.Extra)
	}
}

func TestDecodeVariants(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		check func(t *testing.T, r *VerifyResponse)
	}{
		{"unknown nested member ignored", `{"type":"verify","information":{"status":"Verified","newFlag":true},"address":{"label":["x"],"zone":1}}`,
			func(t *testing.T, r *VerifyResponse) {
				if r.Information.Status != StatusVerified || r.Extra != nil {
					t.Errorf("%+v", r)
				}
			}},
		{"null data", `{"action":"Confirm","data":null}`,
			func(t *testing.T, r *VerifyResponse) {
				if r.Data.Location != nil || r.Data.Extra != nil {
					t.Errorf("%+v", r.Data)
				}
			}},
		{"address without optional members", `{"action":"Confirm","address":{"label":["Main St"],"highlights":[[]]}}`,
			func(t *testing.T, r *VerifyResponse) {
				if r.Address.City != nil || r.Address.ID != "" || r.Address.Highlights[0] == nil || len(r.Address.Highlights[0]) != 0 {
					t.Errorf("%+v", r.Address)
				}
			}},
		{"data without location", `{"data":{"census":{"sa":"A268"}}}`,
			func(t *testing.T, r *VerifyResponse) {
				if r.Data.Location != nil || string(r.Data.Extra["census"]) != `{"sa":"A268"}` {
					t.Errorf("%+v", r.Data)
				}
			}},
		{"names match exactly: a case variant is unknown", `{"Action":"Accept"}`,
			func(t *testing.T, r *VerifyResponse) {
				if r.Action != "" || string(r.Extra["Action"]) != `"Accept"` {
					t.Errorf("%+v", r)
				}
			}},
		{"invalid UTF-8 becomes U+FFFD", "{\"type\":\"v\xff\"}",
			func(t *testing.T, r *VerifyResponse) {
				if r.Type != "v\uFFFD" {
					t.Errorf("type = %q", r.Type)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := DecodeVerifyResponse([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, r)
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, in := range []string{`[]`, `{"action":1}`, `{"data":[]}`, `{"data":{"location":"x"}}`, `{`, `"verify"`,
		`{"type":"a","type":"b"}`, `{"form":{"message":{"id":1.5}}}`, `{} {}`} {
		if _, err := DecodeVerifyResponse([]byte(in)); err == nil {
			t.Errorf("DecodeVerifyResponse(%s): no error", in)
		}
	}
}

// TestAppendVerifyResponse checks what JSON cannot hold as it is: Extra
// members named like named ones, Extra values that are not JSON and
// coordinates that are not numbers. MarshalJSON refuses them.
func TestAppendVerifyResponse(t *testing.T) {
	tests := []struct {
		name string
		r    VerifyResponse
		want string // substring of the encoding
	}{
		{"extra after named, sorted, compact", VerifyResponse{Extra: map[string]json.RawMessage{"z": json.RawMessage(`1`), "a": json.RawMessage(` {"b" : 2} `)}},
			`"links":null,"a":{"b":2},"z":1}`},
		{"clash with a named member is dropped", VerifyResponse{Action: "Accept", Extra: map[string]json.RawMessage{"action": json.RawMessage(`"Reject"`), "k": json.RawMessage(`{`)}},
			`"action":"Accept",`},
		{"invalid raw JSON as null", VerifyResponse{Extra: map[string]json.RawMessage{"x": json.RawMessage(`{`)}}, `"x":null}`},
		{"empty data with extra", VerifyResponse{Data: Data{Extra: map[string]json.RawMessage{"k": json.RawMessage(`true`)}}},
			`"data":{"k":true}`},
		{"NaN and infinity as null", VerifyResponse{Data: Data{Location: &Location{Latitude: math.NaN(), Longitude: math.Inf(-1)}}},
			`"location":{"latitude":null,"longitude":null,"crs":"","accuracy":""}`},
		{"no HTML escaping, U+2028 escaped", VerifyResponse{Links: []Link{{Href: "/v?a=<b>&c=\u2028"}}},
			`"href":"/v?a=<b>&c=\u2028"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := AppendVerifyResponse([]byte("prefix"), &tt.r)
			if !bytes.HasPrefix(b, []byte("prefix")) || !strings.Contains(string(b), tt.want) {
				t.Fatalf("got %s, want it to contain %s", b, tt.want)
			}
			if strings.Contains(string(b), "Reject") {
				t.Errorf("clashing extra member encoded: %s", b)
			}
			if _, err := DecodeVerifyResponse(b[len("prefix"):]); err != nil {
				t.Errorf("own encoding does not decode: %v", err)
			}
			m, err := json.Marshal(tt.r)
			if wantErr := strings.Contains(tt.name, " null") || strings.Contains(tt.name, "clash"); (err != nil) != wantErr {
				t.Errorf("json.Marshal = %s, %v; want an error: %v", m, err, wantErr)
			}
		})
	}
}

// checkRoundTrip holds DecodeVerifyResponse(AppendVerifyResponse(v)) to v
// and the encoding to encoding/json's for an answer encoding/json writes
// (it escapes <, > and &, this does not).
func checkRoundTrip(t testing.TB, v *VerifyResponse) {
	t.Helper()
	b := AppendVerifyResponse(nil, v)
	got, err := DecodeVerifyResponse(b)
	if err != nil {
		t.Fatalf("DecodeVerifyResponse of %q: %v", b, err)
	}
	if !reflect.DeepEqual(got, v) {
		t.Fatalf("round trip of\n%#v\ngave\n%#v\nthrough %q", v, got, b)
	}
	if again := AppendVerifyResponse(nil, got); !bytes.Equal(again, b) {
		t.Fatalf("encoding not stable:\n%s\n%s", b, again)
	}
	if v.Extra != nil || v.Data.Extra != nil {
		return
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if enc.Encode((*wireResponse)(v)) != nil {
		return
	}
	// encoding/json knows no embedded fallback: it writes Extra as a member.
	ref := bytes.ReplaceAll(bytes.TrimSuffix(want.Bytes(), []byte("\n")), []byte(`,"Extra":null`), nil)
	if ref = bytes.ReplaceAll(ref, []byte(`"Extra":null`), nil); !bytes.Equal(b, ref) {
		t.Fatalf("encoding differs from encoding/json's\n got %s\nwant %s", b, want.Bytes())
	}
}

// normalize makes a decoded answer one that JSON represents without loss:
// Extra values as they are written (Extra keeps the raw bytes; writing
// compacts them, unescapes what need not be escaped and mangles invalid
// UTF-8), empty omitempty slices nil.
func normalize(v *VerifyResponse) {
	for _, m := range []map[string]json.RawMessage{v.Extra, v.Data.Extra} {
		for k, raw := range m {
			jv := jsontext.Value(bytes.Clone(raw))
			if jv.Format(wireOptions) == nil {
				m[k] = json.RawMessage(jv)
			}
		}
	}
	if len(v.Address.Lines) == 0 {
		v.Address.Lines = nil
	}
}

var awkwardStrings = []string{
	"", "plain", "Dún Laoghaire", "日本語の住所 🏠", `quote " and backslash \ and slash /`,
	"tab\tnew\nline\rcr\bbs\fff", "\x00\x01\x1f\x7f", "line\u2028sep\u2029par", "<script>&amp;</script>",
	"a=b&c=d?e#f", "\xef\xbf\xbd real replacement", "\u00a0nbsp\u200bzwsp\ufeffbom", "\U0010ffff",
}

var awkwardFloats = []float64{
	53.3498, -6.2603, 1e-7, -1e-7, 1e-6, 9.99999e-7, 1e21, -1e21, 1e20, 0, math.Copysign(0, -1),
	1.0 / 3, 123456789.123456789, math.MaxFloat64, 5e-324, 1e-300, 2.5e-10, -180,
}

// filledAnswer is an answer with every member set from a, b and c.
func filledAnswer(a, b, c string) VerifyResponse {
	return VerifyResponse{
		Type: a, Action: Action(b),
		Form: Form{Language: c, Message: Message{ID: -7, Severity: a, Value: b}},
		Information: Information{Status: c, MatchLevel: a, Complete: true, SubBuilding: b,
			AddressLinesAmended: true, RegionAmended: true,
			Details: Details{Organization: a, Street: b, AddressLines: c, SubBuildingNumber: a,
				BuildingNumber: b, City: c, Region: a, Postcode: b}},
		Input: InputAddress{Lines: []Line{{Key: a, Value: b}, {Key: c, Value: a}},
			City: Value{Value: b}, Region: Value{Value: c}, Postcode: Value{Value: a},
			Country: Country{Language: b, Value: c, ISO: a}, Label: []string{a, b, c}},
		Address: MatchedAddress{ID: a, Language: b, Charset: c, Variation: a,
			Lines: []Line{{Key: b, Value: c}}, City: &Value{Value: a}, Region: &Value{Value: b},
			Postcode: &Value{Value: c}, Country: &Country{Language: a, Value: b, ISO: c},
			Label: []string{c, b, a}, Highlights: [][]int{{0, 3}, {}, nil}},
		Data:  Data{Location: &Location{Latitude: 53.3498, Longitude: -6.2603, CRS: a, Accuracy: c}},
		Links: []Link{{Rel: a, Href: b, Title: c}},
	}
}

// TestVerifyResponseRoundTrip encodes and decodes hand-made answers with
// awkward strings and numbers, and the decodable seeds.
func TestVerifyResponseRoundTrip(t *testing.T) {
	for i, s := range awkwardStrings {
		v := filledAnswer(s, awkwardStrings[(i+1)%len(awkwardStrings)], "c")
		v.Data.Location.Latitude, v.Data.Location.Longitude = awkwardFloats[i], -awkwardFloats[len(awkwardFloats)-1-i]
		checkRoundTrip(t, &v)
	}
	n := 0
	for _, in := range answerSeeds(t) {
		if v, err := DecodeVerifyResponse(in); err == nil {
			normalize(v)
			checkRoundTrip(t, v)
			n++
		}
	}
	if n < 15 {
		t.Fatalf("only %d seeds decoded", n)
	}
}

// FuzzVerifyResponseRoundTrip decodes arbitrary bytes: no panic, and
// whatever decodes comes back unchanged through AppendVerifyResponse and
// DecodeVerifyResponse.
func FuzzVerifyResponseRoundTrip(f *testing.F) {
	for _, s := range answerSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		v, err := DecodeVerifyResponse(in)
		if err != nil {
			return
		}
		normalize(v)
		checkRoundTrip(t, v)
	})
}

// BenchmarkAppendVerifyResponse measures encoding the sample answer.
func BenchmarkAppendVerifyResponse(b *testing.B) {
	in, err := os.ReadFile("testdata/verify_response.golden.json")
	if err != nil {
		b.Fatal(err)
	}
	v, err := DecodeVerifyResponse(in)
	if err != nil {
		b.Fatal(err)
	}
	v.Extra, v.Data.Extra = nil, nil
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		buf = AppendVerifyResponse(buf[:0], v)
	}
	b.SetBytes(int64(len(buf)))
}
