package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"image"
	"image/color"
	"image/png"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/addrclean/addrclean/internal/needs"
	"github.com/addrclean/addrclean/report/internal/geo"
)

// chromium finds Debian's chromium. Outside CI a missing browser skips the
// browser tests (counted by make test's last line); under CI (CI=true) it
// fails them, so they cannot silently stop running.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	needs.Missing(t, "chromium", "apt-get install -y chromium", "the browser tests of the report")
	return ""
}

// render opens page in headless chromium and returns the screenshot and the
// console messages the page raised.
func render(t *testing.T, bin, page string, w, h int) (image.Image, []string) {
	t.Helper()
	dir := t.TempDir()
	html := filepath.Join(dir, "page.html")
	if err := os.WriteFile(html, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--screenshot="+shot,
		"--window-size="+strconv.Itoa(w)+","+strconv.Itoa(h), "--enable-logging=stderr", "--v=0",
		"file://"+html)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, tailLines(stderr.String(), 20))
	}
	var console []string
	for line := range strings.Lines(stderr.String()) {
		// Chromium logs every console message of the page as
		// ...:INFO:CONSOLE:N] "text", source: ...; uncaught exceptions too.
		if strings.Contains(line, ":CONSOLE") || strings.Contains(line, "Uncaught") {
			console = append(console, strings.TrimSpace(line))
		}
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, tailLines(stderr.String(), 20))
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img, console
}

func tailLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(ls[max(0, len(ls)-n):], "\n")
}

// pixels counts the distinct colours, the non-white pixels, and whether
// each wanted colour (#rrggbb) appears.
func pixels(img image.Image, want []string) (distinct, nonWhite int, found map[string]bool) {
	seen := map[uint32]bool{}
	found = map[string]bool{}
	wantRGB := map[uint32]string{}
	for _, h := range want {
		var v uint32
		for _, c := range h[1:] {
			v <<= 4
			switch {
			case c >= '0' && c <= '9':
				v |= uint32(c - '0')
			default:
				v |= uint32(c-'a') + 10
			}
		}
		wantRGB[v] = h
	}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			v := (r>>8)<<16 | (g>>8)<<8 | bl>>8
			seen[v] = true
			if v != 0xffffff {
				nonWhite++
			}
			if h, ok := wantRGB[v]; ok {
				found[h] = true
			}
		}
	}
	return len(seen), nonWhite, found
}

// TestBrowserRendersReport renders the report in a real browser: the page
// raises no console message (it has no script), the screenshot is not
// blank, and the action colours of the bars are on it.
func TestBrowserRendersReport(t *testing.T) {
	bin := chromium(t)
	var page bytes.Buffer
	if err := buildFixture(t).WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	img, console := render(t, bin, page.String(), 1200, 1600)
	if len(console) > 0 {
		t.Errorf("the page raised console messages:\n%s", strings.Join(console, "\n"))
	}
	distinct, nonWhite, found := pixels(img, []string{actionColours["Accept"], actionColours["Suggest"]})
	total := img.Bounds().Dx() * img.Bounds().Dy()
	t.Logf("screenshot %v: %d colours, %d of %d pixels not white", img.Bounds().Size(), distinct, nonWhite, total)
	if distinct < 16 || nonWhite < total/10 {
		t.Errorf("the screenshot looks blank: %d colours, %d of %d pixels not white", distinct, nonWhite, total)
	}
	if len(found) != 2 {
		t.Errorf("action colours found: %v; want Accept and Suggest bars", found)
	}
}

// TestBrowserSeesConsoleErrors proves the check above is not blind: a page
// with a script error is caught.
func TestBrowserSeesConsoleErrors(t *testing.T) {
	bin := chromium(t)
	_, console := render(t, bin, `<!DOCTYPE html><html><body><p>x</p><script>undefinedFunction();</script></body></html>`, 300, 200)
	if len(console) == 0 || !strings.Contains(strings.Join(console, "\n"), "undefinedFunction") {
		t.Fatalf("a script error was not seen; console lines: %q", console)
	}
}

// mapSVG renders the map of d alone, as the page draws it.
func mapSVG(t *testing.T, m *mapView) string {
	t.Helper()
	var b bytes.Buffer
	if err := page.ExecuteTemplate(&b, "map", m); err != nil {
		t.Fatal(err)
	}
	return `<!DOCTYPE html><html><body style="margin:0;overflow:hidden">` + b.String() + `</body></html>`
}

// near reports whether two colours differ by at most 6 in every channel.
func near(c color.Color, hex string) bool {
	r, g, b, _ := c.RGBA()
	v, _ := strconv.ParseUint(hex[1:], 16, 32)
	d := func(x uint32, y uint64) bool { return math.Abs(float64(x>>8)-float64(y)) <= 6 }
	return d(r, v>>16) && d(g, v>>8&0xff) && d(b, v&0xff)
}

// TestBrowserDrawsLand renders the fixture's map in Chromium and checks the
// land is drawn where it is: on a grid over the map, the points inside a
// country's outline (by the embedded outlines, projected as the map
// projects them) have the land's colour, those outside have the sea's,
// leaving out the points near a circle of rows or a place name. A map
// without land (dots on blue) fails it.
func TestBrowserDrawsLand(t *testing.T) {
	bin := chromium(t)
	d := buildFixture(t)
	m := newMap(d)
	img, _ := render(t, bin, mapSVG(t, m), m.W, m.H)
	cs, err := land()
	if err != nil {
		t.Fatal(err)
	}
	var rings [][]geo.Pt
	for _, c := range cs {
		for _, r := range c.Rings {
			px := make([]geo.Pt, len(r))
			for i, p := range r {
				px[i] = m.pr.pt(p.Y, p.X)
			}
			rings = append(rings, px)
		}
	}
	busy := func(p geo.Pt) bool {
		for _, c := range m.Clusters {
			if math.Hypot(p.X-c.x, p.Y-c.y) < c.r+4 {
				return true
			}
		}
		for _, tl := range m.Towns {
			x, _ := strconv.ParseFloat(tl.X, 64)
			y, _ := strconv.ParseFloat(tl.Y, 64)
			if math.Abs(p.X-x) < 110 && math.Abs(p.Y-y) < 30 {
				return true
			}
		}
		return p.X > float64(m.W)-130 && p.Y > float64(m.H)-20 // the credit
	}
	// A point counts as land drawn when it is not the sea's colour (a coast
	// or border line may cross it), and as exactly land when it has the
	// land's fill; the same the other way round for the sea.
	var landPts, landOK, landExact, seaPts, seaOK, seaExact int
	for y := 5.0; y < float64(m.H)-5; y += 9 {
		for x := 5.0; x < float64(m.W)-5; x += 9 {
			p := geo.Pt{X: x, Y: y}
			if busy(p) {
				continue
			}
			onLand := false
			for _, r := range rings {
				if geo.Inside(p, r) {
					onLand = !onLand
				}
			}
			c := img.At(int(x), int(y))
			if onLand {
				landPts++
				landOK += b2i(!near(c, seaColour))
				landExact += b2i(near(c, landColour))
			} else {
				seaPts++
				seaOK += b2i(!near(c, landColour))
				seaExact += b2i(near(c, seaColour))
			}
		}
	}
	t.Logf("land points: %d, %d not sea, %d land colour; sea points: %d, %d not land, %d sea colour",
		landPts, landOK, landExact, seaPts, seaOK, seaExact)
	if landPts < 500 || seaPts < 500 {
		t.Fatalf("the fixture's map shows %d land and %d sea points: want both", landPts, seaPts)
	}
	// Outlines are thinned to what a pixel shows: a point within a pixel
	// of a coast may go either way.
	if float64(landOK) < 0.98*float64(landPts) || float64(landExact) < 0.9*float64(landPts) {
		t.Errorf("land drawn at %d (land colour at %d) of %d land points", landOK, landExact, landPts)
	}
	if float64(seaOK) < 0.98*float64(seaPts) || float64(seaExact) < 0.9*float64(seaPts) {
		t.Errorf("sea at %d (sea colour at %d) of %d sea points", seaOK, seaExact, seaPts)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestBrowserLegendCountsLocatedRows: the map's legend gives, per action,
// the number of rows with coordinates, counted here straight from the
// enriched file; the circles hold all of them.
func TestBrowserLegendCountsLocatedRows(t *testing.T) {
	bin := chromium(t)
	var page bytes.Buffer
	if err := buildFixture(t).WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	img, console := render(t, bin, page.String(), 1200, 2400)
	if len(console) > 0 {
		t.Errorf("the page raised console messages:\n%s", strings.Join(console, "\n"))
	}
	if _, _, found := pixels(img, []string{landColour, seaColour}); len(found) != 2 {
		t.Errorf("land and sea colours on the page: %v", found)
	}
	want := locatedByAction(t, filepath.Join("testdata", "enriched.csv"))
	got := map[string]int64{}
	for _, m := range regexp.MustCompile(`data-action="([^"]+)" data-count="(\d+)"`).FindAllStringSubmatch(page.String(), -1) {
		n, _ := strconv.ParseInt(m[2], 10, 64)
		got[m[1]] = n
	}
	if !maps.Equal(got, want) {
		t.Errorf("legend %v; rows with coordinates by action %v", got, want)
	}
	var inCircles int64
	for _, m := range regexp.MustCompile(`<g data-rows="(\d+)">`).FindAllStringSubmatch(page.String(), -1) {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		inCircles += n
	}
	var total int64
	for _, n := range want {
		total += n
	}
	if inCircles != total {
		t.Errorf("the circles hold %d rows; %d rows have coordinates", inCircles, total)
	}
}

// locatedByAction counts the rows of an enriched CSV file with
// coordinates, by action, without the report package's reader.
func locatedByAction(t *testing.T, path string) map[string]int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int { return slices.Index(recs[0], name) }
	action, lat, lon := col("av_action"), col("av_latitude"), col("av_longitude")
	out := map[string]int64{}
	for _, r := range recs[1:] {
		_, e1 := strconv.ParseFloat(r[lat], 64)
		_, e2 := strconv.ParseFloat(r[lon], 64)
		if e1 == nil && e2 == nil {
			out[r[action]]++
		}
	}
	return out
}
