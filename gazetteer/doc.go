// Package gazetteer holds reference address data: loading, normalisation, the
// index, matching and scoring. It knows nothing about HTTP.
package gazetteer
