package gazetteer_test

import (
	"math/rand/v2"
	"testing"

	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/sample_data/synth"
)

func pafRecords(t testing.TB) []gazetteer.Record { return nil }

func pafCases(rng *rand.Rand, recs []gazetteer.Record) []synth.Case { return nil }
