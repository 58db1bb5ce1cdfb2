// Package geo holds the plane geometry of the report's map: clipping a
// ring to a rectangle and simplifying a line. Both the map generator
// (report/internal/mapgen, at build time) and the report (at render time)
// use it.
package geo
