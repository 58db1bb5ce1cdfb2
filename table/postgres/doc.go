// Package postgres is the PostgreSQL kind of table.Database, on pgx: rows are
// read by one statement of the extended protocol in a read-only transaction
// (tables in keyset pages, see read.go), and written
// by COPY into a temporary staging table followed by one upsert per batch.
//
// Importing it registers the postgres:// and postgresql:// schemes with
// table.Open.
package postgres
