// Package runs owns a run's policy: a Job checks everything, then changes
// anything (the outputs and the clash of every file, the cache, the input
// and its mapping, the output tables, the journal) before the first call
// is paid, runs the pipeline, and settles what a stopped run leaves; its
// Estimate is the dry run. Around the journal: whether a run keeps one,
// what makes two runs the same, resume, restart or refuse. It opens the
// cache by name (a file, sqlite:PATH, a postgres:// URL shared by
// runners) and connects to the service (live, or embedded in process).
// The input and the outputs are opened by name through runs/endpoint.
package runs
