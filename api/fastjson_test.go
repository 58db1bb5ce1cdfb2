package api

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// fastSeeds are answers for the differential tests: the sample answer, its
// compact form, and hand-made variants of the shapes the fast reader must
// decode exactly as encoding/json does, or leave to it.
func fastSeeds(t testing.TB) [][]byte {
	t.Helper()
	sample, err := os.ReadFile("testdata/verify_response.json")
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, sample); err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("testdata/verify_response.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	seeds := [][]byte{sample, compact.Bytes(), golden}
	for _, s := range fastVariants {
		seeds = append(seeds, []byte(s))
	}
	// The sample with one substitution each: unicode, escapes, nulls,
	// missing and extra members, numbers.
	for _, r := range [][2]string{
		{`"Dún Laoghaire"`, `"D\u00fan \"Laoghaire\"\t\/\\\b\f\n\r"`},
		{`"Dún Laoghaire"`, `"\ud83d\ude00 \ud800 \udc00\ud800 x\ud83dy"`},
		{`"Dún Laoghaire"`, "\"D\xffn\xc3 \xed\xa0\x80 \xf4\x90\x80\x80\""},
		{`"Corrected"`, `null`},
		{`"id": 1001`, `"id": null`},
		{`"id": 1001`, `"id": 1e2`},
		{`"id": 1001`, `"id": -0`},
		{`"id": 1001`, `"id": 9223372036854775807`},
		{`"id": 1001`, `"id": 9223372036854775808`},
		{`"id": 1001`, `"id": 1.0`},
		{`"id": 1001`, `"id": "1001"`},
		{`53.2943012`, `53.349800000000002`},
		{`53.2943012`, `-0`},
		{`53.2943012`, `1e2`},
		{`53.2943012`, `1E+400`},
		{`53.2943012`, `-0.0e-0`},
		{`53.2943012`, `null`},
		{`53.2943012`, `"53.29"`},
		{`[[3, 21], [], [0, 10], [0, 8], []]`, `[]`},
		{`[[3, 21], [], [0, 10], [0, 8], []]`, `null`},
		{`[[3, 21], [], [0, 10], [0, 8], []]`, `[null, [null], [1, null], [-1, 0, 2147483648]]`},
		{`[[3, 21], [], [0, 10], [0, 8], []]`, `[[1.5]]`},
		{`"city": {"value": "Dún Laoghaire"},
    "region": {"value": "Co. Dublin"}`, `"city": null, "region": {}`},
		{`"country": {"language": "en", "value": "Ireland", "iso": "IE"},
    "label": ["12 Upper`, `"country": null, "label": ["12 Upper`},
		{`"location": {`, `"location": null, "x": {`},
		{`"complete": true`, `"complete": null`},
		{`"complete": true`, `"complete": "true"`},
		{`"links": [`, `"links": null, "links2": [`},
		{`"lines": [
      {"key": "AddressLine1", "value": "12 Upper George's Street"}
    ]`, `"lines": [], "Lines": null`},
		{`"type": "verify"`, `"Type": "verify"`},
		{`"type": "verify"`, `"TYPE": "verify", "type": "verify"`},
		{`"type": "verify"`, `"type": "verify", "type": "again"`},
		{`"requestId"`, `"req\u0075estId"`},
		{`"requestId"`, `"type"`},
		{`"meta"`, `"requestId"`},
		{`"severity"`, `"Severity"`},
		{`"severity"`, `"ſeverity"`},
		{`"rel"`, `"Kel"`},
		{`"rel"`, `"unknown\u00e9"`},
		{`"boundaries"`, `"Location"`},
		{`"boundaries"`, `"location"`},
		{`"protected": null`, `"protected": [true, false, null, {"a": [-1.5e-3, "x\u0041"]}]`},
	} {
		if !bytes.Contains(sample, []byte(r[0])) {
			t.Fatalf("seed substitution %q does not apply", r[0])
		}
		seeds = append(seeds, bytes.Replace(sample, []byte(r[0]), []byte(r[1]), 1))
	}
	return seeds
}

var fastVariants = []string{
	`{}`, ` { } `, `null`, `[]`, `"x"`, `{} {}`, `{}x`, `{"type":"verify"}` + "\n\t ",
	`{"data":null}`, `{"data":{}}`, `{"data":[]}`, `{"form":null,"information":null,"input":null,"address":null,"links":null,"type":null,"action":null}`,
	`{"address":{"highlights":[[],[0,3]]}}`, `{"address":{"highlights":[[0,3],]}}`,
	`{"address":{"city":{},"region":{"value":null},"postcode":{"value":"x","other":1},"country":{}}}`,
	`{"address":{"city":"x"}}`, `{"address":{"city":{"value":"a","value":"b"}}}`,
	`{"input":{"lines":[null,{},{"key":"k"}],"label":[null,"a",""]}}`,
	`{"input":{"lines":{}}}`, `{"input":{"label":[1]}}`,
	`{"links":[{"rel":"self","href":"https://x/?token=abc&a=b","title":"\u2603"}]}`,
	`{"links":[null]}`, `{"links":[]}`, `{"links":{}}`,
	`{"x":1e999}`, `{"x":01}`, `{"x":-}`, `{"x":1.}`, `{"x":.5}`, `{"x":1e}`, `{"x":+1}`, `{"x":tru}`, `{"x":nul}`, `{"x":truex}`,
	`{"x":"\ud800"}`, `{"x":"\'"}`, `{"x":"\u12"}`, `{"x":"\x"}`, "{\"x\":\"a\tb\"}", "{\"x\":\"\x7f\"}",
	`{"x":[1,2,{"y":[]}],"y":{"z":{}},"z":"","w":null,"v":true,"u":false}`,
	`{"x":1,"x":2}`, `{"a":1,}`, `{,"a":1}`, `{"a" 1}`, `{"a":1 "b":2}`, `{"a":[1 2]}`, `{"a":[,1]}`,
	`{"<":"&","\u00e9":"é","\"":"\\"}`, `{"Action":"x","action":"y"}`, `{"action":"Accept"}`,
	`{"form":{"language":"en","message":{"id":-12,"severity":"Error","value":"v"},"extra":{"deep":[[[]]]}}}`,
	`{"form":{"message":{"id":12.5}}}`, `{"form":{"message":{"id":"12"}}}`, `{"form":{"Message":{}}}`,
	`{"information":{"details":{"city":"Changed","City":"x"}}}`, `{"information":{"details":null,"complete":false}}`,
	`{"data":{"location":{"latitude":1,"longitude":-2.5,"crs":"WGS84","accuracy":"x","z":[1]},"k":[1,2]}}`,
	`{"data":{"location":{"latitude":"1"}}}`, `{"data":{"location":[]}}`, `{"data":{"k":1,"k":2}}`,
	`{"data":{"LOCATION":{}}}`, `{"data":{"location":{},"location":{}}}`,
	`{"meta":{"a":1},"meta":[2]}`, `{"x":` + strings.Repeat("[", 1100) + strings.Repeat("]", 1100) + `}`,
	`{"x":` + strings.Repeat("[", 20) + strings.Repeat("]", 20) + `}`,
	`{"type":"v` + "\xff" + `"}`, `{"t` + "\xe9" + `":1}`, `{"x":"` + "\xc0\xaf" + `"}`,
	`{"type":"a\u0000b"}`, `{"type":"\uD834\uDD1E\uDD1E\uD834"}`, `{"type":"\uDBFF\uDFFF\ud800\u0041"}`,
	`{"İnput":{}}`, `{"lınks":[]}`, `{"input":{"lines":[{"\u212Aey":"x"}]}}`,
}

// checkFastDecode decodes in both ways and fails the test if the fast
// reader accepts in but decodes it otherwise than encoding/json, and if
// UnmarshalJSON (fast reader first) differs from encoding/json at all.
func checkFastDecode(t *testing.T, in []byte) (handled bool) {
	t.Helper()
	fast, ok := fastDecodeVerifyResponse(in)
	var ref VerifyResponse
	refErr := ref.unmarshalJSONReflect(in)
	if ok {
		if refErr != nil {
			t.Fatalf("fast reader accepted %q, encoding/json refused it: %v", in, refErr)
		}
		if !reflect.DeepEqual(fast, ref) {
			t.Fatalf("fast reader decoded %q as\n%#v\nencoding/json as\n%#v", in, fast, ref)
		}
	} else if !reflect.DeepEqual(fast, VerifyResponse{}) {
		t.Fatalf("fast reader refused %q but returned %#v", in, fast)
	}
	var pub VerifyResponse
	pubErr := pub.UnmarshalJSON(in)
	if (pubErr == nil) != (refErr == nil) || (pubErr != nil && pubErr.Error() != refErr.Error()) {
		t.Fatalf("UnmarshalJSON(%q) error %v, encoding/json %v", in, pubErr, refErr)
	}
	if !reflect.DeepEqual(pub, ref) {
		t.Fatalf("UnmarshalJSON(%q) gave\n%#v\nencoding/json\n%#v", in, pub, ref)
	}
	return ok
}

// FuzzFastDecodeMatchesJSON: whatever the fast reader accepts, it decodes
// exactly as encoding/json does (reflect.DeepEqual), and encoding/json
// accepts it too.
func FuzzFastDecodeMatchesJSON(f *testing.F) {
	for _, s := range fastSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkFastDecode(t, in)
	})
}

// TestFastDecode runs the differential check on every seed, and checks that
// the fast reader does handle the ordinary shapes (else it would be no
// faster) and leaves the unusual ones to encoding/json.
func TestFastDecode(t *testing.T) {
	handled := 0
	seeds := fastSeeds(t)
	for _, in := range seeds {
		if checkFastDecode(t, in) {
			handled++
		}
	}
	t.Logf("fast reader handled %d of %d seeds", handled, len(seeds))
	for _, s := range []string{
		`{}`, ` { } `, `{"data":null}`, `{"data":{}}`, `{"links":[]}`, `{"x":1e999}`,
		`{"address":{"highlights":[[],[0,3]]}}`, `{"meta":{"a":1},"meta":[2]}`,
		`{"type":"\uD834\uDD1E\uDD1E\uD834"}`, `{"type":"v` + "\xff" + `"}`,
		`{"<":"&","\u00e9":"é","\"":"\\"}`, `{"lınks":[]}`,
	} {
		if !checkFastDecode(t, []byte(s)) {
			t.Errorf("fast reader did not handle %q", s)
		}
	}
	for _, in := range seeds[:3] {
		if !checkFastDecode(t, in) {
			t.Errorf("fast reader did not handle the sample answer %.40q", in)
		}
	}
	for _, s := range []string{
		`null`, `[]`, `{} {}`, `{"Type":"verify"}`, `{"type":"a","type":"b"}`, `{"İnput":{}}`,
		`{"form":{"Message":{}}}`, `{"input":{"lines":[{"\u212Aey":"x"}]}}`, `{"form":{"message":{"id":1e2}}}`,
		`{"form":{"message":{"id":9223372036854775808}}}`, `{"data":{"location":{"latitude":1e400}}}`,
		`{"data":{"LOCATION":{}}}`, `{"x":"\'"}`, `{"x":01}`, `{"x":` + strings.Repeat("[", 1100) + strings.Repeat("]", 1100) + `}`,
	} {
		if checkFastDecode(t, []byte(s)) {
			t.Errorf("fast reader handled %q, which it should leave to encoding/json", s)
		}
	}
}

// TestFastDecodeValues spells out a few results, independently of
// encoding/json.
func TestFastDecodeValues(t *testing.T) {
	in := `{"type":"D\u00fan \ud83d\ude00\ud800","address":{"highlights":[[],[0,3],null],"city":{}},` +
		`"data":{"location":{"latitude":-0,"longitude":53.349800000000002},"k":  [1, 2] },"links":[],"z":null}`
	v, ok := fastDecodeVerifyResponse([]byte(in))
	if !ok {
		t.Fatal("not handled")
	}
	want := VerifyResponse{
		Type:    "Dún \U0001F600\uFFFD",
		Address: MatchedAddress{Highlights: [][]int{{}, {0, 3}, nil}, City: &Value{}},
		Data: Data{
			Location: &Location{Longitude: 53.3498},
			Extra:    map[string]json.RawMessage{"k": json.RawMessage(`[1, 2]`)},
		},
		Links: []Link{},
		Extra: map[string]json.RawMessage{"z": json.RawMessage(`null`)},
	}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("got\n%#v\nwant\n%#v", v, want)
	}
}

// BenchmarkDecodeVerifyResponseReflect measures the encoding/json path the
// fast reader replaces, for comparison with BenchmarkDecodeVerifyResponse.
func BenchmarkDecodeVerifyResponseReflect(b *testing.B) {
	in, err := os.ReadFile("testdata/verify_response.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		var r VerifyResponse
		if err := r.unmarshalJSONReflect(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeVerifyResponseDirect measures UnmarshalJSON called
// directly, as the client does (json.Unmarshal first scans the whole text
// once more to validate it).
func BenchmarkDecodeVerifyResponseDirect(b *testing.B) {
	in, err := os.ReadFile("testdata/verify_response.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		var r VerifyResponse
		if err := r.UnmarshalJSON(in); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzFastDecodeFragment puts an arbitrary fragment into one of several
// places of the sample answer (a string, a number, a member name, the
// highlights, an unknown member, data), where byte-level mutation of a
// whole answer rarely reaches with valid JSON around it, and runs the
// same differential check.
func FuzzFastDecodeFragment(f *testing.F) {
	sample, err := os.ReadFile("testdata/verify_response.json")
	if err != nil {
		f.Fatal(err)
	}
	slots := []string{
		`"Dún Laoghaire"`, `1001`, `53.2943012`, `[[3, 21], [], [0, 10], [0, 8], []]`, `"requestId"`,
		`"severity"`, `"protected": null`, `{"value": "Co. Dublin"}`, `true`, `"lines"`, `"location"`,
		`"key": "AddressLine1"`, `"building"`,
	}
	for _, s := range slots {
		if !bytes.Contains(sample, []byte(s)) {
			f.Fatalf("slot %q not in the sample", s)
		}
	}
	for i, frag := range []string{
		`"D\u00fan"`, `1e2`, `-0`, `53.349800000000002`, `[[1],null,[]]`, `"Type"`, `"\u0073everity"`,
		`"x": [1, {"y": "\ud800"}]`, `null`, `{}`, `false`, `"Lines"`, `"Location"`, `"key": null`, `"k\u212Aey"`,
	} {
		f.Add(uint8(i), frag)
	}
	f.Fuzz(func(t *testing.T, slot uint8, frag string) {
		s := slots[int(slot)%len(slots)]
		checkFastDecode(t, bytes.Replace(sample, []byte(s), []byte(frag), 1))
	})
}
