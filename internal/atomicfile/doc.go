// Package atomicfile writes a file whole or not at all: through a
// temporary file beside it, synced, then renamed into place. A failure
// leaves no file, and an old one stays as it was. It is how the summary,
// the report and an imported reference are written.
package atomicfile
