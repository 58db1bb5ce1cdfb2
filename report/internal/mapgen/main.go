// Command mapgen writes the land of the report's map (report/land.txt)
// from world-atlas's countries-10m.json: the countries that lie in Europe's
// box (Ireland and Great Britain and their neighbours, and the rest of
// western Europe for context), simplified, at a detail fit for a map of one
// city for the islands of Ireland and Great Britain and fit for a country
// map elsewhere. It runs at 'go generate' time only; the build embeds its
// output and needs neither node nor the network.
//
// The data: Natural Earth 1:10m Admin 0 countries (public domain), as the
// npm package world-atlas 2.0.2 carries it (TopoJSON; the package is ISC,
// (c) Michael Bostock). Fetch it with
//
//	npm pack world-atlas@2.0.2 && tar xzf world-atlas-2.0.2.tgz
//
// and run 'WORLD_ATLAS=$PWD/package go generate ./report'.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/addrclean/addrclean/report/internal/geo"
)

// box is the area kept: Europe west of Russia, with Iceland.
var box = geo.Rect{MinX: -32, MinY: 34, MaxX: 32, MaxY: 72}

// detailed are the ISO 3166 numeric codes of the countries kept at city
// detail: Ireland, the United Kingdom, the Isle of Man, Jersey, Guernsey.
var detailed = []string{"372", "826", "833", "832", "831"}

// Tolerances of the simplification, in degrees (about 200 m and 2 km).
const (
	fineTol   = 0.002
	coarseTol = 0.02
)

func main() {
	in := flag.String("in", "", "countries-10m.json of world-atlas (default $WORLD_ATLAS/countries-10m.json)")
	out := flag.String("out", "land.txt", "output file")
	flag.Parse()
	if *in == "" {
		dir := os.Getenv("WORLD_ATLAS")
		if dir == "" {
			fmt.Fprintln(os.Stderr, "mapgen: set WORLD_ATLAS to the unpacked world-atlas 2.0.2 package "+
				"(npm pack world-atlas@2.0.2 && tar xzf world-atlas-2.0.2.tgz), or pass -in")
			os.Exit(2)
		}
		*in = dir + "/countries-10m.json"
	}
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "mapgen:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	topo, err := decode(f)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	countries := topo.countries()
	tmp := out + ".tmp"
	w, err := os.Create(tmp)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	if err := write(bw, countries); err != nil {
		w.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

// topology is the part of a TopoJSON document mapgen reads.
type topology struct {
	Type      string
	Transform *struct {
		Scale     [2]float64
		Translate [2]float64
	}
	Arcs    [][][2]float64
	Objects map[string]struct {
		Geometries []geometry
	}
}

type geometry struct {
	Type       string
	ID         string `json:"id"`
	Properties struct{ Name string }
	Arcs       json.RawMessage
}

func decode(r io.Reader) (*topology, error) {
	var t topology
	if err := json.NewDecoder(r).Decode(&t); err != nil {
		return nil, err
	}
	if t.Type != "Topology" || t.Transform == nil {
		return nil, errors.New("not a quantized TopoJSON topology")
	}
	if _, ok := t.Objects["countries"]; !ok {
		return nil, errors.New("no countries object")
	}
	return &t, nil
}

// arc returns arc i decoded to degrees: the positions are delta-encoded
// integers (each relative to the previous one) to be scaled and
// translated; a negative index ~i is arc i reversed.
func (t *topology) arc(i int) []geo.Pt {
	rev := i < 0
	if rev {
		i = ^i
	}
	var x, y float64
	pts := make([]geo.Pt, 0, len(t.Arcs[i]))
	for _, d := range t.Arcs[i] {
		x += d[0]
		y += d[1]
		pts = append(pts, geo.Pt{
			X: x*t.Transform.Scale[0] + t.Transform.Translate[0],
			Y: y*t.Transform.Scale[1] + t.Transform.Translate[1],
		})
	}
	if rev {
		slices.Reverse(pts)
	}
	return pts
}

// ring joins the arcs of one ring; each arc starts where the previous one
// ended, so that shared point is dropped. The ring is returned open (its
// first point not repeated).
func (t *topology) ring(arcs []int) []geo.Pt {
	var pts []geo.Pt
	for k, a := range arcs {
		p := t.arc(a)
		if k > 0 && len(p) > 0 {
			p = p[1:]
		}
		pts = append(pts, p...)
	}
	if n := len(pts); n > 1 && pts[0] == pts[n-1] {
		pts = pts[:n-1]
	}
	return pts
}

// country is one country of the output.
type country struct {
	id, name string
	rings    [][]geo.Pt
}

// countries decodes, clips and simplifies the countries in box.
func (t *topology) countries() []country {
	var out []country
	for _, g := range t.Objects["countries"].Geometries {
		var polys [][][]int
		switch g.Type {
		case "Polygon":
			var p [][]int
			if json.Unmarshal(g.Arcs, &p) != nil {
				continue
			}
			polys = [][][]int{p}
		case "MultiPolygon":
			if json.Unmarshal(g.Arcs, &polys) != nil {
				continue
			}
		default:
			continue
		}
		tol := coarseTol
		if slices.Contains(detailed, g.ID) {
			tol = fineTol
		}
		c := country{id: g.ID, name: g.Properties.Name}
		for _, p := range polys {
			for _, arcs := range p {
				r := geo.ClipRing(t.ring(arcs), box)
				if r == nil {
					continue
				}
				b := geo.Bounds(r)
				if b.MaxX-b.MinX < 2*tol && b.MaxY-b.MinY < 2*tol {
					continue // an islet smaller than the detail kept
				}
				if r = geo.Simplify(r, tol); len(r) >= 3 {
					c.rings = append(c.rings, r)
				}
			}
		}
		if len(c.rings) > 0 {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b country) int { return strings.Compare(a.id, b.id) })
	return out
}

// unit is the resolution of the output: a thousandth of a degree (about
// 100 m), finer than the finest tolerance.
const unit = 1000

const header = `# The land of the report's map. Generated by report/internal/mapgen; do not edit.
# Data: Natural Earth 1:10m Admin 0 countries, v4.1.0 (public domain:
# https://www.naturalearthdata.com/about/terms-of-use/), from the npm package
# world-atlas 2.0.2 (countries-10m.json; ISC licence, (c) 2013-2019 Michael
# Bostock), clipped to longitude %g..%g, latitude %g..%g and simplified
# (Douglas-Peucker, %g degree for Ireland and the United Kingdom, %g elsewhere).
# "C ID NAME" starts a country (ISO 3166 numeric code or -, name); each "R" line
# that follows is one ring of it, closed, in thousandths of a degree: the
# first point's longitude and latitude, then each next point's difference
# from the one before.
`

func write(w io.Writer, cs []country) error {
	if _, err := fmt.Fprintf(w, header, box.MinX, box.MaxX, box.MinY, box.MaxY, fineTol, coarseTol); err != nil {
		return err
	}
	for _, c := range cs {
		if _, err := fmt.Fprintf(w, "C %s %s\n", cmp.Or(c.id, "-"), c.name); err != nil {
			return err
		}
		for _, r := range c.rings {
			var b strings.Builder
			b.WriteString("R")
			var px, py int64
			for i, p := range r {
				x, y := int64(math.Round(p.X*unit)), int64(math.Round(p.Y*unit))
				if i > 0 && x == px && y == py {
					continue
				}
				fmt.Fprintf(&b, " %d %d", x-px, y-py)
				px, py = x, y
			}
			b.WriteString("\n")
			if _, err := io.WriteString(w, b.String()); err != nil {
				return err
			}
		}
	}
	return nil
}
