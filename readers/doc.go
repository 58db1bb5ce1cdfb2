// Package readers streams rows from CSV, TSV and XLSX exports and maps their
// columns to the parameters of a verify request. It never holds a whole file in
// memory and never drops or merges a row silently. It does not call the API.
//
// Open picks a reader by extension ("-" is CSV on stdin). Delimited text has
// its byte-order mark stripped, its delimiter detected among , ; tab and |
// unless given, and is read as UTF-8 (invalid bytes are an error naming the
// line) or windows-1252; UTF-16 is refused. Workbooks are read through
// excelize's streaming row iterator, cells as the text a person sees, after a
// check of their zip (every part's size and checksum) and a scan of the sheet
// and its shared strings that holds them to limits (Options.MaxRowSize and
// the like) and refuses what excelize would read wrongly without a word: XML
// cut short or malformed, rows out of order, missing shared strings, and
// more cell text than 100 times the file's size (Options.MaxTextRatio). A
// sheet mostly made of cells without text, or with text far to the right of
// every row's, is read through a copy holding only its cells with text
// (excelize spends time on every cell element and every column before a
// row's last cell). Cells of white space read as empty. Rows shorter than
// the header are padded; longer ones keep their extra cells and are logged.
//
// NewMapper resolves the user's column names (or detects them from common
// header names) and Mapper.Map turns a row into an api.Address, with a row
// error for rows that have no address or no country. Inspect is the dry run:
// it reads and maps a whole input and reports what would be sent.
package readers
