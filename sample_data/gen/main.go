package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/internal/atomicfile"
	"github.com/addrclean/addrclean/sample_data/synth"
)

func main() {
	dir := flag.String("dir", "sample_data", "directory to write into")
	n := flag.Int("n", 6000, "number of reference addresses")
	customers := flag.Int("customers", 500, "number of customer rows")
	flag.Parse()
	if err := run(*dir, *n, *customers); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(dir string, n, customers int) error {
	recs := slices.Collect(synth.Generate(synth.SampleSeed, n))
	if err := writeFile(filepath.Join(dir, "reference.csv"), func(w *bufio.Writer) error {
		return gazetteer.WriteCSVColumns(w, gazetteer.Columns, slices.Values(recs))
	}); err != nil {
		return err
	}
	return writeCustomers(dir, recs, customers)
}

// writeFile writes path through a buffer, whole or not at all.
func writeFile(path string, fill func(*bufio.Writer) error) error {
	return atomicfile.Write(path, func(f *os.File) error {
		w := bufio.NewWriter(f)
		if err := fill(w); err != nil {
			return err
		}
		return w.Flush()
	})
}
