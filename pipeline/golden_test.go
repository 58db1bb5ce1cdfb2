package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/addrclean/addrclean/internal/golden"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/writers"
)

// mixedRows is a small input with every kind of outcome; the line says what
// the fake service does with it.
var mixedRows = [][]string{
	{"1 Main Street", "IE"},
	{"2 Suggest Road", "IE"},
	{"1  MAIN street", "ie"}, // duplicate of row 1
	{"", "IE"},               // no address
	{"3 Confirm Lane", "IE"},
	{"4 Reject PO Box", "IE"},
	{"5 Bad Request", "IE"},
	{"6 Flaky Avenue", "IE"},
	{"7 Down Street", "IE"},
	{"8 Busy Road", "IE"},
	{"2 suggest road", "IE"}, // duplicate of row 2
	{"9 Street Level", "GB"},
}

// mixedVerifier answers mixedRows deterministically; it counts attempts per
// address so that failures can be scripted per row.
func mixedVerifier() *fakeVerifier {
	attempts := map[string]int{}
	return &fakeVerifier{fn: func(ctx context.Context, a api.Address, _ int64) (*api.VerifyResponse, error) {
		line := a.Lines[0]
		attempts[line]++ // one worker: no race
		switch {
		case strings.Contains(line, "Suggest"):
			return answer(a, api.ActionSuggest), nil
		case strings.Contains(line, "Confirm"):
			r := answer(a, api.ActionConfirm)
			r.Information.MatchLevel = api.LevelLocality
			return r, nil
		case strings.Contains(line, "Reject"):
			return answer(a, api.ActionReject), nil
		case strings.Contains(line, "Bad"):
			return nil, statusErr(400, "addressLine is not valid")
		case strings.Contains(line, "Flaky") && attempts[line] <= 2:
			return nil, statusErr(503, "")
		case strings.Contains(line, "Down"):
			return nil, statusErr(500, "")
		case strings.Contains(line, "Busy") && attempts[line] <= 3:
			return nil, rateLimited(time.Second)
		case strings.Contains(line, "Street Level"):
			r := answer(a, api.ActionAccept)
			r.Information.MatchLevel = api.LevelStreet
			return r, nil
		}
		return answer(a, api.ActionAccept), nil
	}}
}

// TestStatsGolden runs in a synctest bubble: the backoffs and 429 waits
// pass in fake time, so the elapsed time and rates are exact.
func TestStatsGolden(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &memWriter{}
		st, err := Run(t.Context(), Config{
			Source:   &genSource{n: len(mixedRows), cells: func(i int) []string { return mixedRows[i-1] }},
			Mapper:   cellMapper,
			Verifier: mixedVerifier(),
			Workers:  1, // deterministic attempt order
			Jitter:   identityJitter,
		}.with(w))
		if err != nil {
			t.Fatal(err)
		}
		out, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, "stats.golden.json", append(out, '\n'))
		golden.Check(t, "results.golden.txt", resultsText(w.rows()))
	})
}

// resultsText is one line per result: row, action or error, cached flag.
func resultsText(rs []writers.Result) []byte {
	var b bytes.Buffer
	for _, r := range rs {
		verdict := "Error: " + r.Err
		if r.Response != nil {
			verdict = string(r.Response.Action) + " " + r.Response.Information.MatchLevel
		}
		fmt.Fprintf(&b, "%d\t%s\t%s\tcached=%v\n", r.Row, r.InputLabel, verdict, r.Cached)
	}
	return b.Bytes()
}
