package report

import (
	"html/template"
	"io"
	"time"

	"github.com/addrclean/addrclean/estimate"
)

// EstimatePage is the page of a dry run (run --dry-run --report): the facts
// of the run that would be, and the Estimate card, for the person who signs
// the invoice before it is paid.
type EstimatePage struct {
	// Title names the input.
	Title string
	Run   RunInfo
	// At is when the estimate was made: the cache and the journal are read
	// as they were then.
	At       time.Time
	Estimate estimate.Figures
}

// Duration is the time at the rate, rounded to the second, or "" when the
// rate is unlimited.
func (p *EstimatePage) Duration() string {
	if p.Estimate.SecondsAtRate == nil {
		return ""
	}
	return time.Duration(*p.Estimate.SecondsAtRate * float64(time.Second)).Round(time.Second).String()
}

// When is At for people.
func (p *EstimatePage) When() string { return p.At.UTC().Format("2 Jan 2006 15:04 UTC") }

// WriteHTML renders the page, self-contained.
func (p *EstimatePage) WriteHTML(w io.Writer) error { return estimatePage.Execute(w, p) }

// WriteFile renders the page into path, atomically.
func (p *EstimatePage) WriteFile(path string) error { return writeFile(path, p.WriteHTML) }

var estimatePage = template.Must(template.New("estimate").Parse(estimateHTML))

const estimateHTML = pageHead + `<title>addrclean estimate: {{.Title}}</title>` + pageOpen + `<h1>addrclean estimate (dry run: nothing was called)</h1>
<p>{{.Title}} &middot; {{.Estimate.Rows}} rows &middot; {{.Estimate.CallsToPay}} calls to pay{{if .Estimate.Cost}} &middot; {{.Estimate.CostText}}{{end}}</p>
<dl>
<div><dt>Estimated</dt><dd>{{.When}}</dd></div>
<div><dt>addrclean</dt><dd>{{or .Run.Version "version not known"}}</dd></div>
<div><dt>Input</dt><dd>{{or .Run.Input .Title}}</dd></div>
<div><dt>Service</dt><dd>{{or .Run.Reference "not known"}}</dd></div>
</dl>
</header>
<main>
<section class="wide" id="estimate">
<h2>Estimate</h2>
{{with .Estimate}}<div class="kpis">
<div class="kpi"><b>{{.Rows}}</b><span>rows</span></div>
<div class="kpi"><b>{{.NotSent}}</b><span>not sent (no address or country)</span></div>
<div class="kpi"><b>{{.DistinctRequests}}</b><span>distinct requests</span></div>
<div class="kpi"><b>{{.JournalAnswers}}</b><span>answered by the journal (--resume)</span></div>
<div class="kpi"><b>{{.CacheAnswers}}</b><span>answered by the cache</span></div>
<div class="kpi"><b>{{.CallsToPay}}</b><span>calls to pay</span></div>
<div class="kpi"><b>{{with $.Duration}}{{.}}{{else}}&ndash;{{end}}</b><span>{{if .Rate}}at least, at {{.Rate}} calls/s{{else}}unlimited rate{{end}}</span></div>
<div class="kpi"><b>{{if .Cost}}{{.CostText}}{{else}}&ndash;{{end}}</b><span>{{if .Cost}}at {{.PricePerCall}} a call{{else}}no --price-per-call{{end}}</span></div>
</div>
<p>Exact, not a guess: the same command without --dry-run, run now, makes {{.CallsToPay}} calls if none fails (a failed call that is retried is paid again). Rows with the same address after folding case and white space are paid once.</p>
{{end}}</section>
</main>
</body>
</html>
`
