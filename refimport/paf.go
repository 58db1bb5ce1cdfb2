package refimport

import (
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/addrclean/addrclean/gazetteer"
)

// rawPAFColumns are the columns of Royal Mail's own PAF CSV, which has
// no header row.
var rawPAFColumns = []string{
	"postcode", "post_town", "dependent_locality", "double_dependent_locality", "thoroughfare",
	"dependent_thoroughfare", "building_number", "building_name", "sub_building_name", "po_box",
	"department_name", "organisation_name", "udprn", "postcode_type", "su_organisation_indicator",
	"delivery_point_suffix",
}

// pafHeaderWords are column names that show a first row is a header.
var pafHeaderWords = map[string]bool{
	"udprn": true, "postcode": true, "post_town": true, "thoroughfare": true, "building_number": true,
}

// PAF converts Royal Mail PAF records to the reference format: a CSV with
// a header of PAF field names (udprn, umprn, organisation_name,
// department_name, sub_building_name, building_name, building_number,
// dependent_thoroughfare, thoroughfare, double_dependent_locality,
// dependent_locality, post_town, postcode, po_box_number, country,
// latitude, longitude; "dependant" spellings and spaces are fine), Royal
// Mail's own header-less PAF CSV, or JSON (an array of such records, an
// object holding one, or JSON lines), as resellers serve it.
//
// A record with a UMPRN (a room or flat of a multiple-residence building)
// gets the id "UDPRN-UMPRN" and building_id UDPRN; others the id UDPRN.
// The country is the record's, resolved as the reference format does
// (England, Wales, Scotland: GB; Channel Islands: JE or GG by the
// postcode), or by the postcode when the record has none (JE, GY, IM).
// Post towns in capitals are written in mixed case.
func PAF(ctx context.Context, r io.Reader, w io.Writer) (Stats, error) {
	src, isJSON, err := openInput(r)
	if err != nil {
		return Stats{}, err
	}
	var st Stats
	var next func(*gazetteer.Record) (bool, error)
	if isJSON {
		js, err := newJSONStream(src)
		if err != nil {
			return st, err
		}
		next = func(rec *gazetteer.Record) (bool, error) {
			var obj map[string]any
			ok, err := js.next(&obj)
			if !ok || err != nil {
				return ok, err
			}
			st.Read++
			f := make(map[string]string, len(obj))
			for k, v := range obj {
				f[fieldKey(k)] = jsonString(v)
			}
			pafRecord(f, rec, &st)
			return true, nil
		}
	} else {
		cr, first, cols, err := csvFirstRow(src)
		if err != nil {
			return st, err
		}
		header := slices.ContainsFunc(cols, func(c string) bool { return pafHeaderWords[c] })
		if !header {
			if _, ok := gazetteer.ParseUKPostcode(first[0]); len(first) != len(rawPAFColumns) || !ok {
				return st, fmt.Errorf("%w: no PAF header (udprn, postcode, post_town ...) and not Royal Mail's 16-column PAF CSV", ErrFormat)
			}
			cols = rawPAFColumns
			cr.pending = first
		}
		f := make(map[string]string, len(cols))
		next = func(rec *gazetteer.Record) (bool, error) {
			more, ok, err := cr.nextRow(f, cols, &st)
			if ok {
				pafRecord(f, rec, &st)
			}
			return more, err
		}
	}
	err = writeAll(ctx, w, &st, next)
	return st, err
}

// pafRecord fills rec from the PAF fields f (keys folded by fieldKey); it
// leaves rec.ID empty, and counts why, when the record is skipped.
func pafRecord(f map[string]string, rec *gazetteer.Record, st *Stats) {
	get := func(keys ...string) string {
		for _, k := range keys {
			if v := strings.TrimSpace(f[k]); v != "" {
				return v
			}
		}
		return ""
	}
	udprn := get("udprn")
	if udprn == "" {
		st.skip("no udprn")
		return
	}
	town := get("post_town", "posttown", "town")
	if town == "" {
		st.skip("no post town")
		return
	}
	pc := get("postcode")
	if pc != "" {
		c, ok := gazetteer.ParseUKPostcode(pc)
		if !ok {
			st.note("postcode not a UK postcode")
			c = ""
		}
		pc = c
	}
	country := cmp.Or(get("country"), countryOfPostcode(pc))
	iso, err := gazetteer.ReferenceCountry(country, pc)
	if err != nil {
		st.skip("country not known")
		return
	}
	r := gazetteer.Record{
		ID:                      udprn,
		Organisation:            get("organisation_name", "organisation", "organization_name", "organization"),
		Department:              get("department_name", "department"),
		SubBuilding:             get("sub_building_name", "sub_building"),
		BuildingName:            get("building_name"),
		BuildingNumber:          get("building_number"),
		DependentStreet:         joinWords(get("dependent_thoroughfare"), get("dependent_thoroughfare_name"), get("dependent_thoroughfare_descriptor")),
		Street:                  joinWords(get("thoroughfare"), get("thoroughfare_name"), get("thoroughfare_descriptor")),
		DoubleDependentLocality: get("double_dependent_locality"),
		Locality:                get("dependent_locality"),
		City:                    gazetteer.DisplayCase(town),
		Region:                  get("county", "postal_county", "administrative_county", "traditional_county"),
		Postcode:                pc,
		Country:                 iso,
		POBox:                   get("po_box_number", "po_box", "pobox"),
		Type:                    gazetteer.Residential,
	}
	if r.BuildingNumber == "0" {
		r.BuildingNumber = "" // PAF's fixed-width files write no number as 0
	}
	if r.BuildingNumber == "" && numberLike(r.BuildingName) {
		// PAF keeps "12A" and "1-3" in the building name, and prints them
		// before the street as a number: so does the reference.
		r.BuildingNumber, r.BuildingName = r.BuildingName, ""
	}
	if umprn := get("umprn"); umprn != "" {
		r.ID, r.BuildingID = udprn+"-"+umprn, udprn
	}
	switch {
	case r.POBox != "":
		r.Type = gazetteer.POBox
	case r.Organisation != "":
		r.Type = gazetteer.Commercial
	}
	if r.Street == "" && r.DependentStreet == "" && r.BuildingName == "" && r.Organisation == "" && r.POBox == "" {
		if r.BuildingNumber == "" && r.SubBuilding == "" {
			st.skip("no address")
			return
		}
		// A number or flat with no street: the locality names the place.
		r.Street = r.Locality
		if r.Street == "" {
			st.skip("no address")
			return
		}
		r.Locality = ""
	}
	r.Latitude, r.Longitude, r.HasLocation = coordinates(get("latitude", "lat"), get("longitude", "lon", "lng"), st)
	*rec = r
}

// numberLike reports whether a building name is a number with a letter
// or a range, as PAF writes them: "12A", "1-3", "12A-12C".
func numberLike(s string) bool {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	letters := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '-':
		case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
			letters++
		default:
			return false
		}
	}
	return letters <= 2
}

// joinWords returns whole when given, else name and descriptor joined:
// PAF splits a thoroughfare into its name and descriptor ("High", "Street").
func joinWords(whole, name, desc string) string {
	if whole != "" {
		return whole
	}
	return strings.TrimSpace(name + " " + desc)
}

// countryOfPostcode is the country a UK-system postcode is in.
func countryOfPostcode(pc string) string {
	switch {
	case strings.HasPrefix(pc, "JE"):
		return "JE"
	case strings.HasPrefix(pc, "GY"):
		return "GG"
	case strings.HasPrefix(pc, "IM"):
		return "IM"
	}
	return "GB"
}

// coordinates parses a latitude and longitude; out of range or unreadable
// ones are left out, and counted.
func coordinates(lat, lon string, st *Stats) (float64, float64, bool) {
	if lat == "" && lon == "" {
		return 0, 0, false
	}
	la, err1 := strconv.ParseFloat(lat, 64)
	lo, err2 := strconv.ParseFloat(lon, 64)
	if err1 != nil || err2 != nil || math.IsNaN(la) || math.IsNaN(lo) || la < -90 || la > 90 || lo < -180 || lo > 180 || la == 0 && lo == 0 {
		st.note("bad coordinates")
		return 0, 0, false
	}
	return la, lo, true
}

// jsonString is a JSON scalar as text; objects and arrays give "".
func jsonString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// csvErr makes a CSV reading error a SourceError naming the line.
func csvErr(err error) error {
	var pe *csv.ParseError
	var se *SourceError
	switch {
	case errors.As(err, &pe):
		return &SourceError{Line: pe.StartLine, Err: pe.Err}
	case errors.As(err, &se):
		return se
	}
	return fmt.Errorf("refimport: %w", err)
}
