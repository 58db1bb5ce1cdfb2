// Package rowlimit bounds how much of a stream one row may take while a
// parser reads it: a reader between the source and the parser that stops
// passing bytes once the row being read has run past its limit, so that a
// file of one 300 MB line is refused after a few kilobytes instead of
// being held in memory whole.
package rowlimit
