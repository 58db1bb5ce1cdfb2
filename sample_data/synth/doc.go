// Package synth makes synthetic reference addresses on real place facts,
// deterministically from a seed, and perturbs them the way CRM exports are
// messy. It feeds the sample data, the gazetteer's evaluation and its
// benchmarks. Every house-level detail (numbers, street names, house names,
// Eircode unique identifiers, UK inward codes, coordinates) is invented.
package synth
