package report

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/addrclean/addrclean/report/internal/geo"
)

// landText is the land of the map: Natural Earth country outlines (public
// domain) from the npm package world-atlas, decoded and simplified at
// build time; see the file's header and report/internal/mapgen.
//
//go:generate go run ./internal/mapgen -out land.txt
//go:embed land.txt
var landText string

// country is one country's outline, in degrees (X longitude, Y latitude).
type country struct {
	ID, Name string
	Rings    [][]geo.Pt
	Bounds   geo.Rect
}

// land parses landText once, on the first report that draws a map.
var land = sync.OnceValues(func() ([]country, error) { return parseLand(landText) })

// parseLand reads the format mapgen writes.
func parseLand(text string) ([]country, error) {
	var out []country
	for n, line := range strings.Split(text, "\n") {
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "C "):
			id, name, _ := strings.Cut(line[2:], " ")
			out = append(out, country{ID: id, Name: name})
		case strings.HasPrefix(line, "R "):
			if len(out) == 0 {
				return nil, fmt.Errorf("land.txt:%d: a ring before any country", n+1)
			}
			f := strings.Fields(line[2:])
			if len(f)%2 != 0 || len(f) < 6 {
				return nil, fmt.Errorf("land.txt:%d: a ring of %d numbers", n+1, len(f))
			}
			ring := make([]geo.Pt, 0, len(f)/2)
			var x, y int64
			for i := 0; i < len(f); i += 2 {
				dx, err1 := strconv.ParseInt(f[i], 10, 64)
				dy, err2 := strconv.ParseInt(f[i+1], 10, 64)
				if err1 != nil || err2 != nil {
					return nil, fmt.Errorf("land.txt:%d: not a number", n+1)
				}
				x, y = x+dx, y+dy
				ring = append(ring, geo.Pt{X: float64(x) / 1000, Y: float64(y) / 1000})
			}
			c := &out[len(out)-1]
			c.Rings = append(c.Rings, ring)
		default:
			return nil, fmt.Errorf("land.txt:%d: unknown line", n+1)
		}
	}
	for i := range out {
		var all []geo.Pt
		for _, r := range out[i].Rings {
			all = append(all, r...)
		}
		out[i].Bounds = geo.Bounds(all)
	}
	return out, nil
}
