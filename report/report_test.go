package report

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/internal/golden"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/runfile"
)

// Build reads the enriched output at path and works out the report, titled
// with the path unless opts has a title.
func Build(ctx context.Context, path string, opts Options) (*Data, error) {
	en, err := runfile.OpenEnriched(ctx, path, readers.Options{})
	if err != nil {
		return nil, err
	}
	defer en.Close()
	opts.Title = cmp.Or(opts.Title, path)
	return BuildFrom(ctx, en, opts)
}

// buildFixture builds the report of testdata/enriched.csv (150 rows of the
// sample run) with its summary.
func buildFixture(t *testing.T) *Data {
	t.Helper()
	st, err := ReadSummary(filepath.Join("testdata", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Build(context.Background(), filepath.Join("testdata", "enriched.csv"), Options{Summary: st, Title: "enriched.csv"})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestGoldenNumbers pins every number of the report (the points are
// counted, not listed) and the page itself.
func TestGoldenNumbers(t *testing.T) {
	d := buildFixture(t)
	b, err := json.MarshalIndent(struct {
		*Data
		Places int `json:"places"`
	}{d, len(d.Places)}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "report.json", append(b, '\n'))

	var page bytes.Buffer
	if err := d.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "report.html", withoutLand(withoutStyle(t, page.Bytes())))
}

// landGroup is the map's group of country outlines: the golden page counts
// them (the land itself is tested by TestLandEmbedded and the browser).
var landGroup = regexp.MustCompile(`(?s)(<g fill="` + landColour + `"[^>]*>\n)(.*?)(</g>)`)

// withoutLand replaces the outlines of the map with their number.
func withoutLand(page []byte) []byte {
	return landGroup.ReplaceAllFunc(page, func(g []byte) []byte {
		m := landGroup.FindSubmatch(g)
		return []byte(fmt.Sprintf("%s<!-- %d country outlines -->\n%s", m[1], bytes.Count(m[2], []byte("<path ")), m[3]))
	})
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

// TestPlacesBounded: however many places the rows are at, the map keeps
// at most maxPlaces squares, yet every located row is counted, by action,
// and the same input gives the same places.
func TestPlacesBounded(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.csv")
	var b strings.Builder
	b.WriteString("id,av_action,av_status,av_match_level,av_complete,av_address_id,av_line1,av_line2,av_line3,av_line4,av_city,av_region,av_postcode,av_country,av_country_iso,av_label,av_lines_amended,av_city_amended,av_region_amended,av_postcode_amended,av_latitude,av_longitude,av_location_accuracy,av_message,av_error,av_duplicates,av_first_row\n")
	const n = 3 * maxPlaces
	want := map[string]int64{}
	for i := range n {
		action := actionOrder[i%4]
		want[action]++
		// A grid of points 0.01 degree apart: each its own square at the
		// start, far more than maxPlaces of them.
		fmt.Fprintf(&b, "r,%s,Verified,Building,true,X,,,,,,,,,,,false,false,false,false,%.4f,%.4f,,,,1,1\n",
			action, 51.5+float64(i/150)*0.01, -10+float64(i%150)*0.01)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var got [][]Place
	for range 2 {
		d, err := Build(context.Background(), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Places) > maxPlaces || len(d.Places) < maxPlaces/8 {
			t.Fatalf("%d places for %d rows; want at most %d, and not too few", len(d.Places), n, maxPlaces)
		}
		var rows int64
		by := map[string]int64{}
		for _, p := range d.Places {
			rows += p.Rows
			for i, c := range p.Actions {
				by[kindName(i)] += c
			}
		}
		if rows != n || d.Located != n {
			t.Fatalf("places hold %d rows, located %d; want %d", rows, d.Located, n)
		}
		for a, c := range want {
			if by[a] != c || d.LocatedActions[a] != c {
				t.Errorf("%s: places %d, located %d; want %d", a, by[a], d.LocatedActions[a], c)
			}
		}
		got = append(got, d.Places)
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		t.Fatal("two reports of one file gave different places")
	}
}
