package table

import (
	"context"
	"encoding/csv"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/writers"
)

func TestParseName(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Name
		err  bool
	}{
		{in: "customers", want: Name{Table: "customers"}},
		{in: "crm.customers", want: Name{Schema: "crm", Table: "customers"}},
		{in: `"Customer List"`, want: Name{Table: "Customer List"}},
		{in: `"a.b"`, want: Name{Table: "a.b"}},
		{in: `crm."x""y"`, want: Name{Schema: "crm", Table: `x"y`}},
		{in: `"crm"."t"`, want: Name{Schema: "crm", Table: "t"}},
		{in: "", err: true},
		{in: "a.b.c", err: true},
		{in: "a.", err: true},
		{in: `"open`, err: true},
		{in: `"a"b`, err: true},
		{in: "a\x00b", err: true},
	} {
		got, err := ParseName(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParseName(%q) = %+v, %v; want %+v (error %v)", c.in, got, err, c.want, c.err)
		}
		if err == nil {
			if back, err := ParseName(got.String()); err != nil || back != got {
				t.Errorf("ParseName(%q).String() = %q reads back as %+v, %v", c.in, got.String(), back, err)
			}
		}
	}
}

func FuzzParseName(f *testing.F) {
	for _, s := range []string{"t", "s.t", `"a.b"."c""d"`, `"`, `a."`, "..", `""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseName(s)
		if err != nil {
			return
		}
		if n.Table == "" {
			t.Fatalf("%q: empty table name accepted", s)
		}
		back, err := ParseName(n.String())
		if err != nil || back != n {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, n, n.String(), back, err)
		}
	})
}

func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		in, display, path string
		err               bool
	}{
		{in: "postgres://app:s3cret@DB.example:5433/crm?sslmode=require", display: "postgres://app@db.example:5433/crm?sslmode=require"},
		{in: "postgresql://app@db/crm?password=s3cret&sslmode=disable", display: "postgres://app@db/crm?sslmode=disable"},
		{in: "postgres://app:s3cret@/crm?host=/tmp/sock&sslpassword=s3cret", display: "postgres://app@/crm?host=%2Ftmp%2Fsock"},
		{in: "postgres://app@db/crm?pass%77ord=s3cret&sslmode=disable", display: "postgres://app@db/crm?sslmode=disable"},
		{in: "postgres://app@db/crm?sslmode=disable&host=a&host=b&connect_timeout=5", display: "postgres://app@db/crm?connect_timeout=5&host=a&host=b&sslmode=disable"},
		{in: "sqlite:data/crm.db", display: "sqlite:data/crm.db", path: "data/crm.db"},
		{in: "sqlite:///var/crm.db", display: "sqlite:/var/crm.db", path: "/var/crm.db"},
		{in: "sqlite:", err: true},
		{in: "sqlite:x.db?mode=rw", err: true},
		{in: "mysql://app:s3cret@db/crm", err: true},
		{in: "postgres://app:s3cret@db:port/crm", err: true},
	} {
		u, err := ParseURL(c.in)
		if c.err {
			if err == nil || !errors.Is(err, ErrBadURL) {
				t.Errorf("ParseURL(%q): %v, want ErrBadURL", c.in, err)
			} else if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("ParseURL(%q) error shows the password: %v", c.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseURL(%q): %v", c.in, err)
			continue
		}
		if u.Display != c.display || u.Path != c.path || u.String() != c.display {
			t.Errorf("ParseURL(%q) = %q (path %q), want %q (path %q)", c.in, u.Display, u.Path, c.display, c.path)
		}
	}
}

func FuzzParseURL(f *testing.F) {
	f.Add("postgres://u:pw@h/db", "pw")
	f.Add("postgres://u@h/db?password=pw", "pw")
	f.Add("postgres://u:p%40w@h:1/db", "p@w")
	f.Add("postgresql://u:pw@h:x/db", "pw")
	f.Fuzz(func(t *testing.T, raw, pw string) {
		if len(pw) < 4 || strings.ContainsAny(pw, "@/:?&=#%") || strings.Contains("postgresql://", pw) {
			return
		}
		u, err := ParseURL(raw)
		if err != nil {
			if strings.Contains(raw, ":"+pw+"@") && strings.Contains(err.Error(), pw) {
				t.Fatalf("%q: error shows the password: %v", raw, err)
			}
			return
		}
		if (strings.Contains(raw, ":"+pw+"@") || strings.Contains(raw, "password="+pw)) && strings.Contains(u.Display, pw) {
			if !strings.HasPrefix(strings.ToLower(raw), "sqlite:") {
				t.Fatalf("%q: display %q shows the password", raw, u.Display)
			}
		}
	})
}

// TestEnrichedMatchesFile checks that the sink's av_ values are the
// enriched file's cells: the table and the file must agree.
func TestEnrichedMatchesFile(t *testing.T) {
	resp := func() *api.VerifyResponse {
		return &api.VerifyResponse{
			Action: api.ActionSuggest,
			Form:   api.Form{Message: api.Message{Value: "=corrected"}},
			Information: api.Information{Status: api.StatusCorrected, MatchLevel: api.LevelStreet,
				Complete: true, CityAmended: true, PostcodeAmended: true},
			Address: api.MatchedAddress{
				ID: "IE-1", City: &api.Value{Value: "Cork"}, Postcode: &api.Value{Value: "T12 X1Y2"},
				Country: &api.Country{Value: "Ireland", ISO: "IE"}, Label: []string{"a", "b"},
				Lines: []api.Line{{Value: "1"}, {Value: "2"}, {Value: "3"}, {Value: "4"}, {Value: ""}, {Value: "6"}},
			},
			Data: api.Data{Location: &api.Location{Latitude: 51.8985, Longitude: -8.4756, Accuracy: "STREET"}},
		}
	}
	noLoc := resp()
	noLoc.Data.Location = nil
	nan := resp()
	nan.Data.Location.Latitude = math.NaN()
	results := []writers.Result{
		{Row: 1, Cells: []string{"1"}, Response: resp()},
		{Row: 2, Cells: []string{"2"}, Response: noLoc},
		{Row: 3, Cells: []string{"3"}, Response: nan},
		{Row: 4, Cells: []string{"4"}, Err: "no address"},
		{Row: 5, Cells: []string{"5"}},
	}
	path := filepath.Join(t.TempDir(), "out.csv")
	w, err := writers.NewEnriched(path, []string{"id"}, writers.Options{RawCells: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if err := w.Write(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		// The file then has its duplicate columns, which a table has not.
		if got, want := writers.EnrichedValues(r), recs[i+1][1:1+len(writers.EnrichedColumns)]; !slices.Equal(got, want) {
			t.Errorf("row %d:\n table %q\n file  %q", r.Row, got, want)
		}
	}
	// Typed: booleans and coordinates, NULL where the file is empty.
	v := enrichedValues(results[0], Columns(Enriched, true), true)
	if v[3] != true || v[15] != false || v[19] != 51.8985 || v[24] != writers.Changes(results[0]) || v[25] != false {
		t.Errorf("typed values %v", v)
	}
	if v := enrichedValues(results[3], Columns(Enriched, false), false); v[3] != nil || v[19] != nil || v[0] != "Error" {
		t.Errorf("Error row: %v", v)
	}
}
