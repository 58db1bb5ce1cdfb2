package main

import (
	"os"
	"strings"
	"testing"
)

// TestRunKeepsAReviewWithDecisions: the same run command again (a cron
// job, a colleague) must not write a fresh review over one a person has
// filled in: the run is refused, naming the file, and the review is left
// as it was. A review nobody decided on is replaced as before.
func TestRunKeepsAReviewWithDecisions(t *testing.T) {
	dir := t.TempDir()
	_, review := embeddedRun(t, dir) // a review nobody has touched yet
	embeddedRun(t, dir)              // is replaced without a word
	decideAll(t, review, func(_ int, action string) string {
		if action == "Suggest" {
			return "accept"
		}
		return ""
	})
	before, err := os.ReadFile(review)
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := cli("run", "--log-format", "json", "--no-progress", "--limit", "60",
		"-o", dir+"/cleaned.csv", "--review", review, sampleCSV(t))
	if code != exitUsage || !strings.Contains(stderr, "--review "+review+" holds decisions") {
		t.Errorf("run over a decided review: exit %d, want %d naming it\n%s", code, exitUsage, tail(stderr, 2000))
	}
	if after, _ := os.ReadFile(review); string(after) != string(before) {
		t.Error("the review with decisions was overwritten")
	}
}
