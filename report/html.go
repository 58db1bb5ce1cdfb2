package report

import (
	"fmt"
	"html/template"
	"io"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/addrclean/addrclean/internal/atomicfile"
	"github.com/addrclean/addrclean/runstats"
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
	errorOrder  = []string{runstats.ErrKindInput, runstats.ErrKindPermanent, runstats.ErrKindTransient, runstats.ErrKindRateLimited}
)

// bar is one row of a bar table.
type bar struct {
	Label  string
	Count  int64
	Pct    string // of the table's total, "12.5%"
	Width  string // CSS width of the bar
	Colour string
}

// ordered returns the keys of order, then the other keys of m, sorted.
func ordered(m map[string]int64, order []string) []string {
	var rest []string
	for k := range m {
		if !slices.Contains(order, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(slices.Clone(order), rest...)
}

func bars(m map[string]int64, order []string, total int64, coloured bool) []bar {
	var out []bar
	for _, k := range ordered(m, order) {
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
	When, Took  string // the run's date and how long it took, when known
	// SetWarning says what is wrong with a set of shards; "" otherwise.
	SetWarning string
}

// runWhen prints when the run started and how long it took.
func runWhen(r RunInfo) (when, took string) {
	if r.Started.IsZero() {
		return "", ""
	}
	when = r.Started.UTC().Format("2 Jan 2006 15:04 UTC")
	if !r.Finished.IsZero() && !r.Finished.Before(r.Started) {
		took = r.Finished.Sub(r.Started).Round(time.Second).String()
	}
	return when, took
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
	v.Map = newMap(d)
	v.When, v.Took = runWhen(d.Run)
	if d.Shards != nil {
		v.SetWarning = d.Shards.warning()
	}
	return v
}

var page = template.Must(template.New("report").Parse(pageHTML))

// WriteHTML renders the report as one self-contained page.
func (d *Data) WriteHTML(w io.Writer) error {
	return page.Execute(w, newView(d))
}

// WriteFile renders the report into path, atomically: a temporary file
// beside it, renamed into place.
func (d *Data) WriteFile(path string) error { return writeFile(path, d.WriteHTML) }

// writeFile writes a page into path, whole or not at all.
func writeFile(path string, write func(io.Writer) error) error {
	if err := atomicfile.Write(path, func(f *os.File) error { return write(f) }); err != nil {
		return fmt.Errorf("report %s: %w", path, err)
	}
	return nil
}

// pageHead begins every page, up to its title; pageOpen follows the title,
// to the page's header.
const (
	pageHead = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
`
	pageOpen = "\n" + pageStyle + `
</head>
<body>
<header>
`
)

// pageStyle is the style of every page, inline: the page stands alone.
const pageStyle = `<style>
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
svg.map{display:block;border:1px solid #b0bec5;border-radius:4px;width:100%;max-width:1400px;height:auto}
header dl{display:flex;flex-wrap:wrap;gap:4px 22px;margin:8px 0 0;font-size:13px}
header dt{color:#90a4ae;display:inline}
header dd{display:inline;margin:0 0 0 5px;color:#eceff1}
header p.warn{background:#ffe082;color:#3e2723;border-radius:4px;padding:6px 10px;margin-top:10px;font-weight:600}
</style>`

const pageHTML = pageHead + `<title>addrclean report: {{.Title}}</title>` + pageOpen + `<h1>addrclean run report</h1>
<p>{{.Title}} &middot; {{.Rows}} rows &middot; {{.NeedReview}} for review &middot; {{.Errors}} errors{{with .Shards}} &middot; {{.Count}} shards{{end}}</p>{{with .SetWarning}}
<p class="warn" role="alert">{{.}}</p>{{end}}
<dl>
<div><dt>{{if .Shards}}Runs{{else}}Run{{end}}</dt><dd>{{if .When}}{{.When}}{{if .Took}} (took {{.Took}}){{end}}{{else}}not known (pass the run's --summary){{end}}</dd></div>
<div><dt>addrclean</dt><dd>{{or .Run.Version "version not known"}}</dd></div>
<div><dt>Input</dt><dd>{{or .Run.Input .Title}}</dd></div>
<div><dt>Rows</dt><dd>{{.Rows}}</dd></div>
<div><dt>Reference</dt><dd>{{or .Run.Reference "not known"}}</dd></div>
</dl>
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
{{if .RowsResumed}}<div class="kpi"><b>{{.RowsResumed}}</b><span>rows resumed</span></div>{{end}}{{if .Spent}}<div class="kpi"><b>{{.Spent}}</b><span>spent on the calls made</span></div>
{{end}}
</div>{{with $.Shards}}
<h3>By shard <small>(the latest run of each of {{.Count}}; the figures above are their sums, elapsed from the first start to the last finish)</small></h3>
<table><tr><th>shard</th><th>started</th><th>finished</th><th>rows read</th><th>calls</th><th>429s</th><th>status</th></tr>
{{range .Runs}}<tr><td>{{.Shard}}</td><td>{{.Started.UTC.Format "2006-01-02 15:04:05"}}</td><td>{{.Finished.UTC.Format "2006-01-02 15:04:05"}}</td><td class="n">{{.RowsRead}}</td><td class="n">{{.CallsMade}}</td><td class="n">{{.RateLimited}}</td><td>{{.Status}}</td></tr>
{{end}}</table>{{end}}{{else}}<p class="none">Not known: pass the run's --summary file to addrclean report (a run into an --out-table keeps it in the table's _runs table).</p>{{end}}
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
<h2>Where the addresses are <small>({{.Located}} rows with coordinates)</small></h2>
{{with .Map}}{{template "map" .}}
<p class="legend">{{range .Legend}}<span class="item" data-action="{{.Action}}" data-count="{{.Count}}"><span class="swatch" style="background:{{.Colour}}"></span>{{.Action}} {{.Count}}</span> &nbsp; {{end}}<br>
<small>A dot is one row; a ring, the rows close together, split by action, with their number.{{if .Outside}} {{.Outside}} row(s) lie outside the area shown.{{end}} {{.Span}}.</small></p>
{{else}}<p class="none">No row has coordinates.</p>{{end}}
</section>
</main>
</body>
</html>
{{define "map"}}<svg class="map" xmlns="http://www.w3.org/2000/svg" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="map of the rows by action">
<rect width="{{.W}}" height="{{.H}}" fill="` + seaColour + `"/>
<g fill="` + landColour + `" stroke="` + borderColour + `" stroke-width="0.7" stroke-linejoin="round" fill-rule="evenodd">
{{range .Land}}<path d="{{.}}"/>
{{end}}</g>
<g fill="` + townColour + `">{{range .Towns}}<circle cx="{{.X}}" cy="{{.Y}}" r="2.5"/>{{end}}</g>
<g font-family="system-ui,sans-serif" font-size="10" font-weight="bold" text-anchor="middle">
{{range .Clusters}}<g data-rows="{{.Rows}}"><title>{{.Title}}</title>{{if .Rings}}<circle cx="{{.X}}" cy="{{.Y}}" r="{{.R}}" fill="#fff" fill-opacity="0.9"/>{{$c := .}}{{range .Rings}}<circle cx="{{$c.X}}" cy="{{$c.Y}}" r="{{$c.Inner}}" fill="none" stroke="{{.Colour}}" stroke-width="5" stroke-dasharray="{{.Dash}}" stroke-dashoffset="{{.Offset}}" transform="rotate(-90 {{$c.X}} {{$c.Y}})"/>{{end}}<text x="{{.X}}" y="{{.Y}}" dy="3.5" fill="#1f2328">{{.Label}}</text>{{else}}<circle cx="{{.X}}" cy="{{.Y}}" r="{{.R}}" fill="{{.Colour}}" stroke="#fff" stroke-width="1"/>{{end}}</g>
{{end}}</g>
<g font-family="system-ui,sans-serif" font-size="12" fill="#263238" stroke="#fff" stroke-width="3" stroke-linejoin="round" paint-order="stroke">
{{range .Towns}}<text x="{{.TX}}" y="{{.TY}}" text-anchor="{{.Anchor}}">{{.Name}}</text>
{{end}}</g>
<g transform="translate(12 {{.H}})" font-family="system-ui,sans-serif" font-size="11" fill="#263238"><rect x="-4" y="-30" width="{{.Scale.Box}}" height="26" rx="3" fill="#fff" fill-opacity="0.7"/><path d="M0 -14v6h{{.Scale.Px}}v-6" fill="none" stroke="#263238" stroke-width="1.5"/><text x="0" y="-17">{{.Scale.Label}}</text></g>
<text x="{{.W}}" y="{{.H}}" dx="-6" dy="-6" text-anchor="end" font-family="system-ui,sans-serif" font-size="10" fill="#57606a">Land: Natural Earth</text>
</svg>{{end}}
{{define "bars"}}{{if .}}<table>
{{range .}}<tr><td>{{.Label}}</td><td class="n">{{.Count}}</td><td class="p">{{.Pct}}</td><td class="bar"><div class="track"><div class="fill" style="width:{{.Width}};background:{{.Colour}}"></div></div></td></tr>
{{end}}</table>{{else}}<p class="none">None.</p>{{end}}{{end}}`
