package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/addrclean/addrclean/report/internal/geo"
)

// The map's size in pixels: the width is fixed, the height follows the
// area shown within these bounds.
const (
	mapW    = 960
	mapMinH = 420
	mapMaxH = 760
)

// The map's colours: sea, land, borders and coasts, place names.
const (
	seaColour    = "#c6dcea"
	landColour   = "#f1eee6"
	borderColour = "#8d9ba6"
	townColour   = "#37474f"
)

// mapView is the map of the report: land, places, town names, legend.
type mapView struct {
	W, H     int
	Land     []string // SVG path data, one per country
	Clusters []cluster
	Towns    []townLabel
	Legend   []legendItem
	// Outside counts the located rows too far from the rest to be shown
	// (a handful abroad would shrink the map to a dot).
	Outside int64
	Span    string
	Scale   scaleBar
	pr      projection // for the tests: where a place lands
}

// scaleBar is the map's scale: a bar of a round number of kilometres.
type scaleBar struct {
	Px, Box, Label string // the bar's length, its backing's width, "20 km"
	px             float64
}

// newScale picks the round length, in km, whose bar is closest to 120
// pixels at latitude lat, for s pixels per degree of longitude.
func newScale(lat, s float64) scaleBar {
	kmPerPx := 111.32 * math.Cos(lat*math.Pi/180) / s
	best := scaleBar{}
	for _, km := range []float64{0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000} {
		px := km / kmPerPx
		if best.px == 0 || math.Abs(px-120) < math.Abs(best.px-120) {
			best = scaleBar{px: px, Px: num(px), Box: num(px + 8), Label: strconv.FormatFloat(km, 'f', -1, 64) + " km"}
		}
	}
	return best
}

// cluster is one circle of the map: the places within a few pixels of each
// other, one row as a dot, more as a ring split by action with the count.
type cluster struct {
	X, Y, R, Inner string
	Rows           int64
	Label          string // the count shown, "1.2k"
	Title          string // the counts by action, on hover
	Colour         string // a dot's
	Rings          []ringSeg
	x, y, r        float64
	actions        []int64
}

// ringSeg is one action's share of a cluster's ring (an SVG dashed circle).
type ringSeg struct {
	Colour, Dash, Offset string
}

type townLabel struct {
	Name         string
	X, Y, TX, TY string
	Anchor       string
}

type legendItem struct {
	Action, Colour string
	Count          int64
}

// mercY is the Web Mercator ordinate of lat, in degrees of longitude at the
// equator, so that x and y share a scale: the projection of the maps people
// know.
func mercY(lat float64) float64 {
	lat = math.Max(-85, math.Min(85, lat))
	return math.Log(math.Tan(math.Pi/4+lat*math.Pi/360)) * 180 / math.Pi
}

// invMercY is the latitude of Mercator ordinate y.
func invMercY(y float64) float64 {
	return (2*math.Atan(math.Exp(y*math.Pi/180)) - math.Pi/2) * 180 / math.Pi
}

// projection maps degrees to the map's pixels.
type projection struct {
	minX, maxY, s float64 // the top-left corner in Mercator degrees; pixels per degree
}

func (p projection) pt(lat, lon float64) geo.Pt {
	return geo.Pt{X: (lon - p.minX) * p.s, Y: (p.maxY - mercY(lat)) * p.s}
}

// quantile is the value below which share of the rows lie, along the
// axis at picks from each place.
func quantile(ps []Place, at func(Place) float64, share float64) float64 {
	s := slices.Clone(ps)
	slices.SortFunc(s, func(a, b Place) int { return cmp.Compare(at(a), at(b)) })
	var total int64
	for _, p := range s {
		total += p.Rows
	}
	want := share * float64(total)
	var n int64
	for _, p := range s {
		n += p.Rows
		if float64(n) >= want {
			return at(p)
		}
	}
	return at(s[len(s)-1])
}

// minSpan is the least width of the map in degrees of longitude (about
// 30 km): the rows of one street still show the coast or roads around them.
const minSpan = 0.4

// newMap lays the places out on the land. The area shown holds all but the
// farthest 0.5% of the located rows on each side, and some room around it.
func newMap(d *Data) *mapView {
	if len(d.Places) == 0 {
		return nil
	}
	lo, hi := 0.0, 1.0
	if d.Located >= 200 {
		lo, hi = 0.005, 0.995
	}
	lon := func(p Place) float64 { return p.Lon }
	my := func(p Place) float64 { return mercY(p.Lat) }
	minX, maxX := quantile(d.Places, lon, lo), quantile(d.Places, lon, hi)
	minY, maxY := quantile(d.Places, my, lo), quantile(d.Places, my, hi)
	// Room around the rows, and at least minSpan across.
	padX := math.Max((maxX-minX)*0.08, (minSpan-(maxX-minX))/2)
	padY := math.Max((maxY-minY)*0.08, (minSpan*0.6-(maxY-minY))/2)
	minX, maxX, minY, maxY = minX-padX, maxX+padX, minY-padY, maxY+padY
	// Fill the frame: widen whichever side is short of the frame's shape.
	s := float64(mapW) / (maxX - minX)
	h := (maxY - minY) * s
	switch {
	case h > mapMaxH:
		s = mapMaxH / (maxY - minY)
		h = mapMaxH
		extra := (float64(mapW)/s - (maxX - minX)) / 2
		minX, maxX = minX-extra, maxX+extra
	case h < mapMinH:
		h = mapMinH
		extra := (h/s - (maxY - minY)) / 2
		minY, maxY = minY-extra, maxY+extra
	}
	H := int(math.Round(h))
	pr := projection{minX: minX, maxY: maxY, s: s}
	m := &mapView{W: mapW, H: H, pr: pr}
	m.Land = landPaths(pr, geo.Rect{MinX: minX, MinY: invMercY(minY), MaxX: maxX, MaxY: invMercY(maxY)}, float64(mapW), h)
	view := geo.Rect{MinX: -2, MinY: -2, MaxX: float64(mapW) + 2, MaxY: h + 2}
	var pts []cluster
	for _, p := range d.Places {
		xy := pr.pt(p.Lat, p.Lon)
		if !view.Contains(xy) {
			m.Outside += p.Rows
			continue
		}
		pts = append(pts, cluster{x: xy.X, y: xy.Y, Rows: p.Rows, actions: slices.Clone(p.Actions)})
	}
	m.Clusters = clusters(pts)
	m.Towns = townLabels(pr, float64(mapW), h, m.Clusters)
	for _, a := range ordered(d.LocatedActions, actionOrder) {
		if n := d.LocatedActions[a]; n > 0 {
			m.Legend = append(m.Legend, legendItem{Action: a, Colour: colour(a), Count: n})
		}
	}
	m.Scale = newScale(invMercY((minY+maxY)/2), s)
	m.Span = fmt.Sprintf("latitude %.3f to %.3f, longitude %.3f to %.3f", invMercY(minY), invMercY(maxY), minX, maxX)
	return m
}

// landPaths are the outlines of the countries that reach into box (in
// degrees), projected, clipped to the frame and simplified to what a pixel
// shows: the page carries only the land it draws.
func landPaths(pr projection, box geo.Rect, w, h float64) []string {
	cs, err := land()
	if err != nil {
		return nil // the embedded file is tested; a map without land is still a map
	}
	frame := geo.Rect{MinX: -4, MinY: -4, MaxX: w + 4, MaxY: h + 4}
	var out []string
	for _, c := range cs {
		if !c.Bounds.Overlaps(box) {
			continue
		}
		var b strings.Builder
		for _, r := range c.Rings {
			px := make([]geo.Pt, len(r))
			for i, p := range r {
				px[i] = pr.pt(p.Y, p.X)
			}
			px = geo.ClipRing(px, frame)
			if px == nil {
				continue
			}
			if bb := geo.Bounds(px); bb.MaxX-bb.MinX < 1.5 && bb.MaxY-bb.MinY < 1.5 {
				continue // smaller than a pixel or so
			}
			px = geo.Simplify(px, 0.4)
			if len(px) < 3 {
				continue
			}
			for i, p := range px {
				if i == 0 {
					b.WriteString("M")
				} else {
					b.WriteString("L")
				}
				b.WriteString(num(p.X) + " " + num(p.Y))
			}
			b.WriteString("Z")
		}
		if b.Len() > 0 {
			out = append(out, b.String())
		}
	}
	return out
}

// num prints a pixel coordinate to a tenth.
func num(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

// radius of a cluster of n rows: a dot for one, a ring growing with the
// count's order of magnitude for more.
func radius(n int64) float64 {
	if n <= 1 {
		return 4
	}
	return math.Min(22, 9+3.2*math.Log10(float64(n)))
}

// clusterCell is the side of the squares places are first gathered in.
const clusterCell = 26.0

// clusters gathers the places within a few pixels of each other: first
// into squares of clusterCell, then the largest circles absorb the ones
// they would overlap.
func clusters(pts []cluster) []cluster {
	cells := map[[2]int]*cluster{}
	var keys [][2]int
	for _, p := range pts {
		k := [2]int{int(math.Floor(p.x / clusterCell)), int(math.Floor(p.y / clusterCell))}
		c := cells[k]
		if c == nil {
			c = &cluster{actions: make([]int64, nKinds)}
			cells[k] = c
			keys = append(keys, k)
		}
		merge(c, p)
	}
	list := make([]cluster, 0, len(keys))
	for _, k := range keys {
		list = append(list, *cells[k])
	}
	slices.SortStableFunc(list, func(a, b cluster) int { return cmp.Compare(b.Rows, a.Rows) })
	var out []cluster
	for _, c := range list {
		absorbed := false
		for i := range out {
			o := &out[i]
			if math.Hypot(o.x-c.x, o.y-c.y) < (radius(o.Rows)+radius(c.Rows))*0.8 {
				merge(o, c)
				absorbed = true
				break
			}
		}
		if !absorbed {
			out = append(out, c)
		}
	}
	// The biggest drawn first, so that small circles stay visible on top.
	slices.SortStableFunc(out, func(a, b cluster) int { return cmp.Compare(b.Rows, a.Rows) })
	for i := range out {
		dress(&out[i])
	}
	return out
}

// merge adds p's rows to c, moving c to the weighted mean position.
func merge(c *cluster, p cluster) {
	n := float64(c.Rows + p.Rows)
	c.x = (c.x*float64(c.Rows) + p.x*float64(p.Rows)) / n
	c.y = (c.y*float64(c.Rows) + p.y*float64(p.Rows)) / n
	c.Rows += p.Rows
	for i, v := range p.actions {
		c.actions[i] += v
	}
}

// dress works out how cluster c is drawn.
func dress(c *cluster) {
	c.r = radius(c.Rows)
	c.X, c.Y, c.R = num(c.x), num(c.y), num(c.r)
	var parts []string
	for i, n := range c.actions {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, kindName(i)))
		}
	}
	c.Title = fmt.Sprintf("%d row(s): %s", c.Rows, strings.Join(parts, ", "))
	if c.Rows == 1 {
		for i, n := range c.actions {
			if n > 0 {
				c.Colour = kindColour(i)
			}
		}
		return
	}
	c.Label = shortCount(c.Rows)
	c.Inner = num(c.r - 2.5)
	// The ring: one dashed circle per action, each dash its share of the
	// circumference, one after the other from twelve o'clock.
	rr := c.r - 2.5
	circ := 2 * math.Pi * rr
	off := 0.0
	for i, n := range c.actions {
		if n == 0 {
			continue
		}
		l := circ * float64(n) / float64(c.Rows)
		c.Rings = append(c.Rings, ringSeg{Colour: kindColour(i), Dash: num(l) + " " + num(circ), Offset: num(-off)})
		off += l
	}
}

func kindName(i int) string {
	if i < len(actionOrder) {
		return actionOrder[i]
	}
	return "other"
}

func kindColour(i int) string {
	if i < len(actionOrder) {
		return colour(actionOrder[i])
	}
	return otherColour
}

// shortCount prints a count to fit a ring: 999, 1.2k, 12k, 1.2M.
func shortCount(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 10_000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k"
	case n < 1_000_000:
		return strconv.FormatInt(n/1000, 10) + "k"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
}

// maxTowns is how many names the map shows at most.
const maxTowns = 14

// townLabels names the towns in the frame, the most important first, each
// on the right of its point, else on the left, and only where the name
// covers neither another name nor a circle of rows.
func townLabels(pr projection, w, h float64, cs []cluster) []townLabel {
	ts := slices.Clone(towns)
	slices.SortStableFunc(ts, func(a, b town) int { return cmp.Compare(a.Rank, b.Rank) })
	var taken []geo.Rect
	for _, c := range cs {
		taken = append(taken, geo.Rect{MinX: c.x - c.r, MinY: c.y - c.r, MaxX: c.x + c.r, MaxY: c.y + c.r})
	}
	free := func(r geo.Rect) bool {
		return r.MinX >= 2 && r.MaxX <= w-2 && r.MinY >= 2 && r.MaxY <= h-14 &&
			!r.Overlaps(geo.Rect{MinX: 0, MinY: h - 34, MaxX: 170, MaxY: h}) && // the scale bar
			!slices.ContainsFunc(taken, func(o geo.Rect) bool { return r.Overlaps(o) })
	}
	var out []townLabel
	for _, t := range ts {
		if len(out) == maxTowns {
			break
		}
		p := pr.pt(t.Lat, t.Lon)
		lw, lh := 7.2*float64(len([]rune(t.Name))), 14.0
		if p.X < 0 || p.X > w || p.Y < 0 || p.Y > h {
			continue
		}
		// The name goes right of the point, else left, above or below;
		// the point itself may lie under a circle of rows.
		l := townLabel{Name: t.Name, X: num(p.X), Y: num(p.Y)}
		placed := false
		// Close to the point first; then clear of a circle of rows over it.
		for _, d := range []float64{4, 18, 30} {
			for _, c := range []struct {
				box    geo.Rect
				tx, ty float64
				anchor string
			}{
				{geo.Rect{MinX: p.X + d, MinY: p.Y - lh/2, MaxX: p.X + d + 2 + lw, MaxY: p.Y + lh/2}, p.X + d + 1, p.Y + 4, "start"},
				{geo.Rect{MinX: p.X - d - 2 - lw, MinY: p.Y - lh/2, MaxX: p.X - d, MaxY: p.Y + lh/2}, p.X - d - 1, p.Y + 4, "end"},
				{geo.Rect{MinX: p.X - lw/2, MinY: p.Y - d - lh, MaxX: p.X + lw/2, MaxY: p.Y - d}, p.X, p.Y - d - 3, "middle"},
				{geo.Rect{MinX: p.X - lw/2, MinY: p.Y + d, MaxX: p.X + lw/2, MaxY: p.Y + d + lh}, p.X, p.Y + d + 11, "middle"},
			} {
				if !placed && free(c.box) {
					l.TX, l.TY, l.Anchor = num(c.tx), num(c.ty), c.anchor
					taken = append(taken, geo.Rect{MinX: c.box.MinX - 6, MinY: c.box.MinY - 2, MaxX: c.box.MaxX + 6, MaxY: c.box.MaxY + 2})
					placed = true
				}
			}
		}
		if placed {
			out = append(out, l)
		}
	}
	return out
}
