// Package apply turns a run's enriched file and a person's decisions in its
// review file into the final file for import: every input row, the input
// columns unchanged, then the address to import (FinalColumns) and where it
// came from. Both files are in row order, so they are merged like a sorted
// join: memory does not grow with the input.
package apply
