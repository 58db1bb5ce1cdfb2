package api

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"reflect"
	"testing"
)

// wireVerify is VerifyResponse without its MarshalJSON: what the service
// encodes with encoding/json, and the reference AppendVerifyResponse must
// agree with byte for byte when there are no Extra members.
type wireVerify VerifyResponse

// reflectEncode is the reference encoding: a json.Encoder with
// SetEscapeHTML(false), its trailing newline removed.
func reflectEncode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), err
}

// checkAppend holds AppendVerifyResponse to encoding/json: the same bytes
// for answers encoding/json writes without Extra members, and for every
// answer a text that decodes to what json.Marshal's text decodes to, or,
// when json.Marshal refuses v, a text that decodes at all.
func checkAppend(t testing.TB, v *VerifyResponse) {
	t.Helper()
	prefix := []byte("prefix")
	got := AppendVerifyResponse(append([]byte(nil), prefix...), v)
	if !bytes.HasPrefix(got, prefix) {
		t.Fatalf("AppendVerifyResponse lost dst: %q", got)
	}
	got = got[len(prefix):]
	if len(v.Extra) == 0 && len(v.Data.Extra) == 0 {
		want, err := reflectEncode((*wireVerify)(v))
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("AppendVerifyResponse differs from encoding/json\n got: %q\nwant: %q", got, want)
		}
	}
	dec, err := DecodeVerifyResponse(got)
	if err != nil {
		t.Fatalf("DecodeVerifyResponse of %q: %v", got, err)
	}
	m, err := json.Marshal(v)
	if err != nil {
		return // NaN, infinities or invalid Extra: written as null
	}
	var want VerifyResponse
	if err := json.Unmarshal(m, &want); err != nil {
		t.Fatalf("json.Unmarshal of json.Marshal's %q: %v", m, err)
	}
	escapeExtra(dec)
	escapeExtra(&want)
	if !reflect.DeepEqual(*dec, want) {
		t.Fatalf("decoded\n%#v\nencoding/json round trip\n%#v\nfrom %q", *dec, want, got)
	}
}

// escapeExtra rewrites Extra values with <, > and & escaped, as
// json.Marshal writes them and AppendVerifyResponse does not.
func escapeExtra(v *VerifyResponse) {
	for _, m := range []map[string]json.RawMessage{v.Extra, v.Data.Extra} {
		for k, raw := range m {
			var buf bytes.Buffer
			json.HTMLEscape(&buf, raw)
			m[k] = buf.Bytes()
		}
	}
}

// checkRoundTrip asserts DecodeVerifyResponse(AppendVerifyResponse(v))
// equals v, an answer that JSON represents without loss (every omitempty
// slice nil or non-empty, Extra values compact).
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
}

var awkwardStrings = []string{
	"", "plain", "Dún Laoghaire", "Łódź – ‘quoted’", "日本語の住所", "emoji 🏠 house",
	`quote " and backslash \ and slash /`, "tab\tnew\nline\rcr\bbs\fff", "\x00\x01\x1f\x7f",
	"line\u2028sep\u2029par", "<script>&amp;</script>", "a=b&c=d?e#f",
	"invalid \xff utf8", "\xc3", "\xe2\x80", "\xed\xa0\x80 surrogate", "\xf4\x90\x80\x80 too big",
	"\xef\xbf\xbd real replacement", "\u00a0nbsp\u200bzwsp\ufeffbom", "\U0010ffff",
}

var awkwardFloats = []float64{
	53.3498, -6.2603, 1e-7, -1e-7, 1e-6, 9.99999e-7, 1e21, -1e21, 1e20, 999999999999999999999.0,
	0, math.Copysign(0, -1), 1, -1, 0.1, 1.0 / 3, 123456789.123456789, math.MaxFloat64,
	math.SmallestNonzeroFloat64, 5e-324, 1e-300, 1e300, 2.5e-10, 90, -180,
	math.NaN(), math.Inf(1), math.Inf(-1),
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

// TestAppendVerifyResponseMatchesJSON holds the encoder to encoding/json
// over hand-made answers with awkward strings, numbers, empty and absent
// members and Extra members.
func TestAppendVerifyResponseMatchesJSON(t *testing.T) {
	for _, str := range awkwardStrings {
		v := filledAnswer(str, str+"x", "<&>"+str)
		checkAppend(t, &v)
	}
	for _, f := range awkwardFloats {
		v := filledAnswer("a", "b", "c")
		v.Data.Location = &Location{Latitude: f, Longitude: -f, CRS: "EPSG:4326", Accuracy: "BUILDING"}
		checkAppend(t, &v)
	}
	var zero VerifyResponse
	checkAppend(t, &zero)
	empty := VerifyResponse{Input: InputAddress{Lines: []Line{}, Label: []string{}},
		Address: MatchedAddress{Lines: []Line{}, Label: []string{}, Highlights: [][]int{nil, {}, {-1, 0, math.MaxInt32}}},
		Links:   []Link{}, Data: Data{Location: &Location{}}}
	checkAppend(t, &empty)

	extra := map[string]json.RawMessage{
		"x": json.RawMessage(` { "a" : [1, 2] } `), "<&>": json.RawMessage(`"<&>"`), "Type": json.RawMessage(`1`),
		"LOCATION": json.RawMessage(`2`), "links": json.RawMessage(`3`), "linkſ": json.RawMessage(`4`),
		"bad": json.RawMessage(`{`), "nil": nil,
	}
	for _, loc := range []*Location{nil, {Latitude: 1}} {
		v := filledAnswer("a", "b", "c")
		v.Data.Location = loc
		v.Data.Extra = extra
		checkAppend(t, &v)
		v.Extra = extra
		checkAppend(t, &v)
		v.Data.Extra = nil
		checkAppend(t, &v)
	}

	// Extra members the decoder keeps in Extra come back; the others do
	// not, nor the invalid ones (as null).
	v := filledAnswer("a", "b", "c")
	v.Extra, v.Data.Extra = extra, extra
	got, err := DecodeVerifyResponse(AppendVerifyResponse(nil, &v))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]json.RawMessage{"x": json.RawMessage(`{"a":[1,2]}`), "<&>": json.RawMessage(`"<&>"`),
		"LOCATION": json.RawMessage(`2`), "linkſ": json.RawMessage(`4`), "bad": json.RawMessage(`null`), "nil": json.RawMessage(`null`)}
	if !reflect.DeepEqual(got.Extra, want) {
		t.Errorf("Extra came back as %q, want %q", got.Extra, want)
	}
	want = map[string]json.RawMessage{"x": json.RawMessage(`{"a":[1,2]}`), "<&>": json.RawMessage(`"<&>"`),
		"Type": json.RawMessage(`1`), "links": json.RawMessage(`3`), "linkſ": json.RawMessage(`4`),
		"bad": json.RawMessage(`null`), "nil": json.RawMessage(`null`)}
	if !reflect.DeepEqual(got.Data.Extra, want) {
		t.Errorf("Data.Extra came back as %q, want %q", got.Data.Extra, want)
	}

	// Not JSON numbers: null, decoded as 0.
	v = filledAnswer("a", "b", "c")
	v.Data.Location.Latitude, v.Data.Location.Longitude = math.NaN(), math.Inf(-1)
	got, err = DecodeVerifyResponse(AppendVerifyResponse(nil, &v))
	if err != nil {
		t.Fatal(err)
	}
	if l := got.Data.Location; l.Latitude != 0 || l.Longitude != 0 || l.CRS != "a" {
		t.Errorf("non-finite coordinates came back as %+v", l)
	}
}

// TestVerifyResponseRoundTrip decodes the sample answers and the fast
// reader's seeds, and checks that AppendVerifyResponse then
// DecodeVerifyResponse gives each back unchanged.
func TestVerifyResponseRoundTrip(t *testing.T) {
	n := 0
	for _, in := range fastSeeds(t) {
		v, err := DecodeVerifyResponse(in)
		if err != nil {
			continue
		}
		normalize(v)
		checkRoundTrip(t, v)
		checkAppend(t, v)
		n++
	}
	if n < 50 {
		t.Fatalf("only %d answers decoded", n)
	}
	for _, f := range []string{"testdata/verify_response.json", "testdata/verify_response.golden.json"} {
		in, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := DecodeVerifyResponse(in)
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Extra) == 0 || v.Data.Location == nil {
			t.Fatalf("%s: expected Extra members and a location", f)
		}
		normalize(v)
		checkRoundTrip(t, v)
	}
}

// normalize makes a decoded answer one that JSON represents without loss:
// Extra values compact, empty omitempty slices nil.
func normalize(v *VerifyResponse) {
	for _, m := range []map[string]json.RawMessage{v.Extra, v.Data.Extra} {
		for k, raw := range m {
			var buf bytes.Buffer
			if json.Compact(&buf, raw) == nil {
				m[k] = buf.Bytes()
			}
		}
	}
	if len(v.Address.Lines) == 0 {
		v.Address.Lines = nil
	}
}

// FuzzAppendVerifyResponseMatchesJSON builds answers from fuzzed strings
// and numbers, with members present, empty or absent by mask, and holds the
// encoder to encoding/json.
func FuzzAppendVerifyResponseMatchesJSON(f *testing.F) {
	for i, s := range awkwardStrings {
		fl := awkwardFloats[i%len(awkwardFloats)]
		f.Add(s, "Dublin", "<&>", fl, -fl, i*1000-7, uint32(i*2654435761))
	}
	f.Fuzz(func(t *testing.T, a, b, c string, lat, lon float64, id int, mask uint32) {
		v := filledAnswer(a, b, c)
		v.Form.Message.ID = id
		v.Address.Highlights = [][]int{{id, len(a)}, {-id}}
		bit := func(i uint) bool { return mask&(1<<i) != 0 }
		if bit(0) {
			v.Data.Location = nil
		} else {
			v.Data.Location.Latitude, v.Data.Location.Longitude = lat, lon
		}
		if bit(1) {
			v.Address.ID, v.Address.Language, v.Address.Charset = "", "", ""
		}
		if bit(2) {
			v.Address.Variation = ""
		}
		if bit(3) {
			v.Address.Lines = nil
		}
		if bit(4) {
			v.Address.Lines = []Line{}
		}
		if bit(5) {
			v.Address.City, v.Address.Region = nil, nil
		}
		if bit(6) {
			v.Address.Postcode, v.Address.Country = nil, nil
		}
		if bit(7) {
			v.Address.Label, v.Address.Highlights = nil, nil
		}
		if bit(8) {
			v.Input.Lines, v.Input.Label = nil, nil
		}
		if bit(9) {
			v.Input.Lines, v.Input.Label = []Line{}, []string{}
		}
		if bit(10) {
			v.Links = nil
		}
		if bit(11) {
			v.Links = append(v.Links, Link{Rel: c, Href: a + "?x=" + b, Title: b})
		}
		if bit(12) {
			v.Data.Extra = map[string]json.RawMessage{a: json.RawMessage(b), "k": json.RawMessage(`"v"`)}
		}
		if bit(13) {
			v.Extra = map[string]json.RawMessage{b: json.RawMessage(c), "k": json.RawMessage(`"v"`)}
		}
		v.Information.Complete, v.Information.CityAmended, v.Information.PostcodeAmended = bit(14), bit(15), bit(16)
		checkAppend(t, &v)
	})
}

// FuzzVerifyResponseRoundTrip decodes arbitrary bytes: whatever decodes
// must come back unchanged through AppendVerifyResponse and
// DecodeVerifyResponse.
func FuzzVerifyResponseRoundTrip(f *testing.F) {
	for _, s := range fastSeeds(f) {
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
