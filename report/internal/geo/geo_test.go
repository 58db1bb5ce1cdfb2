package geo

import (
	"math"
	"testing"
)

func area(r []Pt) float64 {
	a := 0.0
	for i := range r {
		j := (i + 1) % len(r)
		a += r[i].X*r[j].Y - r[j].X*r[i].Y
	}
	return math.Abs(a) / 2
}

func TestClipRing(t *testing.T) {
	sq := []Pt{{0, 0}, {10, 0}, {10, 10}, {0, 10}}
	tests := []struct {
		name string
		r    Rect
		area float64 // 0: nothing left
	}{
		{"inside", Rect{-1, -1, 11, 11}, 100},
		{"half", Rect{5, -1, 20, 20}, 50},
		{"corner", Rect{5, 5, 20, 20}, 25},
		{"outside", Rect{20, 20, 30, 30}, 0},
		{"rect inside the ring", Rect{2, 2, 4, 4}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ClipRing(sq, tt.r)
			if tt.area == 0 {
				if got != nil {
					t.Fatalf("got %v, want nothing", got)
				}
				return
			}
			if a := area(got); math.Abs(a-tt.area) > 1e-9 {
				t.Fatalf("area %v, want %v (%v)", a, tt.area, got)
			}
		})
	}
}

func TestSimplify(t *testing.T) {
	// A square with a point in the middle of each side, and one bump.
	ring := []Pt{{0, 0}, {5, 0.01}, {10, 0}, {10, 5}, {10, 10}, {5, 10}, {5, 12}, {4.9, 10}, {0, 10}, {0, 5}}
	got := Simplify(ring, 0.5)
	// The bump (2 units) stays; the points within 0.5 of a side go.
	want := 7
	if len(got) != want {
		t.Fatalf("%d points %v, want %d", len(got), got, want)
	}
	if got[0] != ring[0] {
		t.Errorf("first point %v, want %v", got[0], ring[0])
	}
	if a, b := area(got), area(ring); math.Abs(a-b) > 1 {
		t.Errorf("area %v, was %v", a, b)
	}
	if tiny := Simplify([]Pt{{0, 0}, {0.1, 0}, {0.1, 0.1}, {0, 0.1}, {0.05, 0.05}}, 1); tiny != nil {
		t.Errorf("a ring below the tolerance: %v, want nil", tiny)
	}
}

func TestInside(t *testing.T) {
	// A square with a notch cut into its right side.
	ring := []Pt{{0, 0}, {10, 0}, {10, 4}, {5, 5}, {10, 6}, {10, 10}, {0, 10}}
	for _, tt := range []struct {
		p    Pt
		want bool
	}{{Pt{2, 2}, true}, {Pt{8, 5}, false}, {Pt{4, 5}, true}, {Pt{11, 5}, false}, {Pt{-1, 5}, false}} {
		if got := Inside(tt.p, ring); got != tt.want {
			t.Errorf("Inside(%v) = %v", tt.p, got)
		}
	}
}
