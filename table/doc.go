// Package table makes database tables a source and a sink of a run: a
// Source streams the rows of a table or query as readers.Reader does a
// file's, and a Sink upserts the results into a table as writers.Writer
// does into a file, so the pipeline does not know the difference.
//
// What differs between databases is behind Database, a small interface;
// table/postgres and table/sqlite implement it and register their URL
// schemes with Register.
package table
