package writers

import (
	"github.com/addrclean/addrclean/api"
)

// fixtureHeader has an unnamed column, a duplicate name and a trailing
// unnamed column, all of which must come through unchanged.
var fixtureHeader = []string{"Customer ID", "Name", "Address 1", "Address 2", "Town", "County", "Eircode", "", "Notes", "Notes", ""}

// response builds a verify answer; lines are the matched address lines.
func response(action api.Action, lines []string, label []string, hl [][]int) *api.VerifyResponse {
	v := &api.VerifyResponse{
		Type:   "verify",
		Action: action,
		Form:   api.Form{Language: "en", Message: api.Message{ID: 100, Severity: api.SeverityInformation, Value: "Address verified"}},
		Information: api.Information{
			Status: api.StatusVerified, MatchLevel: api.LevelBuilding, Complete: true, SubBuilding: "None",
			Details: api.Details{Street: api.DetailUnchanged},
		},
		Address: api.MatchedAddress{
			ID: "IE-000123", Language: "en", Charset: "Latn", Variation: "V",
			City:     &api.Value{Value: "Dublin"},
			Region:   &api.Value{Value: "Co. Dublin"},
			Postcode: &api.Value{Value: "D02 X285"},
			Country:  &api.Country{Language: "en", Value: "Ireland", ISO: "IE"},
			Label:    label, Highlights: hl,
		},
		Data:  api.Data{Location: &api.Location{Latitude: 53.3498053, Longitude: -6.2603097, CRS: "WGS84", Accuracy: "BUILDING"}},
		Links: []api.Link{{Rel: "self", Href: "https://example.invalid/3.0/verify?addressLine=1", Title: "verify"}},
	}
	for i, l := range lines {
		v.Address.Lines = append(v.Address.Lines, api.Line{Key: "AddressLine" + string(rune('1'+i)), Value: l})
	}
	return v
}

// fixtureResults covers every case the golden files check.
func fixtureResults() []Result {
	var rs []Result
	add := func(r Result) {
		r.Row = len(rs) + 1
		rs = append(rs, r)
	}

	// 1. A plain Accept.
	add(Result{
		Cells:      []string{"C001", "Mary Byrne", "1 College Green", "", "Dublin", "Dublin", "D02 X285", "x", "", "", ""},
		InputLabel: "1 College Green, Dublin, Dublin, D02 X285",
		Response:   response(api.ActionAccept, []string{"1 College Green"}, []string{"1 College Green", "Dublin 2", "D02 X285"}, [][]int{{}, {}, {}}),
	})

	// 2. Suggest with multi-byte highlights.
	sug := response(api.ActionSuggest, []string{"12 Main Street"},
		[]string{"12 Main Street", "Dún Laoghaire", "Co. Dublin", "A96 X2Y3"},
		[][]int{{0, 2}, {0, 3}, {}, {4, 4}})
	sug.Information.Status = api.StatusCorrected
	sug.Information.AddressLinesAmended = true
	sug.Information.CityAmended = true
	sug.Information.PostcodeAmended = true
	sug.Address.City = &api.Value{Value: "Dún Laoghaire"}
	sug.Address.Postcode = &api.Value{Value: "A96 X2Y3"}
	sug.Data.Location = &api.Location{Latitude: 53.2945, Longitude: -6.1336, CRS: "WGS84", Accuracy: "BUILDING"}
	sug.Form.Message = api.Message{ID: 201, Severity: api.SeverityWarning, Value: "Address corrected"}
	add(Result{
		Cells:      []string{"C002", "Seán Ó Súilleabháin", "21 Main St", "", "Dun Laoire", "Dublin", "", "", "", "", ""},
		InputLabel: "21 Main St, Dun Laoire, Dublin",
		Response:   sug,
	})

	// 3. Confirm: no id, no location, highlight edge cases (out of range,
	// negative start, overlapping, zero length, odd length, more pairs).
	conf := response(api.ActionConfirm, []string{"Main Street"},
		[]string{"Main Street", "Kilkenny", "Co. Kilkenny", "Ireland"},
		[][]int{{5, 100}, {-3, 5, 6, 2}, {0, 4, 2, 4, 20, 1}, {0, 0, 3}, {1, 1}})
	conf.Address.ID = ""
	conf.Data.Location = nil
	conf.Information.MatchLevel = api.LevelStreet
	conf.Information.Status = api.StatusPartial
	conf.Information.Complete = false
	conf.Form.Message = api.Message{ID: 301, Severity: api.SeverityWarning, Value: "Building not found; street matched"}
	add(Result{
		Cells:      []string{"C003", "Pat Murphy", "99 Main Street", "", "Kilkenny", "", "", "", "", "", ""},
		InputLabel: "99 Main Street, Kilkenny",
		Response:   conf,
	})

	// 4. Reject.
	rej := response(api.ActionReject, []string{"PO Box 42"}, []string{"PO Box 42", "Cork", "T12 AB34"}, [][]int{{}, {}, {}})
	rej.Form.Message = api.Message{ID: 401, Severity: api.SeverityError, Value: "PO Box addresses are not allowed"}
	add(Result{
		Cells:      []string{"C004", "Acme Ltd", "PO Box 42", "", "Cork", "Cork", "T12 AB34", "", "", "", ""},
		InputLabel: "PO Box 42, Cork, Cork, T12 AB34",
		Response:   rej,
	})

	// 5. Error after retries.
	add(Result{
		Cells:      []string{"C005", "Joe Bloggs", "5 Quay St", "", "Galway", "", "", "", "", "", ""},
		InputLabel: "5 Quay St, Galway",
		Err:        "service unavailable after 3 retries",
	})

	// 6. Error: nothing to send.
	add(Result{
		Cells: []string{"C006", "No Address", "", "", "", "", "", "", "", "", ""},
		Err:   "no address",
	})

	// 7. Formula probes, in the input and in service values.
	probe := response(api.ActionAccept, []string{"=cmd|' /C calc'!A0", "@SUM(1+1)"}, []string{"=cmd|' /C calc'!A0", "Dublin"}, [][]int{{}, {}})
	probe.Form.Message.Value = "-Address verified"
	add(Result{
		Cells:      []string{"=HYPERLINK(\"http://evil.example\",\"x\")", "+353 1 234 5678", "-5", "@SUM(A1)", "\tTAB", "\rCR", "-1.5e3", "-Inf", "+1", "0x1p-2", "=1+1"},
		InputLabel: "=cmd, Dublin",
		Response:   probe,
	})

	// 8. More than four address lines, one empty.
	many := response(api.ActionAccept, []string{"Apt 4", "Block C", "The Maltings", "Bridge Street", "", "Off Main Street"},
		[]string{"Apt 4, Block C", "The Maltings, Bridge Street", "Off Main Street", "Dublin 8"}, [][]int{{}, {}, {}, {}})
	add(Result{
		Cells:      []string{"C008", "Long Address", "Apt 4 Block C", "The Maltings", "Dublin", "", "", "", "", "", ""},
		InputLabel: "Apt 4 Block C, The Maltings, Dublin",
		Response:   many,
	})

	// 9. Unicode and embedded newlines; a highlight on an emoji and one at
	// the very end of a line.
	uni := response(api.ActionSuggest, []string{"Flat 2, Block B"},
		[]string{"Flat 2, Block B", "Ráth Maonais 🏠", "東京"},
		[][]int{{0, 4}, {13, 1}, {1, 5}})
	uni.Address.City = &api.Value{Value: "Ráth Maonais"}
	add(Result{
		Cells:      []string{"C009", "Zoë O'Brien 🏠", "Flat 2\nBlock B", "Line with \"quotes\", comma", "Rathmines", "Dublin", "D06 F9K8", "", "中文\r\nCRLF", "", ""},
		InputLabel: "Flat 2, Block B, Line with \"quotes\", comma, Rathmines, Dublin, D06 F9K8",
		Response:   uni,
	})

	// 10. A short row (padded) and a row with extra cells (cut in CSV and
	// XLSX, kept in JSONL).
	add(Result{
		Cells:      []string{"C010", "Short Row"},
		InputLabel: "",
		Response:   response(api.ActionAccept, []string{"1 Short Lane"}, []string{"1 Short Lane", "Dublin"}, nil),
	})
	add(Result{
		Cells:      []string{"C011", "Wide Row", "2 Wide Road", "", "Dublin", "", "", "", "", "", "", "EXTRA1", "EXTRA2"},
		InputLabel: "2 Wide Road, Dublin",
		Response:   response(api.ActionAccept, []string{"2 Wide Road"}, []string{"2 Wide Road", "Dublin"}, nil),
	})

	// 12. From the cache: the columns do not change.
	add(Result{
		Cells:      []string{"C012", "Cached", "1 College Green", "", "Dublin", "", "", "", "", "", ""},
		InputLabel: "1 College Green, Dublin",
		Response:   response(api.ActionAccept, []string{"1 College Green"}, []string{"1 College Green", "Dublin 2", "D02 X285"}, nil),
		Cached:     true,
	})

	// 13. A reason and a response: the reason wins, the row is Error.
	add(Result{
		Cells:      []string{"C013", "Both", "3 Both Street", "", "Dublin", "", "", "", "", "", ""},
		InputLabel: "3 Both Street, Dublin",
		Response:   response(api.ActionAccept, []string{"3 Both Street"}, []string{"3 Both Street"}, nil),
		Err:        "unauthorised",
	})

	// 14. Confirm with highlights but no label, and a location at 0,0
	// (present, so written).
	nolabel := response(api.ActionConfirm, nil, nil, [][]int{{0, 3}})
	nolabel.Address.City = nil
	nolabel.Address.Region = nil
	nolabel.Address.Postcode = nil
	nolabel.Address.Country = nil
	nolabel.Data.Location = &api.Location{Latitude: 0, Longitude: 0, Accuracy: "NONE"}
	add(Result{
		Cells:      []string{"C014", "Nowhere", "Null Island", "", "", "", "", "", "", "", ""},
		InputLabel: "Null Island",
		Response:   nolabel,
	})

	// 15. A highlight whose label starts with a formula character, and
	// an action the writers do not know.
	odd := response(api.Action("Unknown"), []string{"-1 Minus Street"}, []string{"=1 Minus Street", "Dublin"}, [][]int{{0, 2}})
	add(Result{
		Cells:      []string{"C015", "Odd", "1 Minus Street", "", "Dublin", "", "", "", "", "", ""},
		InputLabel: "1 Minus Street, Dublin",
		Response:   odd,
	})
	return rs
}
