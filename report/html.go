package report

import (
	"cmp"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/addrclean/addrclean/pipeline"
)

// actionColours match the action fills of the XLSX outputs, darker so that
// small dots stay visible.
var actionColours = map[string]string{
	"Accept":  "#2e7d32",
	"Suggest": "#f9a825",
	"Confirm": "#ef6c00",
	"Reject":  "#c62828",
	"Error":   "#616161",
}

const otherColour = "#6a1b9a"

func colour(action string) string {
	if c, ok := actionColours[action]; ok {
		return c
	}
	return otherColour
}

var (
	actionOrder = []string{"Accept", "Suggest", "Confirm", "Reject", "Error"}
	levelOrder  = []string{"Building", "SubBuilding", "Street", "Locality", "Region", "None"}
	errorOrder  = []string{pipeline.ErrKindInput, pipeline.ErrKindPermanent, pipeline.ErrKindTransient, pipeline.ErrKindRateLimited}
)

// bar is one row of a bar table.
type bar struct {
	Label  string
	Count  int64
	Pct    string // of the table's total, "12.5%"
	Width  string // CSS width of the bar
	Colour string
}

func bars(m map[string]int64, order []string, total int64, coloured bool) []bar {
	keys := slices.Clone(order)
	var rest []string
	for k := range m {
		if !slices.Contains(order, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	keys = append(keys, rest...)
	var out []bar
	for _, k := range keys {
		n := m[k]
		if n == 0 {
			continue
		}
		out = append(out, newBar(k, n, total, coloured))
	}
	return out
}

func newBar(k string, n, total int64, coloured bool) bar {
	p := 0.0
	if total > 0 {
		p = 100 * float64(n) / float64(total)
	}
	b := bar{Label: k, Count: n, Pct: strconv.FormatFloat(p, 'f', 1, 64) + "%", Width: strconv.FormatFloat(p, 'f', 2, 64) + "%", Colour: "#1565c0"}
	if coloured {
		b.Colour = colour(k)
	}
	return b
}

func countBars(cs []Count, total int64) []bar {
	out := make([]bar, 0, len(cs))
	for _, c := range cs {
		out = append(out, newBar(c.Key, c.Count, total, false))
	}
	return out
}

// dot is one point of the map, in SVG coordinates.
type dot struct {
	X, Y   string
	Colour string
}

// mapView is the scatter of the coordinates.
type mapView struct {
	W, H    int
	Dots    []dot
	Legend  []bar
	Span    string // the area shown, for people
	Sampled bool
}

const mapWidth = 760

// project lays the sampled points out equirectangularly, longitudes
// scaled by the cosine of the middle latitude, so a country keeps its shape.
func project(d *Data) *mapView {
	if len(d.Points) == 0 {
		return nil
	}
	minLat, maxLat, minLon, maxLon := 90.0, -90.0, 180.0, -180.0
	for _, p := range d.Points {
		minLat, maxLat = math.Min(minLat, p.Lat), math.Max(maxLat, p.Lat)
		minLon, maxLon = math.Min(minLon, p.Lon), math.Max(maxLon, p.Lon)
	}
	// Room around the points, and at least ~1 km across.
	padLat := math.Max((maxLat-minLat)*0.05, 0.01)
	padLon := math.Max((maxLon-minLon)*0.05, 0.01)
	minLat, maxLat, minLon, maxLon = minLat-padLat, maxLat+padLat, minLon-padLon, maxLon+padLon
	k := math.Cos((minLat + maxLat) / 2 * math.Pi / 180)
	w := (maxLon - minLon) * k
	h := maxLat - minLat
	height := int(math.Round(mapWidth * h / w))
	height = min(max(height, 240), 900)
	sx, sy := float64(mapWidth)/w, float64(height)/h
	s := math.Min(sx, sy)
	offX := (float64(mapWidth) - w*s) / 2
	offY := (float64(height) - h*s) / 2
	m := &mapView{W: mapWidth, H: height, Sampled: d.Located > int64(len(d.Points))}
	counts := map[string]int64{}
	// Draw the rarer actions last so they are not hidden under Accept.
	pts := slices.Clone(d.Points)
	order := func(a string) int {
		if i := slices.Index(actionOrder, a); i >= 0 {
			return i
		}
		return len(actionOrder)
	}
	slices.SortStableFunc(pts, func(a, b Point) int { return cmp.Compare(order(a.Action), order(b.Action)) })
	for _, p := range pts {
		x := offX + (p.Lon-minLon)*k*s
		y := offY + (maxLat-p.Lat)*s
		m.Dots = append(m.Dots, dot{X: strconv.FormatFloat(x, 'f', 1, 64), Y: strconv.FormatFloat(y, 'f', 1, 64), Colour: colour(p.Action)})
		counts[p.Action]++
	}
	m.Legend = bars(counts, actionOrder, int64(len(pts)), true)
	m.Span = fmt.Sprintf("latitude %.3f to %.3f, longitude %.3f to %.3f", minLat+padLat, maxLat-padLat, minLon+padLon, maxLon-padLon)
	return m
}

type view struct {
	*Data
	ActionBars  []bar
	LevelBars   []bar
	AmendedBars []bar
	ErrorKinds  []bar
	ErrorMsgs   []bar
	Reasons     []bar
	Errors      int64
	NeedReview  int64
	Map         *mapView
}

func newView(d *Data) view {
	v := view{Data: d}
	v.ActionBars = bars(d.Actions, actionOrder, d.Rows, true)
	v.LevelBars = bars(d.MatchLevels, levelOrder, d.Verified, false)
	for _, a := range []struct {
		k string
		n int64
	}{{"lines", d.Amended.Lines}, {"city", d.Amended.City}, {"region", d.Amended.Region}, {"postcode", d.Amended.Postcode}} {
		v.AmendedBars = append(v.AmendedBars, newBar(a.k, a.n, d.Verified, false))
	}
	v.Errors = d.Actions["Error"]
	v.NeedReview = d.Rows - d.Actions["Accept"]
	v.ErrorKinds = bars(d.ErrorKinds, errorOrder, v.Errors, false)
	v.ErrorMsgs = countBars(d.ErrorMessages, v.Errors)
	v.Reasons = countBars(d.ReviewReasons, v.NeedReview)
	v.Map = project(d)
	return v
}

var page = template.Must(template.New("report").Parse(pageHTML))

// WriteHTML renders the report as one self-contained page.
func (d *Data) WriteHTML(w io.Writer) error {
	return page.Execute(w, newView(d))
}

// WriteFile renders the report into path, atomically: a temporary file
// beside it, renamed into place.
func (d *Data) WriteFile(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := d.WriteHTML(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("report %s: %w", path, err)
	}
	// CreateTemp makes the file 0600; a report is for sharing.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("report %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("report %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("report %s: %w", path, err)
	}
	return nil
}

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>addrclean report: {{.Title}}</title>
<style>
body{font:15px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f5f6f8;color:#1f2328}
header{background:#263238;color:#fff;padding:18px 28px}
header h1{margin:0;font-size:22px}
header p{margin:4px 0 0;color:#cfd8dc}
main{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:18px;padding:18px 28px}
section{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:14px 18px}
section.wide{grid-column:1/-1}
h2{font-size:17px;margin:0 0 10px}
table{border-collapse:collapse;width:100%}
td,th{padding:3px 6px;text-align:left;vertical-align:middle}
th{font-weight:600;color:#57606a;font-size:13px}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap;width:5em}
td.p{text-align:right;color:#57606a;width:4em}
td.bar{width:32%}
.track{background:#eef1f4;border-radius:3px;height:14px}
.fill{height:14px;border-radius:3px}
.kpis{display:flex;flex-wrap:wrap;gap:12px}
.kpi{background:#eef1f4;border-radius:6px;padding:8px 12px;min-width:110px}
.kpi b{display:block;font-size:22px}
.kpi span{color:#57606a;font-size:13px}
.none{color:#57606a;font-style:italic}
.swatch{display:inline-block;width:11px;height:11px;border-radius:50%;margin-right:5px;vertical-align:-1px}
svg.map{background:#e3f2fd;border:1px solid #b0bec5;border-radius:4px;max-width:100%;height:auto}
</style>
</head>
<body>
<header>
<h1>addrclean run report</h1>
<p>{{.Title}} &middot; {{.Rows}} rows &middot; {{.NeedReview}} for review &middot; {{.Errors}} errors</p>
</header>
<main>
<section>
<h2>Rows by action</h2>
{{template "bars" .ActionBars}}
</section>
<section>
<h2>Match level <small>(of {{.Verified}} verified rows)</small></h2>
{{template "bars" .LevelBars}}
</section>
<section>
<h2>What the service amended <small>(of {{.Verified}} verified rows)</small></h2>
{{template "bars" .AmendedBars}}
</section>
<section>
<h2>Errors <small>({{.Errors}} rows)</small></h2>
{{if .ErrorKinds}}<h3>By kind</h3>{{template "bars" .ErrorKinds}}{{end}}
{{if .ErrorMsgs}}<h3>By message</h3>{{template "bars" .ErrorMsgs}}{{else}}<p class="none">No errors.</p>{{end}}
</section>
<section>
<h2>Cost</h2>
{{with .Cost}}<div class="kpis">
<div class="kpi"><b>{{.CallsMade}}</b><span>calls made</span></div>
<div class="kpi"><b>{{.CallsSaved}}</b><span>saved by dedup</span></div>
<div class="kpi"><b>{{.CacheHits}}</b><span>cache hits</span></div>
<div class="kpi"><b>{{.Retries}}</b><span>retries</span></div>
<div class="kpi"><b>{{.RateLimited}}</b><span>429 answers</span></div>
<div class="kpi"><b>{{.TokenRefreshes}}</b><span>token refreshes</span></div>
<div class="kpi"><b>{{printf "%.1f" .ElapsedSeconds}} s</b><span>elapsed</span></div>
{{if .RowsResumed}}<div class="kpi"><b>{{.RowsResumed}}</b><span>rows resumed</span></div>{{end}}
</div>{{else}}<p class="none">Not known: pass the run's --summary file to addrclean report.</p>{{end}}
</section>
<section>
<h2>Busiest review reasons <small>({{.NeedReview}} rows to review)</small></h2>
{{if .Reasons}}{{template "bars" .Reasons}}{{else}}<p class="none">Nothing to review.</p>{{end}}
</section>
<section class="wide">
<h2>Duplicates</h2>
{{with .Duplicates}}{{if not .Known}}<p class="none">Not known: the enriched file has no av_duplicates column.</p>
{{else}}<div class="kpis">
<div class="kpi"><b>{{.Groups}}</b><span>places with several rows</span></div>
<div class="kpi"><b>{{.Rows}}</b><span>rows in them</span></div>
<div class="kpi"><b>{{.Extra}}</b><span>rows a merge would fold</span></div>
</div>
{{if .Top}}<table><tr><th>address id</th><th>rows</th><th>first row</th><th>address</th></tr>
{{range .Top}}<tr><td>{{.ID}}</td><td class="n">{{.Rows}}</td><td class="n">{{.FirstRow}}</td><td>{{.Label}}</td></tr>
{{end}}</table>{{end}}{{end}}{{end}}
</section>
<section class="wide">
<h2>Where the addresses are <small>({{.Located}} rows with coordinates{{if .Map}}{{if .Map.Sampled}}, a sample of {{len .Points}} shown{{end}}{{end}})</small></h2>
{{with .Map}}<svg class="map" xmlns="http://www.w3.org/2000/svg" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="coordinates by action">
{{range .Dots}}<circle cx="{{.X}}" cy="{{.Y}}" r="3" fill="{{.Colour}}" fill-opacity="0.8"/>
{{end}}</svg>
<p>{{range .Legend}}<span class="swatch" style="background:{{.Colour}}"></span>{{.Label}} {{.Count}} &nbsp; {{end}}<br><small>{{.Span}}</small></p>
{{else}}<p class="none">No row has coordinates.</p>{{end}}
</section>
</main>
</body>
</html>
{{define "bars"}}{{if .}}<table>
{{range .}}<tr><td>{{.Label}}</td><td class="n">{{.Count}}</td><td class="p">{{.Pct}}</td><td class="bar"><div class="track"><div class="fill" style="width:{{.Width}};background:{{.Colour}}"></div></div></td></tr>
{{end}}</table>{{else}}<p class="none">None.</p>{{end}}{{end}}`
