// Package report builds the after-run report: one self-contained HTML page
// (inline CSS and SVG, nothing fetched) from a run's enriched output and,
// when known, the run's statistics. It reads outputs only, never the
// service, and keeps memory bounded: counts, a few top-N lists and a fixed
// sample of coordinates.
//
// It also builds the page of a dry run's estimate (report/estimate.go).
package report
