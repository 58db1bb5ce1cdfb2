package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/report/internal/geo"
)

// A topology of two squares sharing an edge (arc 1), the second using it
// reversed, quantized with a scale and a translate, arcs delta-encoded.
const tiny = `{"type":"Topology",
 "transform":{"scale":[0.5,0.25],"translate":[-10,50]},
 "objects":{"countries":{"type":"GeometryCollection","geometries":[
  {"type":"Polygon","id":"372","properties":{"name":"A"},"arcs":[[0,1]]},
  {"type":"MultiPolygon","id":"826","properties":{"name":"B"},"arcs":[[[2,-2]]]},
  {"type":"Point","id":"999","properties":{"name":"not a polygon"}}
 ]}},
 "arcs":[
  [[4,4],[-4,0],[0,-4],[4,0]],
  [[4,0],[0,4]],
  [[4,4],[4,0],[0,-4],[-4,0]]
 ]}`

func TestDecode(t *testing.T) {
	topo, err := decode(strings.NewReader(tiny))
	if err != nil {
		t.Fatal(err)
	}
	// Arc 0 from (4,4): (4,4) (0,4) (0,0) (4,0) -> degrees.
	want := pts(-8, 51, -10, 51, -10, 50, -8, 50)
	if got := topo.arc(0); !equal(got, want) {
		t.Errorf("arc 0 = %v, want %v", got, want)
	}
	// ~1 is arc 1 reversed: (4,4) then (4,0).
	if got := topo.arc(^1); !equal(got, pts(-8, 51, -8, 50)) {
		t.Errorf("arc ~1 = %v", got)
	}
	cs := topo.countries()
	if len(cs) != 2 || cs[0].name != "A" || cs[1].name != "B" {
		t.Fatalf("countries %+v", cs)
	}
	// A's ring: arc 0 then arc 1, the shared point once, open.
	if got := cs[0].rings[0]; !equal(got, pts(-8, 51, -10, 51, -10, 50, -8, 50)) {
		t.Errorf("ring of A = %v", got)
	}
	var b bytes.Buffer
	if err := write(&b, cs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "C 372 A\nR -8000 51000 -2000 0 0 -1000 2000 0\n") {
		t.Errorf("output:\n%s", &b)
	}
}

func equal(a, b []geo.Pt) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// pts makes points of x, y pairs.
func pts(xy ...float64) []geo.Pt {
	var out []geo.Pt
	for i := 0; i+1 < len(xy); i += 2 {
		out = append(out, geo.Pt{X: xy[i], Y: xy[i+1]})
	}
	return out
}
