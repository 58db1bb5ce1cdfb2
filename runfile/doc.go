// Package runfile reads the outputs of a run back: the enriched file and the
// review file, in any of the formats the writers produce (CSV, XLSX, JSONL),
// one row at a time. addrclean apply and addrclean report read runs through
// it; neither ever calls the service.
package runfile
