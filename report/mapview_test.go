package report

import (
	"math"
	"testing"
)

// placesAt counts rows at the given spots, all Accept.
func placesAt(spots ...[3]float64) *Data {
	var g places
	d := &Data{LocatedActions: map[string]int64{}}
	for _, s := range spots {
		for range int(s[2]) {
			g.add(s[0], s[1], "Accept")
			d.Located++
			d.LocatedActions["Accept"]++
		}
	}
	d.Places = g.list()
	return d
}

// TestMapLeavesOutStrays: a few rows abroad do not shrink the map of a
// country to a dot; they are counted as outside the area shown.
func TestMapLeavesOutStrays(t *testing.T) {
	d := placesAt([3]float64{53.35, -6.26, 200}, [3]float64{51.9, -8.47, 150}, [3]float64{54.6, -5.93, 100},
		[3]float64{-33.87, 151.21, 2}) // Sydney
	m := newMap(d)
	if m.Outside != 2 {
		t.Errorf("outside %d, want the 2 rows in Sydney", m.Outside)
	}
	var in int64
	for _, c := range m.Clusters {
		in += c.Rows
	}
	if in+m.Outside != d.Located {
		t.Errorf("circles %d + outside %d != located %d", in, m.Outside, d.Located)
	}
	// Ireland fills the frame: Cork and Belfast at least a third of it apart.
	cork, belfast := m.pr.pt(51.9, -8.47), m.pr.pt(54.6, -5.93)
	if math.Abs(cork.Y-belfast.Y) < float64(m.H)/3 {
		t.Errorf("Cork and Belfast %v px apart on a %d px map: zoomed out", math.Abs(cork.Y-belfast.Y), m.H)
	}
	if len(m.Land) == 0 || len(m.Towns) == 0 {
		t.Errorf("%d land paths, %d towns", len(m.Land), len(m.Towns))
	}
}

// TestMapOneStreet: rows of one street get a map some 30 km across, not
// a few metres: there is land and a town around them.
func TestMapOneStreet(t *testing.T) {
	m := newMap(placesAt([3]float64{53.3498, -6.2603, 5}))
	if span := float64(m.W) / m.pr.s; span < minSpan {
		t.Errorf("the map spans %.3f degrees of longitude, want at least %.1f", span, minSpan)
	}
	if len(m.Land) == 0 {
		t.Error("no land around one street in Dublin")
	}
	if len(m.Clusters) != 1 || m.Clusters[0].Rows != 5 || m.Clusters[0].Label != "5" {
		t.Errorf("clusters %+v, want one of 5 rows", m.Clusters)
	}
}

// TestClustersKeepRowsApart: clusters hold every row, and no two overlap
// much.
func TestClustersKeepRowsApart(t *testing.T) {
	var pts []cluster
	n := int64(0)
	for i := range 40 {
		for j := range 30 {
			rows := int64(1 + (i*j)%7)
			a := make([]int64, nKinds)
			a[(i+j)%nKinds] = rows
			pts = append(pts, cluster{x: float64(i) * 9.5, y: float64(j) * 11, Rows: rows, actions: a})
			n += rows
		}
	}
	cs := clusters(pts)
	var sum, byAction int64
	for i, c := range cs {
		sum += c.Rows
		for _, v := range c.actions {
			byAction += v
		}
		for _, o := range cs[i+1:] {
			if d := math.Hypot(c.x-o.x, c.y-o.y); d < 0.5*(c.r+o.r) {
				t.Fatalf("circles of %d and %d rows %.1f px apart (radii %.1f, %.1f)", c.Rows, o.Rows, d, c.r, o.r)
			}
		}
	}
	if sum != n || byAction != n {
		t.Errorf("clusters hold %d rows (%d by action), want %d", sum, byAction, n)
	}
}

func TestScaleBar(t *testing.T) {
	// At 53°N a degree of longitude is about 67 km; at 100 px a degree,
	// 100 km is about 150 px and 50 km about 75 px: 100 km is nearer 120.
	if b := newScale(53, 100); b.Label != "100 km" || math.Abs(b.px-149.6) > 1 {
		t.Errorf("scale %+v", b)
	}
}

func TestShortCount(t *testing.T) {
	for n, want := range map[int64]string{7: "7", 999: "999", 1000: "1.0k", 1250: "1.2k", 12500: "12k", 2_500_000: "2.5M"} {
		if got := shortCount(n); got != want {
			t.Errorf("shortCount(%d) = %q, want %q", n, got, want)
		}
	}
}
