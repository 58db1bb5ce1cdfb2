package report

import (
	"cmp"
	"maps"
	"math"
	"slices"
)

// nKinds is the number of action kinds a place counts: actionOrder, then
// any other action.
var nKinds = len(actionOrder) + 1

// kind is the index of action among a place's counts.
func kind(action string) int {
	if i := slices.Index(actionOrder, action); i >= 0 {
		return i
	}
	return len(actionOrder)
}

// Place is a spot on the map: the located rows of one small square of
// latitude and longitude, at their mean position.
type Place struct {
	Lat, Lon float64
	Rows     int64
	// Actions counts the rows by action: actionOrder, then the rest.
	Actions []int64

	sumLat, sumLon float64
}

// maxPlaces bounds the squares kept: past it the squares double in size,
// so the map's memory stays flat whatever the size of the run, while every
// located row is still counted.
const maxPlaces = 8192

// startRes is the side of a square, in degrees, before any doubling: about
// 500 m, finer than a map of one city shows.
const startRes = 0.005

// places counts located rows into squares of res degrees.
type places struct {
	res   float64
	cells map[[2]int64]*Place
}

func (g *places) key(lat, lon float64) [2]int64 {
	return [2]int64{int64(math.Floor(lat / g.res)), int64(math.Floor(lon / g.res))}
}

// add counts one row at lat, lon with action.
func (g *places) add(lat, lon float64, action string) {
	if g.cells == nil {
		g.res, g.cells = startRes, make(map[[2]int64]*Place)
	}
	k := g.key(lat, lon)
	p := g.cells[k]
	if p == nil {
		for len(g.cells) >= maxPlaces {
			g.coarsen()
			k = g.key(lat, lon)
			if p = g.cells[k]; p != nil {
				break
			}
		}
		if p == nil {
			p = &Place{Actions: make([]int64, nKinds)}
			g.cells[k] = p
		}
	}
	p.Rows++
	p.Actions[kind(action)]++
	p.sumLat += lat
	p.sumLon += lon
}

// coarsen doubles the side of the squares, merging four into one. A square
// lies wholly inside its parent, so the merge loses no row and no mean.
func (g *places) coarsen() {
	old := g.cells
	g.res *= 2
	g.cells = make(map[[2]int64]*Place, len(old)/2)
	// In key order: the sums then add up in the same order on every run,
	// to the same last bit.
	keys := slices.SortedFunc(maps.Keys(old), func(a, b [2]int64) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	for _, k := range keys {
		p := old[k]
		nk := [2]int64{floorDiv(k[0], 2), floorDiv(k[1], 2)}
		q := g.cells[nk]
		if q == nil {
			g.cells[nk] = p
			continue
		}
		q.Rows += p.Rows
		q.sumLat += p.sumLat
		q.sumLon += p.sumLon
		for i, n := range p.Actions {
			q.Actions[i] += n
		}
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// list returns the places at their mean positions, in a fixed order (so
// the same run gives the same page).
func (g *places) list() []Place {
	out := make([]Place, 0, len(g.cells))
	for _, p := range g.cells {
		q := *p
		q.Lat, q.Lon = p.sumLat/float64(p.Rows), p.sumLon/float64(p.Rows)
		out = append(out, q)
	}
	slices.SortFunc(out, func(a, b Place) int { return cmp.Or(cmp.Compare(a.Lat, b.Lat), cmp.Compare(a.Lon, b.Lon)) })
	return out
}
