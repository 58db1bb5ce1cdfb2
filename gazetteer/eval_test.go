package gazetteer_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/sample_data/synth"
)

// evalIndex builds an index from synthetic records, leaving every twentieth
// record out so that queries for addresses not in the reference can be
// asked: those must never come back as a match.
func evalIndex(t testing.TB, n int) (*gazetteer.Index, []gazetteer.Record, []gazetteer.Record) {
	t.Helper()
	var in, out []gazetteer.Record
	i := 0
	synth.Generate(7, n, func(r gazetteer.Record) bool {
		if i%20 == 19 {
			out = append(out, r)
		} else {
			in = append(in, r)
		}
		i++
		return true
	})
	var b strings.Builder
	if err := gazetteer.WriteCSV(&b, slices.Values(in)); err != nil {
		t.Fatal(err)
	}
	ix, err := gazetteer.Load(context.Background(), strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return ix, in, out
}

// TestEvaluation runs perturbed addresses with known answers through Match
// and holds matching to its promises: an Accept is almost never wrong, and
// almost every findable address is found.
func TestEvaluation(t *testing.T) {
	ix, in, out := evalIndex(t, 8000)
	p := synth.NewPerturber(11, in)
	rng := rand.New(rand.NewPCG(3, 5))
	var cases []synth.Case
	for range 5000 {
		cases = append(cases, p.Random(&in[rng.IntN(len(in))]))
	}
	// A flat the reference lacks, alone or with some cosmetic mess: the
	// building is found but the answer must not be Accept.
	cosmetic := []synth.Op{synth.OpCase, synth.OpAbbrev, synth.OpPunct, synth.OpDropCounty, synth.OpReorder}
	for range 200 {
		ops := []synth.Op{synth.OpNote}
		if rng.IntN(2) == 0 {
			ops = append(ops, cosmetic[rng.IntN(len(cosmetic))])
		}
		cases = append(cases, p.Mess(&in[rng.IntN(len(in))], ops...))
	}
	for len(cases) < 5500 {
		ops := []synth.Op{synth.OpExtraSub}
		if rng.IntN(2) == 0 {
			ops = append(ops, cosmetic[rng.IntN(len(cosmetic))])
		}
		if c := p.Mess(&in[rng.IntN(len(in))], ops...); slices.Contains(c.Ops, synth.OpExtraSub) {
			cases = append(cases, c)
		}
	}
	for range 800 {
		c := p.Random(&out[rng.IntN(len(out))])
		c.HeldOut, c.Expect = true, gazetteer.VerdictConfirm
		cases = append(cases, c)
	}

	verdicts := []gazetteer.Verdict{gazetteer.VerdictAccept, gazetteer.VerdictSuggest, gazetteer.VerdictConfirm}
	confusion := map[[2]gazetteer.Verdict]int{}
	var accepts, goodAccepts, wantID, gotID int
	var overAccepts, wrongSuggests, subAccepts, confirmRight, confirmWrong int
	failures := map[string]int{}
	var examples []string
	for _, c := range cases {
		m := ix.Match(c.Input.Query())
		confusion[[2]gazetteer.Verdict{c.Expect, m.Verdict}]++
		right := !c.HeldOut && m.Record != nil && m.Record.ID == c.TrueID
		if m.Verdict == gazetteer.VerdictAccept {
			accepts++
			if slices.Contains(c.Ops, synth.OpExtraSub) || slices.Contains(c.Ops, synth.OpNote) {
				subAccepts++
				if len(examples) < 15 {
					examples = append(examples, fmt.Sprintf("INPUT DROPPED %v %+v -> %v", c.Ops, c.Input, m.Lines))
				}
			}
			if right {
				goodAccepts++
			} else if len(examples) < 15 {
				examples = append(examples, fmt.Sprintf("WRONG ACCEPT %v %+v -> %v", c.Ops, c.Input, m.Lines))
			}
			if right && c.Expect != gazetteer.VerdictAccept {
				overAccepts++
				if len(examples) < 30 {
					examples = append(examples, fmt.Sprintf("OVER-ACCEPT %v %+v -> %v %+v", c.Ops, c.Input, m.Lines, m.Details))
				}
			}
		}
		if m.Verdict == gazetteer.VerdictConfirm && m.Record != nil {
			if right {
				confirmRight++
			} else {
				confirmWrong++
				if testing.Verbose() && len(examples) < 60 {
					examples = append(examples, fmt.Sprintf("CONFIRM WRONG ID held-out=%v %v %+v -> %v %q %.2f/%.2f", c.HeldOut, c.Ops, c.Input, m.Level, m.Lines, m.Score, m.RunnerUp))
				}
			}
		}
		if m.Verdict == gazetteer.VerdictSuggest && !right {
			wrongSuggests++
		}
		if c.Expect == gazetteer.VerdictConfirm && m.Verdict != gazetteer.VerdictConfirm && len(examples) < 40 {
			examples = append(examples, fmt.Sprintf("NOT CONFIRMED held-out=%v %v %+v -> %v %v %q %.2f/%.2f", c.HeldOut, c.Ops, c.Input, m.Verdict, m.Level, m.Lines, m.Score, m.RunnerUp))
		}
		if c.Expect != gazetteer.VerdictConfirm {
			wantID++
			if right && m.Verdict != gazetteer.VerdictConfirm {
				gotID++
			} else {
				for _, op := range c.Ops {
					failures[string(op)]++
				}
				if len(c.Ops) == 0 {
					failures["clean"]++
				}
				if testing.Verbose() && len(examples) < 60 {
					examples = append(examples, fmt.Sprintf("MISS %v %+v -> %v %v %q %.2f/%.2f", c.Ops, c.Input, m.Verdict, m.Level, m.Lines, m.Score, m.RunnerUp))
				}
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "confusion (rows expected, columns got), %d cases:\n%-10s", len(cases), "")
	for _, v := range verdicts {
		fmt.Fprintf(&b, "%9s", v)
	}
	for _, e := range verdicts {
		fmt.Fprintf(&b, "\n%-10s", e)
		for _, g := range verdicts {
			fmt.Fprintf(&b, "%9d", confusion[[2]gazetteer.Verdict{e, g}])
		}
	}
	precision := float64(goodAccepts) / float64(max(accepts, 1))
	recall := float64(gotID) / float64(max(wantID, 1))
	fmt.Fprintf(&b, "\nAccept precision %.4f (%d/%d), over-accepts %d, Suggests of a wrong address %d; correct-id recall %.4f (%d/%d)",
		precision, goodAccepts, accepts, overAccepts, wrongSuggests, recall, gotID, wantID)
	fmt.Fprintf(&b, "\nConfirm naming a building: %d right, %d wrong", confirmRight, confirmWrong)
	keys := make([]string, 0, len(failures))
	for k := range failures {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(&b, "\nmisses by op:")
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%d", k, failures[k])
	}
	t.Log(b.String())
	for _, e := range examples {
		t.Log(e)
	}
	if subAccepts > 0 {
		t.Errorf("%d inputs with a flat the reference lacks or a note line were accepted", subAccepts)
	}
	// The gazetteer names a building only when it is confident or clear:
	// tried, a Confirm naming the best but unsure building named a wrong
	// one (a similar street next to a held-out address) every time.
	if confirmWrong > 0 {
		t.Errorf("%d Confirm answers name a wrong building", confirmWrong)
	}
	if precision < 0.995 {
		t.Errorf("Accept precision %.4f < 0.995", precision)
	}
	if recall < 0.95 {
		t.Errorf("correct-id recall %.4f < 0.95", recall)
	}
}
