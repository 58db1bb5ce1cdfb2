package refimport

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/internal/golden"

	"github.com/addrclean/addrclean/gazetteer"
)

// convertFile runs a converter on a testdata file and loads what it wrote.
func convertFile(t *testing.T, name string, conv func(context.Context, *os.File, *bytes.Buffer) (Stats, error)) (string, Stats, *gazetteer.Index) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	st, err := conv(context.Background(), f, &out)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	ix, err := gazetteer.Load(context.Background(), bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatalf("%s: output does not load: %v", name, err)
	}
	if ix.Len() != st.Written {
		t.Errorf("%s: wrote %d, loaded %d", name, st.Written, ix.Len())
	}
	return out.String(), st, ix
}

func paf(ctx context.Context, f *os.File, b *bytes.Buffer) (Stats, error) { return PAF(ctx, f, b) }

func oa(country string) func(context.Context, *os.File, *bytes.Buffer) (Stats, error) {
	return func(ctx context.Context, f *os.File, b *bytes.Buffer) (Stats, error) {
		return OpenAddresses(ctx, f, b, country)
	}
}

// TestPAFCSV converts the PAF-style sample: every record is written and
// loads, and the shapes PAF needs come out right.
func TestPAFCSV(t *testing.T) {
	out, st, ix := convertFile(t, "paf.csv", paf)
	golden.Check(t, "paf.golden.csv", []byte(out))
	if st.Read != 221 || st.Written != 221 || len(st.Skipped) != 0 {
		t.Errorf("stats %v", st)
	}
	var rooms, crown, boxes int
	ix.Records(func(r *gazetteer.Record) bool {
		if r.BuildingID != "" {
			rooms++
			if !strings.HasPrefix(r.ID, r.BuildingID+"-") || !strings.HasPrefix(r.SubBuilding, "Room ") {
				t.Errorf("room %+v", r)
			}
		}
		switch r.Country {
		case "JE", "GG", "IM":
			crown++
			if pc := r.Postcode[:2]; pc != map[string]string{"JE": "JE", "GG": "GY", "IM": "IM"}[r.Country] {
				t.Errorf("%s in %s", r.Postcode, r.Country)
			}
		case "GB":
		default:
			t.Errorf("country %s", r.Country)
		}
		if r.Type == gazetteer.POBox {
			boxes++
		}
		if strings.ToUpper(r.City) == r.City {
			t.Errorf("town in capitals: %q", r.City)
		}
		return true
	})
	if rooms != 30 || crown < 20 || boxes != 4 {
		t.Errorf("rooms %d, crown %d, PO boxes %d", rooms, crown, boxes)
	}
	for id, lines := range map[string]string{
		"23752684": "Northgate Engineering Ltd|Accounts Department|4 Harrowden Avenue",
	} {
		if r, ok := ix.Lookup(id); !ok || strings.Join(r.Lines(), "|") != lines {
			t.Errorf("%s: %v %v", id, r, ok)
		}
	}
}

// TestPAFJSON converts the reseller-shaped JSON of a part of the sample:
// each record must equal the one converted from the CSV.
func TestPAFJSON(t *testing.T) {
	_, _, fromCSV := convertFile(t, "paf.csv", paf)
	_, st, ix := convertFile(t, "paf.json", paf)
	if st.Read != 32 || st.Written != 32 {
		t.Errorf("stats %v", st)
	}
	ix.Records(func(r *gazetteer.Record) bool {
		c, ok := fromCSV.Lookup(r.ID)
		if !ok || *c != *r {
			t.Errorf("JSON %+v\n CSV %+v", r, c)
		}
		return true
	})
}

// TestPAFRaw reads Royal Mail's header-less PAF CSV.
func TestPAFRaw(t *testing.T) {
	_, st, ix := convertFile(t, "paf-raw.csv", paf)
	if st.Written != 5 {
		t.Fatalf("stats %v", st)
	}
	for _, tc := range []struct {
		id, lines string
		typ       gazetteer.AddressType
	}{
		{"23750010", "48 Aldermoor Road", gazetteer.Residential},
		{"23750911", "3 Hawthorn Yard|Chapel Street|Headingley", gazetteer.Residential},
		{"23751002", "PO Box 1234", gazetteer.POBox},
		{"23751050", "Taigh Ceilidh Trust|7 Marchmont Crescent", gazetteer.Commercial},
		{"23751099", "12A Otley Road", gazetteer.Residential}, // PAF's "12A" is a building name
	} {
		r, ok := ix.Lookup(tc.id)
		if !ok || strings.Join(r.Lines(), "|") != tc.lines || r.Type != tc.typ {
			t.Errorf("%s: %+v", tc.id, r)
		}
	}
}

func TestOpenAddressesCSV(t *testing.T) {
	out, st, ix := convertFile(t, "oa.csv", oa("IE"))
	golden.Check(t, "oa.golden.csv", []byte(out))
	want := "read 8, wrote 5, skipped 3 (no city: 1, no street: 1, repeated id: 1), values left out 2 (bad coordinates: 1, postcode not valid for the country: 1)"
	if st.String() != want {
		t.Errorf("stats\n%s, want\n%s", st, want)
	}
	r, _ := ix.Lookup("a1b2c3d4e5f60718")
	if r == nil || r.Street != "Main Street" || r.City != "Ennis" || r.Region != "Clare" || r.Postcode != "V95 X2Y3" || !r.HasLocation {
		t.Errorf("record %+v", r)
	}
	if r, _ := ix.Lookup("c1b2c3d4e5f60718"); r == nil || r.City != "Ennis" {
		t.Errorf("DISTRICT as the town: %+v", r)
	}
	if r, _ := ix.Lookup("X22"); r == nil || r.Postcode != "" || r.HasLocation {
		t.Errorf("bad postcode and 0,0 left out: %+v", r)
	}
}

func TestOpenAddressesGeoJSON(t *testing.T) {
	for _, name := range []string{"oa.geojson", "oa-collection.geojson"} {
		_, st, ix := convertFile(t, name, oa("ie"))
		if st.Read != 3 || st.Written != 2 || st.Skipped["no city"] != 1 {
			t.Errorf("%s: %v", name, st)
		}
		if r, ok := ix.Lookup("b1b2c3d4e5f60718"); !ok || r.SubBuilding != "Apt 2" || r.Latitude != 52.845 || r.Postcode != "V95 X2Y4" {
			t.Errorf("%s: %+v", name, r)
		}
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, in string
		conv     func(context.Context, *strings.Reader) error
		want     error
		line     int
	}{
		{"paf of an OA file", "LON,LAT,NUMBER,STREET\n1,2,3,x\n", pafS, ErrFormat, 0},
		{"paf empty", "", pafS, ErrFormat, 0},
		{"paf bad quote", "udprn,post_town,thoroughfare\n1,LEEDS,\"Main\" St\n", pafS, nil, 2},
		{"paf truncated json", `[{"udprn": 1, "post_town": "LEEDS"`, pafS, nil, 0},
		{"paf json not records", `"hello"`, pafS, ErrFormat, 0},
		{"oa without street", "LON,LAT,CITY\n1,2,x\n", oaS, ErrFormat, 0},
		{"oa no country", "LON,LAT,NUMBER,STREET\n", func(ctx context.Context, r *strings.Reader) error {
			_, err := OpenAddresses(ctx, r, &bytes.Buffer{}, "")
			return err
		}, ErrFormat, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.conv(ctx, strings.NewReader(tc.in))
			if err == nil {
				t.Fatal("no error")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
			var se *SourceError
			if tc.want == nil && !errors.As(err, &se) {
				t.Errorf("err = %v, want a *SourceError", err)
			}
			if tc.line > 0 && (se == nil || se.Line != tc.line) {
				t.Errorf("err = %v, want line %d", err, tc.line)
			}
		})
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := PAF(cctx, strings.NewReader("udprn,post_town,thoroughfare\n1,LEEDS,Main St\n"), &bytes.Buffer{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestJSONErrorSaidOnce: an error in the JSON input says where it is
// once, whether it is met in a record or while looking for the records.
func TestJSONErrorSaidOnce(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"x": 1, "y" 2}`, "refimport: JSON at byte 13: expected colon after object key"},
		{`{"result": x}`, "refimport: JSON at byte 11: invalid character 'x' looking for beginning of value"},
		{`{"udprn": 1`, "refimport: JSON at byte 11: unexpected EOF"},
		{`[{"udprn": 1}, ]`, "refimport: JSON at byte 14: invalid character ']' looking for beginning of value"},
	} {
		if err := pafS(context.Background(), strings.NewReader(tc.in)); err == nil || err.Error() != tc.want {
			t.Errorf("%s: err = %v, want %s", tc.in, err, tc.want)
		}
	}
}

func pafS(ctx context.Context, r *strings.Reader) error {
	_, err := PAF(ctx, r, &bytes.Buffer{})
	return err
}

func oaS(ctx context.Context, r *strings.Reader) error {
	_, err := OpenAddresses(ctx, r, &bytes.Buffer{}, "GB")
	return err
}

// checkOutput holds a converter's output to what Load takes: on success
// it loads, or fails only on ids the input repeated.
func checkOutput(t *testing.T, out []byte) {
	_, err := gazetteer.Load(context.Background(), bytes.NewReader(out))
	if err != nil && !strings.Contains(err.Error(), "duplicate id") {
		t.Fatalf("output does not load: %v\n%s", err, out)
	}
}

func FuzzPAF(f *testing.F) {
	for _, name := range []string{"paf.csv", "paf.json", "paf-raw.csv"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 2000)])
	}
	f.Add([]byte(`{"udprn":1,"post_town":"X","thoroughfare":"Y","country":"Channel Islands"}` + "\n{}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		if _, err := PAF(context.Background(), bytes.NewReader(in), &out); err == nil {
			checkOutput(t, out.Bytes())
		}
	})
}

func FuzzOpenAddresses(f *testing.F) {
	for _, name := range []string{"oa.csv", "oa.geojson", "oa-collection.geojson"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "IE")
	}
	f.Fuzz(func(t *testing.T, in []byte, country string) {
		var out bytes.Buffer
		if _, err := OpenAddresses(context.Background(), bytes.NewReader(in), &out, country); err == nil {
			checkOutput(t, out.Bytes())
		}
	})
}
