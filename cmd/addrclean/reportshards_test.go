package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportTableShards: 'addrclean report' over an out-table that shards
// wrote (schema-qualified, quoted) shows the latest run of each shard
// summed, says how many shards, and flags a set that a shard is missing
// from or that mixes runs of another N; after a run of the whole table it
// shows that run alone, as before.
func TestReportTableShards(t *testing.T) {
	for name, newDB := range applyDBs(t) {
		t.Run(name, func(t *testing.T) {
			isolateJournals(t)
			dbURL := newDB(t)
			loadSample(t, dbURL, "customers")
			outTable := `main."Av Set"`
			if name == "PostgreSQL" {
				dbExec(t, dbURL, `CREATE SCHEMA "Crm Out"`)
				outTable = `"Crm Out"."Av Set"`
			}
			var calls, limited int64
			run := func(shard string) runResult {
				t.Helper()
				args := []string{"--country", "IE", "--table", "customers", "--id-col", "Customer ID",
					"--out-table", outTable, "--price-per-call", "0.01 EUR"}
				if shard != "" {
					args = append(args, "--shard", shard)
				}
				r := runDB(t, t.TempDir(), append(args, dbURL)...)
				wantExit(t, r, exitOK, exitRowErrors)
				calls += summaryInt(r, "calls_made")
				limited += summaryInt(r, "rate_limited")
				return r
			}
			page := filepath.Join(t.TempDir(), "set.html")
			report := func() string {
				t.Helper()
				if code, _, stderr := cli("report", "-o", page, "--out-table", outTable, dbURL); code != exitOK {
					t.Fatalf("report: exit %d\n%s", code, stderr)
				}
				return readFile(t, page)
			}
			has := func(got string, want ...string) {
				t.Helper()
				for _, w := range want {
					if !strings.Contains(got, w) {
						t.Errorf("the page lacks %q", w)
					}
				}
			}
			first := run("0/3")
			run("1/3")
			got := report()
			has(got, "errors &middot; 3 shards</p>", "Incomplete set: shard 2/3 never ran",
				fmt.Sprintf("<b>%d</b><span>calls made</span>", calls),
				"<td>0/3</td>", "<td>1/3</td>")
			if calls == summaryInt(first, "calls_made") {
				t.Fatalf("shard 1/3 made no call: the sums prove nothing")
			}

			run("2/3")
			got = report()
			has(got, "errors &middot; 3 shards</p>", fmt.Sprintf("<b>%d</b><span>calls made</span>", calls),
				fmt.Sprintf("<b>%d</b><span>429 answers</span>", limited),
				fmt.Sprintf("<b>%.2f EUR</b><span>spent on the calls made</span>", float64(calls)/100),
				"<td>2/3</td>", "<td>complete</td>")
			if strings.Contains(got, `class="warn"`) {
				t.Error("a complete set of one N is flagged")
			}

			// A set of 2 started over the set of 3: shard 1/2 has not run,
			// and the rows of its part are the 3 shards'.
			calls, limited = 0, 0
			run("0/2")
			got = report()
			has(got, "errors &middot; 2 shards</p>", "Incomplete set: shard 1/2 never ran",
				"the table may also hold rows of other runs (--shard 2/3, 1/3, 0/3)",
				fmt.Sprintf("<b>%d</b><span>calls made</span>", calls))

			// A run of the whole table: that run alone, as before shards.
			calls = 0
			run("")
			got = report()
			has(got, fmt.Sprintf("<b>%d</b><span>calls made</span>", calls))
			for _, no := range []string{" shards</p>", `class="warn"`, "By shard"} {
				if strings.Contains(got, no) {
					t.Errorf("the page of an unsharded run shows %q", no)
				}
			}
		})
	}
}
