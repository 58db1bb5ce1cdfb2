package main

import (
	"testing"
	"time"
)

// TestRateFigures checks the two figures of the rate and quota rows on
// arrivals with known spacing.
func TestRateFigures(t *testing.T) {
	at := func(ms ...int) []time.Time {
		t0 := time.Unix(0, 0)
		var ts []time.Time
		for _, m := range ms {
			ts = append(ts, t0.Add(time.Duration(m)*time.Millisecond))
		}
		return ts
	}
	for _, tc := range []struct {
		name       string
		events     []time.Time
		rate       float64
		util, peak float64
	}{
		{"none", nil, 10, 0, 0},
		{"one", at(0), 10, 0, 1},
		{"paced at the rate", at(0, 100, 200, 300, 400), 10, 1, 5},
		{"half the rate", at(0, 200, 400, 600, 800, 1000), 10, 0.5, 5},
		{"a burst then a gap", at(0, 10, 20, 30, 1500, 1510), 4, 5.0 / 1.51 / 4, 4},
		{"exactly one second apart is two windows", at(0, 1000), 1, 1, 1},
	} {
		if got := utilisation(tc.events, tc.rate); got < tc.util-1e-9 || got > tc.util+1e-9 {
			t.Errorf("%s: utilisation %v, want %v", tc.name, got, tc.util)
		}
		if got := busiestSecond(tc.events); got != tc.peak {
			t.Errorf("%s: busiest second %v, want %v", tc.name, got, tc.peak)
		}
	}
}
