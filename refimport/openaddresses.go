package refimport

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/addrclean/addrclean/countries"
	"github.com/addrclean/addrclean/gazetteer"
)

// OpenAddresses converts an OpenAddresses file to the reference format:
// CSV with the header LON,LAT,NUMBER,STREET,UNIT,CITY,DISTRICT,REGION,
// POSTCODE,ID,HASH (any order and case), or GeoJSON (a FeatureCollection
// or one Feature per line) whose properties have those names. country is
// the file's country, as an ISO code or a name: OpenAddresses files have
// no country column.
//
// The id is the row's HASH, else its ID, else "OA" and the row number;
// rows repeating an id already written are left out (OpenAddresses
// sources overlap), for which the ids seen are kept, 8 bytes each. The
// town is CITY, else DISTRICT; the county REGION without "Co." or
// "County". Values written all in capitals are written in mixed case.
// Rows with no town or no street are left out; postcodes that are not
// valid for the country are dropped from their row.
func OpenAddresses(ctx context.Context, r io.Reader, w io.Writer, country string) (Stats, error) {
	iso, err := gazetteer.ReferenceCountry(country, "")
	if err != nil || strings.TrimSpace(country) == "" {
		return Stats{}, fmt.Errorf("%w: OpenAddresses needs the country (ISO code or name), got %q", ErrFormat, country)
	}
	country = iso
	src, isJSON, err := openInput(r)
	if err != nil {
		return Stats{}, err
	}
	var st Stats
	seen := make(map[uint64]struct{})
	f := make(map[string]string, 11)
	convert := func(rec *gazetteer.Record) {
		if r, ok := oaRecord(f, country, st.Read, &st); ok {
			h := fnv.New64a()
			h.Write([]byte(r.ID))
			k := h.Sum64()
			if _, dup := seen[k]; dup {
				st.skip("repeated id")
				return
			}
			seen[k] = struct{}{}
			*rec = r
		}
	}
	var next func(*gazetteer.Record) (bool, error)
	if isJSON {
		js, err := newJSONStream(src)
		if err != nil {
			return st, err
		}
		next = func(rec *gazetteer.Record) (bool, error) {
			var feat struct {
				Properties map[string]any `json:"properties"`
				Geometry   *struct {
					Type        string            `json:"type"`
					Coordinates []json.RawMessage `json:"coordinates"`
				} `json:"geometry"`
			}
			ok, err := js.next(&feat)
			if !ok || err != nil {
				return ok, err
			}
			st.Read++
			clear(f)
			for k, v := range feat.Properties {
				f[fieldKey(k)] = jsonString(v)
			}
			if g := feat.Geometry; g != nil && g.Type == "Point" && len(g.Coordinates) >= 2 {
				f["lon"], f["lat"] = string(g.Coordinates[0]), string(g.Coordinates[1])
			}
			convert(rec)
			return true, nil
		}
	} else {
		cr, header, cols, err := csvFirstRow(src)
		if err != nil {
			return st, err
		}
		if !slices.Contains(cols, "street") || !slices.Contains(cols, "number") {
			return st, fmt.Errorf("%w: OpenAddresses CSV needs NUMBER and STREET columns, header is %q", ErrFormat, header)
		}
		next = func(rec *gazetteer.Record) (bool, error) {
			more, ok, err := cr.nextRow(f, cols, &st)
			if ok {
				convert(rec)
			}
			return more, err
		}
	}
	err = writeAll(ctx, w, &st, next)
	return st, err
}

// oaRecord makes a reference record of the OpenAddresses fields f (keys
// folded by fieldKey); false, counted, when the row is left out.
func oaRecord(f map[string]string, country string, row int, st *Stats) (gazetteer.Record, bool) {
	get := func(k string) string { return strings.TrimSpace(f[k]) }
	r := gazetteer.Record{
		ID:             cmp.Or(get("hash"), get("id")),
		BuildingNumber: get("number"),
		Street:         gazetteer.DisplayCase(get("street")),
		SubBuilding:    gazetteer.DisplayCase(get("unit")),
		City:           gazetteer.DisplayCase(cmp.Or(get("city"), get("district"))),
		Region:         gazetteer.DisplayCase(trimCounty(get("region"))),
		Country:        country,
		Type:           gazetteer.Residential,
	}
	if r.ID == "" {
		r.ID = "OA" + strconv.Itoa(row)
	}
	if r.City == "" {
		st.skip("no city")
		return r, false
	}
	if r.Street == "" {
		st.skip("no street")
		return r, false
	}
	if pc := get("postcode"); pc != "" {
		var c string
		ok := true
		switch countries.Postal(country) {
		case "IE":
			c, ok = gazetteer.ParseEircode(pc)
		case "GB":
			c, ok = gazetteer.ParseUKPostcode(pc)
		default:
			c = strings.Join(strings.Fields(pc), " ")
		}
		if !ok {
			st.note("postcode not valid for the country")
			c = ""
		}
		r.Postcode = c
	}
	r.Latitude, r.Longitude, r.HasLocation = coordinates(get("lat"), get("lon"), st)
	return r, true
}

// trimCounty drops "Co." or "County" before a county name.
func trimCounty(s string) string {
	for _, p := range []string{"co. ", "co ", "county "} {
		if len(s) > len(p) && strings.EqualFold(s[:len(p)], p) {
			return strings.TrimSpace(s[len(p):])
		}
	}
	return s
}
