// Package writers writes the enriched and review outputs as CSV, XLSX or
// JSONL, to a temporary file renamed into place when complete. It neutralises
// spreadsheet formula injection. It does not call the API.
package writers
