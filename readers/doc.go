// Package readers streams rows from CSV, TSV and XLSX exports and maps their
// columns to the parameters of a verify request. It never holds a whole file in
// memory and never drops or merges a row silently. It does not call the API.
package readers
