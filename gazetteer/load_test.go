package gazetteer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func loadSmall(t testing.TB) *Index {
	t.Helper()
	ix, err := LoadFile(context.Background(), "testdata/small.csv")
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestLoadSmall(t *testing.T) {
	ix := loadSmall(t)
	if ix.Len() != 11 {
		t.Fatalf("Len = %d, want 11", ix.Len())
	}
	r, ok := ix.Lookup("IE8")
	if !ok {
		t.Fatal("IE8 missing")
	}
	if r.City != "Dún Laoghaire" || r.Postcode != "A96 K4D2" || r.Type != Residential || !r.HasLocation {
		t.Errorf("IE8 = %+v", r)
	}
	if r, _ := ix.Lookup("GB3"); r.HasLocation {
		t.Errorf("GB3 has a location: %+v", r)
	}
	if r, _ := ix.Lookup("IE7"); r.Type != POBox {
		t.Errorf("IE7 type %q", r.Type)
	}
	if _, ok := ix.Lookup("nope"); ok {
		t.Error("Lookup found an unknown id")
	}
	n := 0
	ix.Records(func(*Record) bool { n++; return n < 3 })
	if n != 3 {
		t.Errorf("Records did not stop: %d", n)
	}
}

func TestLoadFlexibleHeader(t *testing.T) {
	// BOM, other order, aliases, an unknown column, postcode spacing.
	in := "\ufeffCountry,ID,Town,Street,Number,Eircode,Notes\nie,X1,Ennis,Main Street,12,v95x2y3,hello\n"
	ix, err := Load(context.Background(), strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	r, ok := ix.Lookup("X1")
	if !ok || r.Country != "IE" || r.Postcode != "V95 X2Y3" || r.BuildingNumber != "12" || r.City != "Ennis" {
		t.Fatalf("record = %+v, %v", r, ok)
	}
}

func TestLoadBadRows(t *testing.T) {
	header := strings.Join(Columns, ",") + "\n"
	for _, tc := range []struct {
		name string
		body string
		line int
		msg  string
	}{
		{"empty id", ",,,,1,Main St,,Ennis,Clare,,IE,,,\n", 2, "empty id"},
		{"country", "A,,,,1,Main St,,Ennis,Clare,,Atlantis,,,\n", 2, "ISO alpha-2"},
		{"channel islands", "A,,,,1,Main St,,St Helier,,SW1A 1AA,Channel Islands,,,\n", 2, "JE or GY"},
		{"eircode", "A,,,,1,Main St,,Ennis,Clare,V95 ABCD,IE,,,\n", 2, "not an Eircode"},
		{"uk postcode", "A,,,,1,High St,,London,,SW1A,GB,,,\n", 2, "not a UK postcode"},
		{"coordinates", "A,,,,1,Main St,,Ennis,Clare,,IE,95,0,\n", 2, "bad coordinates"},
		{"half coordinates", "A,,,,1,Main St,,Ennis,Clare,,IE,52.1,,\n", 2, "bad coordinates"},
		{"type", "A,,,,1,Main St,,Ennis,Clare,,IE,,,Castle\n", 2, "unknown type"},
		{"no street", "A,,,,1,,,Ennis,Clare,,IE,,,\n", 2, "no street"},
		{"no city", "A,,,,1,Main St,,,Clare,,IE,,,\n", 2, "empty city"},
		{"fields", "A,,,,1,Main St,,Ennis\n", 2, "fields"},
		{"duplicate", "A,,,,1,Main St,,Ennis,Clare,,IE,,,\nA,,,,2,Main St,,Ennis,Clare,,IE,,,\n", 3, "duplicate id"},
		{"after multi-line cell", "A,\"Acme\nLtd\",,,1,Main St,,Ennis,Clare,,IE,,,\nB,,,,1,Main St,,Ennis,Clare,,XX1,,,\n", 4, "ISO"},
		{"bad quote", "A,,,,1,\"Main\" St,,Ennis,Clare,,IE,,,\n", 2, "quote"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(context.Background(), strings.NewReader(header+tc.body))
			if err == nil {
				t.Fatal("loaded")
			}
			want := fmt.Sprintf("reference: 1 bad row(s); line %d: ", tc.line)
			if msg := err.Error(); !strings.HasPrefix(msg, want) || !strings.Contains(msg[len(want):], tc.msg) {
				t.Fatalf("err = %v, want %q then %q", err, want, tc.msg)
			}
		})
	}
}

func TestLoadManyBadRows(t *testing.T) {
	var b strings.Builder
	b.WriteString(strings.Join(Columns, ",") + "\n")
	for range 50 {
		b.WriteString(",,,,1,Main St,,Ennis,Clare,,IE,,,\n")
	}
	_, err := Load(context.Background(), strings.NewReader(b.String()))
	// All are counted, the first few named.
	want := "reference: 50 bad row(s); line 2: empty id; line 3: empty id; line 4: empty id; line 5: empty id; line 6: empty id; ..."
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

func TestLoadBadHeader(t *testing.T) {
	for _, in := range []string{"", "id,street,city\n", "id,id,street,city,country\n"} {
		if _, err := Load(context.Background(), strings.NewReader(in)); !errors.Is(err, ErrBadHeader) {
			t.Errorf("Load(%q) err = %v, want ErrBadHeader", in, err)
		}
	}
}

func TestLoadCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Load(ctx, strings.NewReader(strings.Join(Columns, ",")+"\n"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestLoadFileMissing(t *testing.T) {
	_, err := LoadFile(context.Background(), filepath.Join(t.TempDir(), "none.csv"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v", err)
	}
}

// TestWriteCSVRoundTrip writes records in Columns and loads them back unchanged.
func TestWriteCSVRoundTrip(t *testing.T) {
	ix := loadSmall(t)
	var b strings.Builder
	if err := WriteCSVColumns(&b, Columns, func(yield func(Record) bool) {
		ix.Records(func(r *Record) bool { return yield(*r) })
	}); err != nil {
		t.Fatal(err)
	}
	ix2, err := Load(context.Background(), strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	for i := range uint32(ix.Len()) {
		a, c := *ix.rec(i), *ix2.rec(i)
		a.Latitude, a.Longitude, c.Latitude, c.Longitude = 0, 0, 0, 0
		if a != c {
			t.Errorf("round trip:\n%+v\n%+v", a, c)
		}
	}
}

// TestLoadPAFColumns loads the columns added for PAF and the country
// names and capitals PAF writes.
func TestLoadPAFColumns(t *testing.T) {
	in := "id,building_id,organisation,department,sub_building,building_name,building_number,dependent_street,street,double_dependent_locality,locality,city,postcode,country,po_box\n" +
		"1001-7,1001,Acme Ltd,Accounts,,,1,Acacia Avenue,Main Road,Little Fenton,Fenton,STRATFORD-UPON-AVON,CV37 6AA,England,\n" +
		"1002,,,,,,,,,,,ST. HELIER,JE4 8ZZ,Channel Islands,1234\n" +
		"1003,,,,,Rose Cottage,,,,,,ST PETER PORT,GY1 1AA,Channel Islands,\n" +
		"1004,,,,,,3,,Strand Street,,,DOUGLAS,IM1 2AB,Isle of Man,\n"
	ix, err := Load(context.Background(), strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id, country, city, pc string
		typ                   AddressType
		lines                 []string
	}{
		{"1001-7", "GB", "Stratford-upon-Avon", "CV37 6AA", Residential, []string{"Acme Ltd", "Accounts", "1 Acacia Avenue", "Main Road", "Little Fenton", "Fenton"}},
		{"1002", "JE", "St. Helier", "JE4 8ZZ", POBox, []string{"PO Box 1234"}},
		{"1003", "GG", "St Peter Port", "GY1 1AA", Residential, []string{"Rose Cottage"}},
		{"1004", "IM", "Douglas", "IM1 2AB", Residential, []string{"3 Strand Street"}},
	} {
		r, ok := ix.Lookup(tc.id)
		if !ok {
			t.Fatalf("%s not loaded", tc.id)
		}
		if r.Country != tc.country || r.City != tc.city || r.Postcode != tc.pc || r.Type != tc.typ || !slices.Equal(r.Lines(), tc.lines) {
			t.Errorf("%s: %s %q %q %s %q, want %s %q %q %s %q", tc.id, r.Country, r.City, r.Postcode, r.Type, r.Lines(),
				tc.country, tc.city, tc.pc, tc.typ, tc.lines)
		}
	}
	if r, _ := ix.Lookup("1001-7"); r.BuildingID != "1001" || r.Department != "Accounts" || r.DoubleDependentLocality != "Little Fenton" {
		t.Errorf("PAF fields: %+v", r)
	}
	for _, tc := range []struct {
		q    Query
		want string
	}{
		{Query{Lines: []string{"1 Acacia Avenue", "Fenton"}, City: "Stratford-upon-Avon", Country: "GB"}, "1001-7"},
		{Query{Lines: []string{"PO Box 1234"}, City: "St Helier", Country: "GB"}, "1002"},
		{Query{Lines: []string{"3 Strand St", "IM1 2AB"}, Country: "GB"}, "1004"},
	} {
		m := ix.Match(tc.q)
		if m.Record == nil || m.Record.ID != tc.want {
			t.Errorf("Match(%+v) = %v %v, want %s", tc.q, m.Verdict, m.Record, tc.want)
		}
	}
	var b strings.Builder
	recs := func(yield func(Record) bool) {
		ix.Records(func(r *Record) bool { return yield(*r) })
	}
	if err := WriteCSVColumns(&b, AllColumns, recs); err != nil {
		t.Fatal(err)
	}
	again, err := Load(context.Background(), strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	r1, _ := ix.Lookup("1001-7")
	r2, _ := again.Lookup("1001-7")
	if *r1 != *r2 {
		t.Errorf("written and read again: %+v, want %+v", r2, r1)
	}
}

func TestDisplayCase(t *testing.T) {
	for in, want := range map[string]string{
		"NEWCASTLE UPON TYNE": "Newcastle upon Tyne",
		"STRATFORD-UPON-AVON": "Stratford-upon-Avon",
		"KING'S LYNN":         "King's Lynn",
		"DÚN LAOGHAIRE":       "Dún Laoghaire",
		"BURY ST. EDMUNDS":    "Bury St. Edmunds",
		"Ennis":               "Ennis",
		"LONDON":              "London",
		"":                    "",
		"D02":                 "D02",
		"DUBLIN 6W":           "Dublin 6W",
	} {
		if got := DisplayCase(in); got != want {
			t.Errorf("DisplayCase(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestStreetLevelDependentStreet: a number the reference lacks on a
// dependent street gives that street, not the one it lies off.
func TestStreetLevelDependentStreet(t *testing.T) {
	in := "id,building_number,dependent_street,street,locality,city,postcode,country\n" +
		"1,1,Hawthorn Yard,Chapel Street,Headingley,LEEDS,LS6 2QD,England\n" +
		"2,2,Hawthorn Yard,Chapel Street,Headingley,LEEDS,LS6 2QD,England\n" +
		"3,5,,Chapel Street,Headingley,LEEDS,LS6 2QE,England\n"
	ix, err := Load(context.Background(), strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	m := ix.Match(Query{Lines: []string{"9 Hawthorn Yard"}, City: "Leeds", Country: "GB"})
	if m.Level != LevelStreet || !slices.Equal(m.Lines, []string{"9 Hawthorn Yard", "Chapel Street", "Headingley"}) {
		t.Errorf("%s %s %q", m.Verdict, m.Level, m.Lines)
	}
}

// TestCountyTheReferenceLacks: against a reference without counties (PAF
// has none) a county given is kept as written, neither a change nor a
// reason to doubt.
func TestCountyTheReferenceLacks(t *testing.T) {
	in := "id,building_number,street,city,postcode,country\n" +
		"1,4,Harrowden Avenue,COVENTRY,CV4 9ZG,England\n"
	ix, err := Load(context.Background(), strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []Query{
		{Lines: []string{"4 Harrowden Avenue", "CV4 9ZG"}, City: "Coventry", Region: "West Midlands", Country: "GB"},
		{Lines: []string{"4 Harrowden Avenue", "Coventry", "West Midlands", "CV4 9ZG"}, Country: "GB"},
		{Lines: []string{"4 Harrowden Avenue, Coventry, West Midlands CV4 9ZG"}},
	} {
		m := ix.Match(q)
		if m.Verdict != VerdictAccept || m.Region != "West Midlands" || m.RegionAmended || m.Details.Region != ChangeUnchanged {
			t.Errorf("%+v: %s region %q amended %v details %+v", q, m.Verdict, m.Region, m.RegionAmended, m.Details)
		}
	}
}

// TestReferenceCountry: the spellings of "Channel Islands" that
// countries.ISO accepts also need the postcode here, as the name does.
func TestReferenceCountry(t *testing.T) {
	for _, tt := range []struct{ country, postcode, want, wantErr string }{
		{"ie", "", "IE", ""},
		{"England", "", "GB", ""},
		{"Isle of Man", "IM1 1AA", "IM", ""},
		{"Channel Islands", "JE2 3AB", "JE", ""},
		{"CHANNEL-ISLANDS", "gy1 1aa", "GG", ""},
		{"the Channel Islands", "GY11AA", "GG", ""},
		{"ChannelIslands", "JE23AB", "JE", ""},
		{"Channel Islands", "SW1A 1AA", "", "JE or GY"},
		{"Channel Islands", "", "", "JE or GY"},
		{"Atlantis", "", "", "not an ISO alpha-2 code"},
	} {
		got, err := ReferenceCountry(tt.country, tt.postcode)
		if got != tt.want || (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("ReferenceCountry(%q, %q) = %q, %v; want %q, %q", tt.country, tt.postcode, got, err, tt.want, tt.wantErr)
		}
	}
}
