package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/readers"
)

// matcherAlone measures what the embedded run spends in the gazetteer: it
// loads the reference and matches each distinct request of the input once
// (the run pays once per distinct request), in this process, with no HTTP
// and no files in between. The input is read, and its requests built and
// deduplicated, before the clock starts. CPU is this process's user and
// system time over the load and the matches (the garbage collector's
// included), per input row, like the embedded rows' CPU per row.
func matcherAlone(ctx context.Context, refPath, inPath string, rows int) (measurement, error) {
	qs, err := readQueries(ctx, inPath)
	if err != nil {
		return measurement{}, err
	}
	cpu0, err := selfCPU()
	if err != nil {
		return measurement{}, err
	}
	start := time.Now()
	ix, err := gazetteer.LoadFile(ctx, refPath)
	if err != nil {
		return measurement{}, err
	}
	buildings := 0
	for _, q := range qs {
		if m := ix.Match(q); m.Record != nil {
			buildings++
		}
	}
	wall := time.Since(start)
	cpu1, err := selfCPU()
	if err != nil {
		return measurement{}, err
	}
	// The buildings found show that the queries are the run's: the
	// generated addresses are the reference's, so nearly all are found.
	return measurement{name: fmt.Sprintf("matcher alone, %d rows (%d distinct requests, %d buildings found)", rows, len(qs), buildings),
		rows: rows, wall: wall, cpu: cpu1 - cpu0, maxRSS: -1, limited: -1}, nil
}

// readQueries reads a generated input (writeInput) through the run's
// reader and column mapping and returns the gazetteer query of each
// distinct request as the service receives it (lines with the postcode
// last, town, county, the country's ISO code). Distinct is the run's
// deduplication: every field lower-cased, white space folded.
func readQueries(ctx context.Context, path string) ([]gazetteer.Query, error) {
	rd, err := readers.Open(ctx, path, readers.Options{})
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	m, err := readers.NewMapper(rd.Header(), inputMapping)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var qs []gazetteer.Query
	for {
		row, err := rd.Next(ctx)
		if errors.Is(err, io.EOF) {
			return qs, nil
		}
		if err != nil {
			return nil, err
		}
		mp := m.Map(row)
		if mp.Err != nil {
			return nil, fmt.Errorf("%s row %d: %w", path, row.Num, mp.Err)
		}
		a := mp.Address
		if k := foldAddress(a); !seen[k] {
			seen[k] = true
			qs = append(qs, gazetteer.Query{Lines: a.Lines, City: a.City, Region: a.Region, Country: a.Country, Language: a.Language})
		}
	}
}

// inputMapping is the column mapping of the generated inputs.
var inputMapping = readers.MappingSpec{
	LineCols: []string{"Address 1", "Address 2"}, City: "Town", Region: "County",
	Postcode: "Postcode", Country: "Country", ID: "Customer ID"}

// foldAddress is the identity deduplication gives a mapped address.
func foldAddress(a api.Address) string {
	fields := append(append([]string(nil), a.Lines...), "|", a.City, a.Region, a.Country, a.Language)
	for j, f := range fields {
		fields[j] = strings.Join(strings.Fields(strings.ToLower(f)), " ")
	}
	return strings.Join(fields, "\x00")
}

// selfCPU is this process's user and system time so far.
func selfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
