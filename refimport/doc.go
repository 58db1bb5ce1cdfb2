// Package refimport converts the address files users hold, Royal Mail PAF
// (CSV or JSON, as PAF resellers serve it) and OpenAddresses (CSV or
// GeoJSON), into the reference CSV format of the embedded service
// (gazetteer/FORMAT.md). It streams: a row is read, converted and written
// before the next is read.
//
// What it writes keeps the reference's limits (gazetteer.MaxFieldBytes,
// MaxWordBytes): a record with a longer value is left out and counted in
// Stats.Skipped, as other records the reference cannot take. A source
// record (a CSV row, a JSON record or feature) over gazetteer.MaxRowBytes
// stops the conversion with a *SourceError naming where it is, after at
// most twice that much of it is read: sources are messy, but such a
// record is no address, and reading on would mean holding it whole.
package refimport
