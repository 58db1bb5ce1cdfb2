// Package record holds the types that readers, writers and tables share: a
// row as read, a workbook cell's type, and the text encodings of CSV files.
// It is a leaf: it imports nothing of the project, so that a writer or a
// table need not import the readers (or the other way round) to speak of a
// row.
package record
