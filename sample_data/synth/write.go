package synth

import (
	"os"
	"slices"

	"github.com/addrclean/addrclean/gazetteer"
)

// WriteReference writes the n addresses Generate makes from seed to path as
// a reference CSV, and returns them: the benchmark tools build their inputs
// from the same records.
func WriteReference(path string, seed uint64, n int) ([]gazetteer.Record, error) {
	recs := slices.AppendSeq(make([]gazetteer.Record, 0, n), Generate(seed, n))
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	err = gazetteer.WriteCSVColumns(f, gazetteer.Columns, slices.Values(recs))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return recs, err
}
