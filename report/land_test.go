package report

import (
	"strings"
	"testing"

	"github.com/addrclean/addrclean/report/internal/geo"
)

// TestLandEmbedded: the embedded land parses, holds Ireland and the United
// Kingdom with their neighbours, and Ireland's outline is where Ireland is
// (Athlone inside, the Irish Sea outside).
func TestLandEmbedded(t *testing.T) {
	cs, err := land()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]country{}
	for _, c := range cs {
		byName[c.Name] = c
	}
	for _, n := range []string{"Ireland", "United Kingdom", "France", "Isle of Man", "Belgium", "Netherlands"} {
		if _, ok := byName[n]; !ok {
			t.Errorf("no %s in the embedded land", n)
		}
	}
	in := func(c country, lat, lon float64) bool {
		n := 0
		for _, r := range c.Rings {
			if geo.Inside(geo.Pt{X: lon, Y: lat}, r) {
				n++
			}
		}
		return n%2 == 1
	}
	ie, gb := byName["Ireland"], byName["United Kingdom"]
	for _, tt := range []struct {
		name     string
		c        country
		lat, lon float64
		want     bool
	}{
		{"Athlone in Ireland", ie, 53.42, -7.94, true},
		{"Irish Sea not in Ireland", ie, 53.5, -5.5, false},
		{"Birmingham in the United Kingdom", gb, 52.49, -1.89, true},
		{"Belfast in the United Kingdom", gb, 54.6, -5.93, true},
		{"Dublin not in the United Kingdom", gb, 53.35, -6.26, false},
	} {
		if got := in(tt.c, tt.lat, tt.lon); got != tt.want {
			t.Errorf("%s: %v", tt.name, got)
		}
	}
	if !strings.Contains(landText, "public domain") {
		t.Error("land.txt does not state its licence")
	}
}

func TestParseLandRefusesDamage(t *testing.T) {
	for _, text := range []string{"R 1 2 3 4 5 6\n", "C 1 A\nR 1 2 3\n", "C 1 A\nR 1 x 3 4 5 6\n", "Z\n"} {
		if _, err := parseLand(text); err == nil {
			t.Errorf("%q parsed", text)
		}
	}
}
