// Package cache keeps verify answers across runs in one SQLite file, so that
// a re-run pays only for the addresses it has not seen within a time to
// live.
//
// A file holds namespaces, one per service and key (LiveNamespace) or per
// reference of the embedded service (EmbeddedNamespace); a namespace holds
// answers keyed by the SHA-256 of the pipeline's address key, each with the
// time the service gave it and a CRC-32C (the schema is in
// docs/storage.md). Neither an API key nor an address key is written in
// clear. A Store is one namespace with a time to live: it satisfies
// pipeline.Cache.
//
// Every error names the file. A file locked by another process is reported
// after Options.Timeout (ErrLocked). Open checks the file (PRAGMA
// quick_check): a damaged one is ErrCorrupt, or, with Options.Rebuild, is
// moved aside and replaced by a new cache, saying so; so is a bbolt cache of
// an older addrclean. A file that is not a cache at all is ErrNotCache
// (--cache may name the wrong path): it is never moved or changed. An answer
// that fails its checksum is a miss (verified again and overwritten),
// counted by Store.Damaged and logged. A file that fails under a run (cut
// short, overwritten, its disk failing) makes its Store a cache that holds
// nothing: the run goes on, paying for what it cannot read, and says so
// once.
//
// Answers are written in batches (sqlitefile.Batch): a commit per few
// hundred answers or every second, so a killed process loses at most the
// last second's answers (they are verified again), and the file opens
// cleanly afterwards.
package cache
