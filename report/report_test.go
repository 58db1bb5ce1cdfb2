package report

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/internal/golden"
)

// buildFixture builds the report of testdata/enriched.csv (150 rows of the
// sample run) with its summary.
func buildFixture(t *testing.T) *Data {
	t.Helper()
	st, err := ReadSummary(filepath.Join("testdata", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Build(context.Background(), filepath.Join("testdata", "enriched.csv"), Options{Stats: st, Title: "enriched.csv"})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestGoldenNumbers pins every number of the report (the points are
// counted, not listed) and the page itself.
func TestGoldenNumbers(t *testing.T) {
	d := buildFixture(t)
	c := *d
	c.Points = nil
	b, err := json.MarshalIndent(struct {
		Data
		SampledPoints int `json:"sampled_points"`
	}{c, len(d.Points)}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "report.json", append(b, '\n'))

	var page bytes.Buffer
	if err := d.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "report.html", withoutStyle(t, page.Bytes()))
}

// styleBlock is the page's inline CSS: the golden page holds the page's
// structure and numbers, not a copy of the style sheet in html.go.
var styleBlock = regexp.MustCompile(`(?s)<style>.+?</style>`)

// withoutStyle replaces the page's one style block with a marker.
func withoutStyle(t *testing.T, page []byte) []byte {
	t.Helper()
	if n := len(styleBlock.FindAll(page, -1)); n != 1 {
		t.Fatalf("the page has %d inline style blocks, want 1", n)
	}
	return styleBlock.ReplaceAll(page, []byte("<style>/* report/html.go */</style>"))
}

// TestNumbersAgreeWithSummary cross-checks the counts read from the file
// against the run's own statistics.
func TestNumbersAgreeWithSummary(t *testing.T) {
	d := buildFixture(t)
	st, _ := ReadSummary(filepath.Join("testdata", "summary.json"))
	if d.Rows != st.RowsWritten {
		t.Errorf("rows %d, summary %d", d.Rows, st.RowsWritten)
	}
	for k, v := range st.Actions {
		if d.Actions[k] != v {
			t.Errorf("action %s: %d, summary %d", k, d.Actions[k], v)
		}
	}
	for k, v := range st.MatchLevels {
		if d.MatchLevels[k] != v {
			t.Errorf("match level %s: %d, summary %d", k, d.MatchLevels[k], v)
		}
	}
	if st.Duplicates != nil && (d.Duplicates.Groups != st.Duplicates.Groups || d.Duplicates.Rows != st.Duplicates.Rows) {
		t.Errorf("duplicates %+v, summary %+v", d.Duplicates, *st.Duplicates)
	}
}

// TestFormatsAgree: the same run written as CSV and as JSONL gives the
// same report.
func TestFormatsAgree(t *testing.T) {
	var got []*Data
	for _, name := range []string{"enriched40.csv", "enriched40.jsonl"} {
		d, err := Build(context.Background(), filepath.Join("testdata", name), Options{Title: "x"})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		a, _ := json.Marshal(got[0])
		b, _ := json.Marshal(got[1])
		t.Fatalf("CSV and JSONL reports differ:\n%s\n%s", a, b)
	}
}

// TestSelfContained: the page fetches nothing (no external reference of
// any kind) and escapes what it shows.
func TestSelfContained(t *testing.T) {
	d := buildFixture(t)
	d.Title = `<script>alert(1)</script>`
	var page bytes.Buffer
	if err := d.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	s := page.String()
	s = strings.ReplaceAll(s, `xmlns="http://www.w3.org/2000/svg"`, "")
	for _, re := range []string{`(?i)\bsrc=`, `(?i)\bhref=`, `(?i)url\(`, `(?i)@import`, `(?i)https?://`, `(?i)<script`, `ZgotmplZ`} {
		if m := regexp.MustCompile(re).FindString(s); m != "" {
			t.Errorf("page holds %q", m)
		}
	}
}

// TestSampleBounded: the map's sample never passes MaxPoints, and the same
// input gives the same sample.
func TestSampleBounded(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.csv")
	var b strings.Builder
	b.WriteString("id,av_action,av_status,av_match_level,av_complete,av_address_id,av_line1,av_line2,av_line3,av_line4,av_city,av_region,av_postcode,av_country,av_country_iso,av_label,av_lines_amended,av_city_amended,av_region_amended,av_postcode_amended,av_latitude,av_longitude,av_location_accuracy,av_message,av_error,av_duplicates,av_first_row\n")
	for i := range MaxPoints + 500 {
		b.WriteString("r,Accept,Verified,Building,true,X,,,,,,,,,,,false,false,false,false,53.")
		b.WriteString(strings.Repeat("1", 1+i%7))
		b.WriteString(",-6.2,,,,1,1\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var pts [][]Point
	for range 2 {
		d, err := Build(context.Background(), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Points) != MaxPoints || d.Located != MaxPoints+500 {
			t.Fatalf("%d points of %d located", len(d.Points), d.Located)
		}
		pts = append(pts, d.Points)
	}
	if !reflect.DeepEqual(pts[0], pts[1]) {
		t.Fatal("two reports of one file sampled different points")
	}
}
