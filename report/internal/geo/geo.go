package geo

import "math"

// Pt is a point of the plane: lon/lat degrees or pixels.
type Pt struct{ X, Y float64 }

// Rect is an axis-aligned rectangle.
type Rect struct{ MinX, MinY, MaxX, MaxY float64 }

// Contains reports whether p lies in r (edges included).
func (r Rect) Contains(p Pt) bool {
	return p.X >= r.MinX && p.X <= r.MaxX && p.Y >= r.MinY && p.Y <= r.MaxY
}

// Inside reports whether p lies inside the closed ring (even-odd rule).
func Inside(p Pt, ring []Pt) bool {
	in := false
	for i, j := 0, len(ring)-1; i < len(ring); j, i = i, i+1 {
		a, b := ring[i], ring[j]
		if (a.Y > p.Y) != (b.Y > p.Y) && p.X < (b.X-a.X)*(p.Y-a.Y)/(b.Y-a.Y)+a.X {
			in = !in
		}
	}
	return in
}

// Bounds is the smallest rectangle holding ring.
func Bounds(ring []Pt) Rect {
	r := Rect{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	for _, p := range ring {
		r.MinX, r.MinY = min(r.MinX, p.X), min(r.MinY, p.Y)
		r.MaxX, r.MaxY = max(r.MaxX, p.X), max(r.MaxY, p.Y)
	}
	return r
}

// Overlaps reports whether r and o share a point.
func (r Rect) Overlaps(o Rect) bool {
	return r.MinX <= o.MaxX && o.MinX <= r.MaxX && r.MinY <= o.MaxY && o.MinY <= r.MaxY
}

// ClipRing clips the closed ring (first point not repeated at the end) to
// r with Sutherland-Hodgman: a filled polygon stays filled inside r, and
// the parts outside become runs along r's edges. It returns nil when
// nothing of the ring is left.
func ClipRing(ring []Pt, r Rect) []Pt {
	b := Bounds(ring)
	if !b.Overlaps(r) {
		return nil
	}
	if r.Contains(Pt{b.MinX, b.MinY}) && r.Contains(Pt{b.MaxX, b.MaxY}) {
		return ring
	}
	type edge struct {
		inside func(Pt) bool
		cross  func(a, b Pt) Pt
	}
	atX := func(x float64) func(a, b Pt) Pt {
		return func(a, b Pt) Pt { return Pt{x, a.Y + (b.Y-a.Y)*(x-a.X)/(b.X-a.X)} }
	}
	atY := func(y float64) func(a, b Pt) Pt {
		return func(a, b Pt) Pt { return Pt{a.X + (b.X-a.X)*(y-a.Y)/(b.Y-a.Y), y} }
	}
	edges := []edge{
		{func(p Pt) bool { return p.X >= r.MinX }, atX(r.MinX)},
		{func(p Pt) bool { return p.X <= r.MaxX }, atX(r.MaxX)},
		{func(p Pt) bool { return p.Y >= r.MinY }, atY(r.MinY)},
		{func(p Pt) bool { return p.Y <= r.MaxY }, atY(r.MaxY)},
	}
	out := ring
	for _, e := range edges {
		if len(out) == 0 {
			return nil
		}
		in := out
		out = make([]Pt, 0, len(in)+4)
		prev := in[len(in)-1]
		for _, p := range in {
			switch pin, previn := e.inside(p), e.inside(prev); {
			case pin && previn:
				out = append(out, p)
			case pin:
				out = append(out, e.cross(prev, p), p)
			case previn:
				out = append(out, e.cross(prev, p))
			}
			prev = p
		}
	}
	if len(out) < 3 {
		return nil
	}
	return out
}

// Simplify drops the points of the closed ring that lie within tol of the
// line the ring keeps (Douglas-Peucker), keeping at least the points that
// make it a ring. The ring's first point is kept.
func Simplify(ring []Pt, tol float64) []Pt {
	if len(ring) <= 4 {
		return ring
	}
	// A closed ring: split it at the point farthest from the first, and
	// simplify both halves as open lines.
	far, farD := 0, -1.0
	for i, p := range ring {
		if d := dist2(p, ring[0]); d > farD {
			far, farD = i, d
		}
	}
	keep := make([]bool, len(ring))
	keep[0], keep[far] = true, true
	dp(ring, 0, far, tol*tol, keep)
	closed := append(ring[far:len(ring):len(ring)], ring[0])
	keepTail := make([]bool, len(closed))
	dp(closed, 0, len(closed)-1, tol*tol, keepTail)
	for i := 1; i < len(closed)-1; i++ {
		if keepTail[i] {
			keep[far+i] = true
		}
	}
	out := make([]Pt, 0, 16)
	for i, p := range ring {
		if keep[i] {
			out = append(out, p)
		}
	}
	if len(out) < 3 {
		return nil
	}
	return out
}

// dp marks in keep the points of line[a:b+1] that Douglas-Peucker keeps
// at squared tolerance tol2; a and b are kept by the caller. The stack is
// explicit so a long coastline cannot exhaust the goroutine's stack.
func dp(line []Pt, a, b int, tol2 float64, keep []bool) {
	stack := [][2]int{{a, b}}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		i, j := s[0], s[1]
		far, farD := -1, tol2
		for k := i + 1; k < j; k++ {
			if d := segDist2(line[k], line[i], line[j]); d > farD {
				far, farD = k, d
			}
		}
		if far >= 0 {
			keep[far] = true
			stack = append(stack, [2]int{i, far}, [2]int{far, j})
		}
	}
}

func dist2(a, b Pt) float64 { return (a.X-b.X)*(a.X-b.X) + (a.Y-b.Y)*(a.Y-b.Y) }

// segDist2 is the squared distance of p from the segment a-b.
func segDist2(p, a, b Pt) float64 {
	dx, dy := b.X-a.X, b.Y-a.Y
	l2 := dx*dx + dy*dy
	if l2 == 0 {
		return dist2(p, a)
	}
	t := max(0, min(1, ((p.X-a.X)*dx+(p.Y-a.Y)*dy)/l2))
	return dist2(p, Pt{a.X + t*dx, a.Y + t*dy})
}
