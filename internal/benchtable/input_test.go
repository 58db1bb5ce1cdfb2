package main

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"testing"

	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/sample_data/synth"
)

// TestWriteInput reads a generated input back through the real reader and
// column mapping, keys each row as deduplication does (every field of the
// mapped address lower-cased, white space folded), and checks what the
// table relies on: the distinct count writeInput returns, and every repeat
// more than dupGap rows after the first row with its address. With a
// reference as large as the input, the repeats are the deliberate ones,
// about dupShare of the rows past dupGap; with a smaller one, spellings of
// the same reference address that fold alike repeat too.
func TestWriteInput(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n, refs int
	}{
		{"a reference address per row", 12000, 12000},
		{"four spellings of each", 12000, 3000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkInput(t, tc.n, tc.refs)
		})
	}
}

func checkInput(t *testing.T, n, nrefs int) {
	refs := slices.Collect(synth.Generate(synth.SampleSeed, nrefs))
	path := filepath.Join(t.TempDir(), "in.csv")
	distinct, err := writeInput(path, refs, n)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rd, err := readers.Open(ctx, path, readers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	m, err := readers.NewMapper(rd.Header(), inputMapping)
	if err != nil {
		t.Fatal(err)
	}
	first := map[string]int{}
	repeats, near := 0, 0
	for i := 0; ; i++ {
		row, err := rd.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		mp := m.Map(row)
		if mp.Err != nil {
			t.Fatalf("row %d: %v", i+1, mp.Err)
		}
		key := foldAddress(mp.Address)
		if at, ok := first[key]; ok {
			repeats++
			if i-at <= dupGap {
				near++
			}
			continue
		}
		first[key] = i
	}
	if got := int64(len(first)); got != distinct {
		t.Errorf("writeInput counted %d distinct addresses, the mapped rows hold %d", distinct, got)
	}
	// The matcher alone is given one query per distinct request.
	if qs, err := readQueries(ctx, path); err != nil || int64(len(qs)) != distinct || len(qs[0].Lines) == 0 || qs[0].Country == "" {
		t.Errorf("readQueries: %d queries (%v), want %d; the first %+v", len(qs), err, distinct, qs[:min(len(qs), 1)])
	}
	// Rows past dupGap repeat with probability dupShare.
	if want := dupShare * float64(n-dupGap); nrefs >= n && (float64(repeats) < 0.8*want || float64(repeats) > 1.2*want) {
		t.Errorf("%d rows repeat an earlier address, want about %.0f", repeats, want)
	}
	if near > 0 {
		t.Errorf("%d repeats within %d rows of the first", near, dupGap)
	}
}
