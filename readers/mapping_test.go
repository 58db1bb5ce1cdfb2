package readers

import (
	"bytes"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/record"
	"github.com/rs/zerolog"
)

func TestNewMapper(t *testing.T) {
	tests := []struct {
		name    string
		header  []string
		spec    MappingSpec
		want    map[string]string
		wantErr []string // substrings of the error
		notErr  []string // substrings the error must not hold
	}{
		{
			name:   "irish export",
			header: []string{"Customer ID", "Name", "Address 1", "Address 2", "Address 3", "Town", "County", "Eircode", "Country", "Email Address"},
			want: map[string]string{"line1": "Address 1", "line2": "Address 2", "line3": "Address 3", "city": "Town",
				"region": "County", "postcode": "Eircode", "country": "Country", "id": "Customer ID"},
		},
		{
			name:   "address line n, post town, post code",
			header: []string{"address_line_1", "ADDRESS LINE 2", "Post Town", "Post Code", "country"},
			want:   map[string]string{"line1": "address_line_1", "line2": "ADDRESS LINE 2", "city": "Post Town", "postcode": "Post Code", "country": "country"},
		},
		{
			name:   "salesforce billing columns",
			header: []string{"Account ID", "Billing Street", "Billing City", "Billing State/Province", "Billing Zip/Postal Code", "Billing Country"},
			want: map[string]string{"line1": "Billing Street", "city": "Billing City", "region": "Billing State/Province",
				"postcode": "Billing Zip/Postal Code", "country": "Billing Country", "id": "Account ID"},
		},
		{
			name:   "hubspot columns",
			header: []string{"Street Address", "City", "State/Region", "Postal Code", "Country/Region"},
			want:   map[string]string{"line1": "Street Address", "city": "City", "region": "State/Region", "postcode": "Postal Code", "country": "Country/Region"},
		},
		{
			name:   "addr1 street zip state",
			header: []string{"Addr1", "Addr2", "City", "State", "ZIP"},
			spec:   MappingSpec{DefaultCountry: "USA"},
			want:   map[string]string{"line1": "Addr1", "line2": "Addr2", "city": "City", "region": "State", "postcode": "ZIP", "default_country": "US"},
		},
		{
			name:   "postcode only, default country",
			header: []string{"Eircode"},
			spec:   MappingSpec{DefaultCountry: "Ireland", Language: "en"},
			want:   map[string]string{"postcode": "Eircode", "default_country": "IE", "language": "en"},
		},
		{
			name:   "explicit columns ignore case and spaces",
			header: []string{"Rue", "Ville", "Land", "Code", "Ref"},
			spec:   MappingSpec{LineCols: []string{"rue"}, City: " VILLE", Country: "land", Postcode: "CO DE"},
			want:   map[string]string{"line1": "Rue", "city": "Ville", "country": "Land", "postcode": "Code", "id": "Ref"},
		},
		{
			name:   "explicit lines replace detection; explicit columns are not detected again",
			header: []string{"Address 1", "Address 2", "Town", "City", "Country"},
			spec:   MappingSpec{LineCols: []string{"Address 1", "Town"}},
			want:   map[string]string{"line1": "Address 1", "line2": "Town", "city": "City", "country": "Country"},
		},
		{
			name:   "explicit city resolves ambiguity",
			header: []string{"Street", "Town", "City", "Country"},
			spec:   MappingSpec{City: "City"},
			want:   map[string]string{"line1": "Street", "city": "City", "country": "Country"},
		},
		{
			name:   "postcode named as a line is sent once",
			header: []string{"Street", "Postcode", "Country"},
			spec:   MappingSpec{LineCols: []string{"Street", "Postcode"}, Postcode: "postcode"},
			want:   map[string]string{"line1": "Street", "postcode": "Postcode", "country": "Country"},
		},
		{
			name:   "a line name matching two columns takes both",
			header: []string{"Address", "Address", "Country"},
			spec:   MappingSpec{LineCols: []string{"address"}},
			want:   map[string]string{"line1": "Address", "line2": "Address", "country": "Country"},
		},
		{
			name:   "ambiguous id is left out, not an error",
			header: []string{"ID", "Ref", "Street", "Country"},
			want:   map[string]string{"line1": "Street", "country": "Country"},
		},
		{
			name:    "missing explicit column lists the headers",
			header:  []string{"Street", "Town", "Country"},
			spec:    MappingSpec{LineCols: []string{"Adress"}, City: "Cty"},
			wantErr: []string{`--line-cols "Adress": no such column; the columns are "Street", "Town", "Country"`, `--city-col "Cty"`},
		},
		{
			name:    "ambiguous city names the flag",
			header:  []string{"Street", "Town", "City", "Country"},
			wantErr: []string{`several columns could be the city ("Town", "City"): pass --city-col`},
		},
		{
			name:   "billing and shipping: billing is used, never a mix",
			header: []string{"Account ID", "Billing Street", "Billing City", "Shipping Street", "Shipping City", "Shipping Country", "Billing Country"},
			want: map[string]string{"line1": "Billing Street", "city": "Billing City", "country": "Billing Country",
				"id": "Account ID"},
		},
		{
			name:   "--prefix shipping",
			header: []string{"Billing Street", "Billing City", "Shipping Street", "Shipping City", "Country"},
			spec:   MappingSpec{Prefix: "Shipping"},
			want:   map[string]string{"line1": "Shipping Street", "city": "Shipping City", "country": "Country"},
		},
		{
			name:    "--prefix that no column has",
			header:  []string{"Billing Street", "Billing Country"},
			spec:    MappingSpec{Prefix: "Delivery"},
			wantErr: []string{`--prefix "Delivery": no address columns start with it`},
		},
		{
			name:    "an ambiguous country is not also a missing one",
			header:  []string{"Street", "Country", "Country Code"},
			wantErr: []string{`several columns could be the country ("Country", "Country Code")`},
			notErr:  []string{"no country column found"},
		},
		{
			name:    "no address columns",
			header:  []string{"Name", "Email", "Country"},
			wantErr: []string{`no address columns found among "Name", "Email", "Country": pass --line-cols`},
		},
		{
			name:    "no country column and no default",
			header:  []string{"Street", "Town"},
			wantErr: []string{"no country column found: pass --country-col", "or --country"},
		},
		{
			name:    "empty header",
			header:  nil,
			wantErr: []string{"no address columns", "no country column"},
		},
		{
			// Every row without a country would be sent with it and refused
			// by the service, one paid call each.
			name:    "a --country that is not a country",
			header:  []string{"Street", "Country"},
			spec:    MappingSpec{DefaultCountry: "Irland"},
			wantErr: []string{`--country "Irland": not a country addrclean knows`},
		},
		{
			name:    "email and ip address are not address lines",
			header:  []string{"Email Address", "IP Address", "Country"},
			wantErr: []string{"no address columns"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := NewMapper(tt.header, tt.spec)
			if len(tt.wantErr) > 0 {
				var me *MappingError
				if !errors.As(err, &me) {
					t.Fatalf("error = %v, want a *MappingError", err)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				for _, w := range tt.notErr {
					if strings.Contains(err.Error(), w) {
						t.Errorf("error %q contains %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Columns(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Columns() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMap(t *testing.T) {
	header := []string{"ID", "Address 1", "Address 2", "Town", "County", "Eircode", "Country"}
	tests := []struct {
		name      string
		spec      MappingSpec
		cells     []string
		want      api.Address
		wantLabel string
		wantErr   error
	}{
		{
			name:      "full row, country by name",
			cells:     []string{"1", " 1 Main St ", "Ballincollig", "Cork", "Co. Cork", "P31 AB12", "Ireland"},
			want:      api.Address{Lines: []string{"1 Main St", "Ballincollig", "P31 AB12"}, City: "Cork", Region: "Co. Cork", Country: "IE"},
			wantLabel: "1 Main St, Ballincollig, Cork, Co. Cork, P31 AB12, Ireland",
		},
		{
			name:      "blank lines not sent; multi-line cell split",
			cells:     []string{"2", "Apt 4\r\nThe Maltings\n\n", "  ", "Sligo", "", "", "Éire"},
			want:      api.Address{Lines: []string{"Apt 4", "The Maltings"}, City: "Sligo", Country: "IE"},
			wantLabel: "Apt 4, The Maltings, Sligo, Éire",
		},
		{
			name:      "country variants",
			cells:     []string{"3", "10 Downing St", "", "London", "", "SW1A 2AA", "england"},
			want:      api.Address{Lines: []string{"10 Downing St", "SW1A 2AA"}, City: "London", Country: "GB"},
			wantLabel: "10 Downing St, London, SW1A 2AA, england",
		},
		{
			name:      "unknown country sent as written",
			cells:     []string{"4", "1 Rue X", "", "", "", "", "Narnia"},
			want:      api.Address{Lines: []string{"1 Rue X"}, Country: "Narnia"},
			wantLabel: "1 Rue X, Narnia",
		},
		{
			name:      "default country fills an empty one, not in the label",
			spec:      MappingSpec{DefaultCountry: "irl", Language: "en"},
			cells:     []string{"5", "1 Main St", "", "", "", "", ""},
			want:      api.Address{Lines: []string{"1 Main St"}, Country: "IE", Language: "en"},
			wantLabel: "1 Main St",
		},
		{
			name:      "row country beats the default",
			spec:      MappingSpec{DefaultCountry: "IE"},
			cells:     []string{"6", "1 Main St", "", "", "", "", "Northern Ireland"},
			want:      api.Address{Lines: []string{"1 Main St"}, Country: "GB"},
			wantLabel: "1 Main St, Northern Ireland",
		},
		{
			name:      "postcode alone is an address",
			cells:     []string{"7", "", "", "", "", "D02 X285", "IE"},
			want:      api.Address{Lines: []string{"D02 X285"}, Country: "IE"},
			wantLabel: "D02 X285, IE",
		},
		{
			name:      "no address",
			cells:     []string{"8", "", " ", "Cork", "", "", "IE"},
			want:      api.Address{City: "Cork", Country: "IE"},
			wantLabel: "Cork, IE",
			wantErr:   ErrNoAddress,
		},
		{
			name:      "no country",
			cells:     []string{"9", "1 Main St", "", "", "", "", " "},
			want:      api.Address{Lines: []string{"1 Main St"}},
			wantLabel: "1 Main St",
			wantErr:   ErrNoCountry,
		},
		{
			name:      "short row",
			cells:     []string{"10", "1 Main St"},
			want:      api.Address{Lines: []string{"1 Main St"}},
			wantLabel: "1 Main St",
			wantErr:   ErrNoCountry,
		},
		{
			name:    "nothing at all",
			cells:   nil,
			wantErr: ErrNoAddress,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := tt.spec
			spec.Country = "Country" // so that no default is needed
			m, err := NewMapper(header, spec)
			if err != nil {
				t.Fatal(err)
			}
			got := m.Map(record.Row{Num: 1, Line: 2, Cells: tt.cells})
			if !reflect.DeepEqual(got.Address, tt.want) {
				t.Errorf("Address = %#v\nwant %#v", got.Address, tt.want)
			}
			if got.Label != tt.wantLabel {
				t.Errorf("Label = %q, want %q", got.Label, tt.wantLabel)
			}
			if !errors.Is(got.Err, tt.wantErr) || (tt.wantErr == nil) != (got.Err == nil) {
				t.Errorf("Err = %v, want %v", got.Err, tt.wantErr)
			}
		})
	}
}

func TestMapperIDDescribeAndLog(t *testing.T) {
	m, err := NewMapper([]string{"Cust No", "Street", "Town", "Eircode", "Country"},
		MappingSpec{ID: "cust no", DefaultCountry: "IE", Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	if id := m.ID(record.Row{Cells: []string{" C-17 ", "x"}}); id != "C-17" {
		t.Errorf("ID = %q", id)
	}
	want := `  address lines: "Street" (detected)
  city:          "Town" (detected)
  region:        none
  postcode:      "Eircode" (detected), sent as the last address line
  country:       "Country" (detected); rows without one: IE
  id:            "Cust No"
  language:      en
`
	if got := m.Describe(); got != want {
		t.Errorf("Describe() =\n%s\nwant\n%s", got, want)
	}
	var logs bytes.Buffer
	log := zerolog.New(&logs)
	log.Info().Object("mapping", m).Msg("mapped")
	const wantLog = `{"level":"info","mapping":{"city":"Town","country":"Country","default_country":"IE","id":"Cust No","language":"en","line1":"Street","postcode":"Eircode"},"message":"mapped"}` + "\n"
	if logs.String() != wantLog {
		t.Errorf("log = %s\nwant %s", logs.String(), wantLog)
	}
}

func TestMapperNotes(t *testing.T) {
	m, err := NewMapper([]string{"Street", "Town", "Town", "Country", "ID", "Ref"}, MappingSpec{City: "town"})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(m.Notes(), "\n")
	for _, w := range []string{`2 columns are named "Town"`, "several columns could be the id"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes %q lack %q", notes, w)
		}
	}
}

func TestMapperNotesPrefix(t *testing.T) {
	m, err := NewMapper([]string{"Billing Street", "Billing Country", "Shipping Street", "Shipping Country"}, MappingSpec{})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(m.Notes(), "\n")
	want := "the columns hold 2 addresses (Billing, Shipping): using the Billing columns; pass --prefix Shipping for the other"
	if !strings.Contains(notes, want) {
		t.Errorf("notes %q lack %q", notes, want)
	}
	got := m.Map(record.Row{Cells: []string{"1 Bill St", "Ireland", "2 Ship St", "UK"}})
	if want := (api.Address{Lines: []string{"1 Bill St"}, Country: "IE"}); !reflect.DeepEqual(got.Address, want) {
		t.Errorf("Address = %#v, want %#v", got.Address, want)
	}
}

func TestMapTrailingCountry(t *testing.T) {
	tests := []struct {
		name    string
		header  []string
		spec    MappingSpec
		cells   []string
		want    api.Address
		wantErr error
	}{
		{
			name:   "UK ends a full address",
			header: []string{"Full Address"},
			spec:   MappingSpec{DefaultCountry: "IE"},
			cells:  []string{"1 Park Row, Leeds, LS1 0QP, UK"},
			want:   api.Address{Lines: []string{"1 Park Row, Leeds, LS1 0QP"}, Country: "GB"},
		},
		{
			name:   "Northern Ireland",
			header: []string{"Full Address"},
			spec:   MappingSpec{DefaultCountry: "IE"},
			cells:  []string{"2 Donegall Sq, Belfast, BT1 0ZL, Northern Ireland"},
			want:   api.Address{Lines: []string{"2 Donegall Sq, Belfast, BT1 0ZL"}, Country: "GB"},
		},
		{
			name:   "the country on a line of its own",
			header: []string{"Address"},
			spec:   MappingSpec{DefaultCountry: "GB"},
			cells:  []string{"3 Main St\nCork\nIreland"},
			want:   api.Address{Lines: []string{"3 Main St", "Cork"}, Country: "IE"},
		},
		{
			name:   "no country name: the default",
			header: []string{"Full Address"},
			spec:   MappingSpec{DefaultCountry: "IE"},
			cells:  []string{"4 Main St, Cork, T12 AB12"},
			want:   api.Address{Lines: []string{"4 Main St, Cork, T12 AB12"}, Country: "IE"},
		},
		{
			name:   "a two-letter ending is not taken for a country",
			header: []string{"Full Address"},
			spec:   MappingSpec{DefaultCountry: "IE"},
			cells:  []string{"5 Main St, Co, DE"},
			want:   api.Address{Lines: []string{"5 Main St, Co, DE"}, Country: "IE"},
		},
		{
			name:   "a country column wins",
			header: []string{"Full Address", "Country"},
			cells:  []string{"6 Main St, Newry, UK", "Ireland"},
			want:   api.Address{Lines: []string{"6 Main St, Newry, UK"}, Country: "IE"},
		},
		{
			name:    "only a country",
			header:  []string{"Full Address"},
			spec:    MappingSpec{DefaultCountry: "GB"},
			cells:   []string{"Ireland"},
			wantErr: ErrNoAddress,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := NewMapper(tt.header, tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			got := m.Map(record.Row{Cells: tt.cells})
			if !errors.Is(got.Err, tt.wantErr) || (tt.wantErr == nil) != (got.Err == nil) {
				t.Fatalf("Err = %v, want %v", got.Err, tt.wantErr)
			}
			if tt.wantErr == nil && !reflect.DeepEqual(got.Address, tt.want) {
				t.Errorf("Address = %#v\nwant %#v", got.Address, tt.want)
			}
		})
	}
	m, err := NewMapper([]string{"Full Address"}, MappingSpec{DefaultCountry: "IE"})
	if err != nil {
		t.Fatal(err)
	}
	if d := m.Describe(); !strings.Contains(d, "a country name ending the address is used") {
		t.Errorf("Describe() does not say a trailing country is used:\n%s", d)
	}
}

func TestMapNoAddressLineSaysWhatTheRowHad(t *testing.T) {
	m, err := NewMapper([]string{"Street", "Town", "County", "Country"}, MappingSpec{})
	if err != nil {
		t.Fatal(err)
	}
	got := m.Map(record.Row{Cells: []string{"", "York", "", "GB"}})
	if !errors.Is(got.Err, ErrNoAddress) {
		t.Fatalf("Err = %v, want ErrNoAddress", got.Err)
	}
	if want := `no address line (the row has only city "York", country "GB")`; got.Err.Error() != want {
		t.Errorf("Err = %q, want %q", got.Err, want)
	}
	if got := m.Map(record.Row{Cells: []string{"", "", "", ""}}); got.Err == nil || got.Err.Error() != "no address" {
		t.Errorf("an empty row: Err = %v, want \"no address\"", got.Err)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		header string
		want   field
		ok     bool
	}{
		{"Address", fieldLine, true},
		{"Address1", fieldLine, true},
		{"Address Line 4", fieldLine, true},
		{"Street", fieldLine, true},
		{"Line 1", fieldLine, true},
		{"Line", 0, false},
		{"Mailing Street", fieldLine, true},
		{"Townland", fieldLine, true},
		{"Town/City", fieldCity, true},
		{"Post Town", fieldCity, true},
		{"County", fieldRegion, true},
		{"State / Province", fieldRegion, true},
		{"ZIP code", fieldPostcode, true},
		{"Eircode", fieldPostcode, true},
		{"Post-code", fieldPostcode, true},
		{"Country Code", fieldCountry, true},
		{"Customer ID", fieldID, true},
		{"Email Address", 0, false},
		{"Name", 0, false},
		{"", 0, false},
		{"Billing", 0, false},
	}
	for _, tt := range tests {
		f, _, ok := classifyPrefix(tt.header)
		if ok != tt.ok || (ok && f != tt.want) {
			t.Errorf("classifyPrefix(%q) = %v, %v; want %v, %v", tt.header, f, ok, tt.want, tt.ok)
		}
	}
}

func BenchmarkMap(b *testing.B) {
	m, err := NewMapper([]string{"ID", "Address 1", "Address 2", "Town", "County", "Eircode", "Country"}, MappingSpec{})
	if err != nil {
		b.Fatal(err)
	}
	row := record.Row{Num: 1, Line: 2, Cells: []string{"1", "1 Main St", "Ballincollig", "Cork", "Co. Cork", "P31 AB12", "Ireland"}}
	b.ReportAllocs()
	for b.Loop() {
		m.Map(row)
	}
}

func TestMapConcurrent(t *testing.T) {
	m, err := NewMapper([]string{"Street", "Country"}, MappingSpec{})
	if err != nil {
		t.Fatal(err)
	}
	countries := []string{"Ireland", "UK", "France", "Narnia", "éire"}
	want := []string{"IE", "GB", "FR", "Narnia", "IE"}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				k := (g + i) % len(countries)
				got := m.Map(record.Row{Cells: []string{"1 Main St", countries[k]}})
				if got.Address.Country != want[k] {
					t.Errorf("country %q mapped to %q", countries[k], got.Address.Country)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestCountryCacheIsBounded(t *testing.T) {
	m, err := NewMapper([]string{"Street", "Country"}, MappingSpec{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range maxCountryCache * 2 {
		m.Map(record.Row{Cells: []string{"x", "junk " + strconv.Itoa(i)}})
	}
	if n := len(m.countries); n > maxCountryCache {
		t.Errorf("cache holds %d entries", n)
	}
}

func FuzzMapper(f *testing.F) {
	f.Add("Address 1\x00Town\x00Country", "1 Main St\nApt 2\x00Cork\x00Éire", "", "")
	f.Add("Street\x00Street\x00Eircode", "\r\n\x00x\x00D02", "street", "IE")
	f.Add("", "", "", "")
	f.Fuzz(func(t *testing.T, header, cells, lineCol, def string) {
		spec := MappingSpec{DefaultCountry: def}
		if lineCol != "" {
			spec.LineCols = []string{lineCol}
		}
		m, err := NewMapper(strings.Split(header, "\x00"), spec)
		if err != nil {
			var me *MappingError
			if !errors.As(err, &me) || len(me.Problems) == 0 {
				t.Fatalf("error %v is not a *MappingError with problems", err)
			}
			return
		}
		got := m.Map(record.Row{Num: 1, Line: 2, Cells: strings.Split(cells, "\x00")})
		for _, l := range got.Address.Lines {
			if strings.TrimSpace(l) == "" || strings.ContainsAny(l, "\r\n") {
				t.Fatalf("line %q sent", l)
			}
		}
		if (got.Err == nil) != (len(got.Address.Lines) > 0 && got.Address.Country != "") {
			t.Fatalf("Err %v for %#v", got.Err, got.Address)
		}
		_ = m.Describe()
		_ = m.Columns()
	})
}
