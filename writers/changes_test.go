package writers

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/addrclean/addrclean/api"
)

// changed is a response to input whose label is label, highlighted hl,
// with details and amended flags set by set.
func changed(input string, label []string, hl [][]int, set func(*api.Information)) Result {
	v := response(api.ActionSuggest, label, label, hl)
	v.Information.Details = api.Details{}
	if set != nil {
		set(&v.Information)
	}
	return Result{Row: 1, InputLabel: input, Response: v}
}

// TestChanges covers the vocabulary of av_changes with the cases the
// sample shows: a corrected county, a street-level match that loses the
// flat (row 19 of the issue), an added town, a typo in the town, a
// country the label leaves out, abbreviations and "Co.".
func TestChanges(t *testing.T) {
	tests := []struct {
		name string
		r    Result
		want string
		mark string // MarkDiff
	}{
		{
			name: "region corrected",
			r: changed("20 Mulberry Lane, Carrickmacross, Co. Donegal, A81 4VH1, Ireland",
				[]string{"20 Mulberry Lane", "Carrickmacross", "Monaghan", "A81 4VH1"}, [][]int{{}, {}, {0, 8}, {}},
				func(i *api.Information) { i.Details.Region, i.RegionAmended = api.DetailChanged, true }),
			want: "region corrected",
			mark: "20 Mulberry Lane, Carrickmacross, [+Monaghan+], [-Co. Donegal-], A81 4VH1",
		},
		{
			name: "a street-level match loses the flat",
			r: changed("Flat 10, Liberty House, Orchard Avenue, York, North Yorkshire, YO1 0BW, United Kingdom",
				[]string{"Orchard Avenue", "York", "North Yorkshire", "YO1 0BW"}, nil,
				func(i *api.Information) { i.AddressLinesAmended, i.Details.SubBuildingNumber = true, api.DetailIgnored }),
			want: "sub-building ignored; Flat 10, Liberty House dropped",
			mark: "[-Flat 10, Liberty House-], Orchard Avenue, York, North Yorkshire, YO1 0BW",
		},
		{
			name: "town added, postcode corrected",
			r: changed("22 Hillside Dr, Co. Wicklow, A98 1YXR, Ireland",
				[]string{"22 Hillside Drive", "Bray", "Wicklow", "A98 XC6C"}, [][]int{{}, {0, 4}, {}, {4, 4}},
				func(i *api.Information) {
					i.Details.City, i.Details.Postcode, i.CityAmended, i.PostcodeAmended = api.DetailAdded, api.DetailChanged, true, true
				}),
			want: "town added; postcode corrected",
			mark: "22 Hillside Drive, [+Bray+], Wicklow, [-1YXR-], A98 [+XC6C+]",
		},
		{
			name: "a typo in the town is a correction, not a loss",
			r: changed("31 Páirc Mhuire Avenue, Gplway, Galway, H91 7KCE, Ireland",
				[]string{"31 Páirc Mhuire Avenue", "Galway", "Galway", "H91 7KCE"}, [][]int{{}, {0, 6}, {}, {}},
				func(i *api.Information) { i.Details.City, i.CityAmended = api.DetailChanged, true }),
			want: "town corrected",
			mark: "31 Páirc Mhuire Avenue, [-Gplway-], [+Galway+], Galway, H91 7KCE",
		},
		{
			name: "the organisation line dropped",
			r: changed("Attn: Fiona Kennedy, Windsor View, Dundalk, Co. Louth, A91 9R3K, Ireland",
				[]string{"Windsor View", "Dundalk", "Louth", "A91 9R3K"}, nil,
				func(i *api.Information) { i.Details.Organization = api.DetailIgnored }),
			want: "organisation ignored; Attn: Fiona Kennedy dropped",
			mark: "[-Attn: Fiona Kennedy-], Windsor View, Dundalk, Louth, A91 9R3K",
		},
		{
			name: "abbreviations, accents, spacing and case are no change",
			r: changed("1 BEECH GDNS, Dun Laoghaire, Co. Dublin, a96x2y3, Éire",
				[]string{"1 Beech Gardens", "Dún Laoghaire", "Dublin", "A96 X2Y3"}, nil, nil),
			want: ChangesNone,
			mark: "1 Beech Gardens, Dún Laoghaire, Dublin, A96 X2Y3",
		},
		{
			name: "building number added",
			r: changed("Chestnut Terrace, Dublin 13, D13 X368", []string{"4 Chestnut Terrace", "Dublin 13", "D13 X368"}, [][]int{{0, 1}},
				func(i *api.Information) { i.AddressLinesAmended, i.Details.BuildingNumber = true, api.DetailAdded }),
			want: "building number added",
			mark: "[+4+] Chestnut Terrace, Dublin 13, D13 X368",
		},
		{
			name: "lines amended with no detail",
			r: changed("27 Davtt Gdns, Cork", []string{"27 Davitt Gardens", "Cork"}, [][]int{{3, 6}},
				func(i *api.Information) { i.AddressLinesAmended = true }),
			want: "lines corrected",
			mark: "[-Davtt-], 27 [+Davitt+] Gardens, Cork",
		},
		{
			name: "no match",
			r: changed("12 Rue des Lilas, Lyon, 69003, France", []string{"12 Rue des Lilas", "69003", "Lyon"}, nil,
				func(i *api.Information) { i.MatchLevel = api.LevelNone }),
			want: ChangesNotMatched,
			mark: "12 Rue des Lilas, 69003, Lyon",
		},
		{name: "error", r: Result{Row: 1, InputLabel: "x", Err: "no address"}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Changes(tt.r); got != tt.want {
				t.Errorf("Changes = %q, want %q", got, tt.want)
			}
			if got := Changes(tt.r); got != Changes(tt.r) {
				t.Error("Changes is not deterministic")
			}
			if tt.r.Response == nil {
				return
			}
			a := tt.r.Response.Address
			if got := MarkDiff(tt.r.InputLabel, a.Label, a.Highlights); got != tt.mark {
				t.Errorf("MarkDiff = %q, want %q", got, tt.mark)
			}
		})
	}
}

// parseMarks reads MarkDiff's notation back into plain, added ('+') and
// removed ('-') runs: the reader the README describes.
func parseMarks(s string) (text string, kinds string) {
	var b, k strings.Builder
	kind := byte(' ')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
			k.WriteByte(kind)
		case kind == ' ' && c == '[' && i+1 < len(s) && (s[i+1] == '+' || s[i+1] == '-'):
			kind = s[i+1]
			i++
		case kind != ' ' && c == kind && i+1 < len(s) && s[i+1] == ']':
			kind = ' '
			i++
		default:
			b.WriteByte(c)
			k.WriteByte(kind)
		}
	}
	return b.String(), k.String()
}

// TestMarkDiffUnambiguous: text holding the marks themselves, and the
// escape character, reads back exactly, each character in its run.
func TestMarkDiffUnambiguous(t *testing.T) {
	for _, tc := range []struct {
		input string
		label []string
		hl    [][]int
	}{
		{"Unit [-3-], a\\b, Flat+]", []string{"Unit [-3-]", "x[+y+]z-]"}, [][]int{{0, 4}, {1, 4}}},
		{"[+], -], \\", []string{"a+", "[b"}, [][]int{{0, 2}, {0, 1}}},
	} {
		got := MarkDiff(tc.input, tc.label, tc.hl)
		text, kinds := parseMarks(got)
		var wantText, wantKinds strings.Builder
		for _, s := range markedSegments(tc.input, tc.label, tc.hl) {
			wantText.WriteString(s.text)
			k := " "
			switch {
			case s.hi:
				k = "+"
			case s.removed:
				k = "-"
			}
			wantKinds.WriteString(strings.Repeat(k, len(s.text)))
		}
		if text != wantText.String() || kinds != wantKinds.String() {
			t.Errorf("MarkDiff = %q reads back as %q / %q, want %q / %q", got, text, kinds, wantText.String(), wantKinds.String())
		}
	}
}

// TestXLSXReviewLayout: the review workbook freezes the header and the
// columns through decision, keeps the decision drop-down, wraps the
// labels at their width, marks additions bold red and removals struck
// through, and shows the id column second.
func TestXLSXReviewLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "review.xlsx")
	header := []string{"Name", "Address 1", "Town", "Customer ID"}
	w, err := NewReview(path, header, Options{IDColumn: "Customer ID"})
	if err != nil {
		t.Fatal(err)
	}
	r := changed("Flat 10, Orchard Avenue, Yrok", []string{"Orchard Avenue", "York"}, [][]int{{}, {0, 4}},
		func(i *api.Information) { i.Details.City = api.DetailChanged })
	r.Cells = []string{"Emma Ryan", "Flat 10, Orchard Avenue", "Yrok", "C019"}
	if err := w.Write(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows("Review")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"row", "Customer ID", "decision", "av_action", "av_changes", "input_label", "matched_label", "av_message",
		"edit_line1", "edit_line2", "edit_line3", "edit_line4", "edit_city", "edit_region", "edit_postcode", "edit_country",
		"av_address_id", "av_error", "Name", "Address 1", "Town"}
	if strings.Join(rows[0], "|") != strings.Join(want, "|") {
		t.Fatalf("header %q\nwant   %q", rows[0], want)
	}
	if rows[1][1] != "C019" || rows[1][4] != "town corrected; Flat 10 dropped" {
		t.Errorf("row %q", rows[1])
	}
	panes, err := f.GetPanes("Review")
	if err != nil {
		t.Fatal(err)
	}
	if !panes.Freeze || panes.XSplit != 3 || panes.YSplit != 1 || panes.TopLeftCell != "D2" {
		t.Errorf("panes %+v, want frozen through column C (decision) and row 1", panes)
	}
	dvs, err := f.GetDataValidations("Review")
	if err != nil || len(dvs) != 1 || dvs[0].Sqref != "C2:C2" || !strings.Contains(dvs[0].Formula1, "accept,keep,edit") {
		t.Errorf("decision drop-down: %v %+v", err, dvs)
	}
	for _, col := range []string{"F", "G"} {
		if width, _ := f.GetColWidth("Review", col); width != labelWidth {
			t.Errorf("column %s width %v, want %v", col, width, labelWidth)
		}
		style, _ := f.GetCellStyle("Review", col+"2")
		if s, err := f.GetStyle(style); err != nil || s.Alignment == nil || !s.Alignment.WrapText {
			t.Errorf("column %s is not wrapped (%v)", col, err)
		}
	}
	runs, err := f.GetCellRichText("Review", "G2")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, run := range runs {
		mark := ""
		switch {
		case run.Font != nil && run.Font.Strike:
			mark = "struck:"
		case run.Font != nil && run.Font.Bold && run.Font.Color == "FF0000":
			mark = "red:"
		}
		got = append(got, mark+run.Text)
	}
	if strings.Join(got, "|") != "struck:Flat 10|, Orchard Avenue, |red:York|, |struck:Yrok" {
		t.Errorf("matched_label runs %q", got)
	}
}
