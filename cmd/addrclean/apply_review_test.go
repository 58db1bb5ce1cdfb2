package main

import (
	"strings"
	"testing"
)

// TestApplyTableOnlyVerifiedAddresses: over tables as over files, accept
// gives a row the service's address only where the service verified one.
// The sample run has Suggest rows (with an address id), Confirm rows
// without one (row 18 of the issue: France, "Address not found") and Error
// rows; one Suggest row is made a Reject, one Confirm row is given an id,
// and one Accept row loses its id, so that every action is met. Every
// review row is decided accept.
func TestApplyTableOnlyVerifiedAddresses(t *testing.T) {
	for name, newDB := range applyDBs(t) {
		t.Run(name, func(t *testing.T) {
			isolateJournals(t)
			dbURL := newDB(t)
			loadSample(t, dbURL, "customers")
			r := runDB(t, t.TempDir(), "--country", "IE", "--table", "customers", "--id-col", "Customer ID",
				"--out-table", "av", "--review-table", "rv", dbURL)
			wantExit(t, r, exitOK, exitRowErrors)
			first := func(q string) string {
				t.Helper()
				_, rows := dbRows(t, dbURL, q)
				if len(rows) == 0 {
					t.Fatalf("no row: %s", q)
				}
				return rows[0][0]
			}
			suggest := first(`SELECT "Customer ID" FROM av WHERE av_action = 'Suggest' ORDER BY 1`)
			reject := first(`SELECT "Customer ID" FROM av WHERE av_action = 'Suggest' ORDER BY 1 DESC`)
			confirmNoID := first(`SELECT "Customer ID" FROM av WHERE av_action = 'Confirm' AND COALESCE(av_address_id, '') = '' AND COALESCE(av_line1, '') <> '' ORDER BY 1`)
			confirmID := first(`SELECT "Customer ID" FROM av WHERE av_action = 'Confirm' AND COALESCE(av_address_id, '') = '' ORDER BY 1 DESC`)
			errorRow := first(`SELECT "Customer ID" FROM av WHERE av_action = 'Error' ORDER BY 1`)
			accept := first(`SELECT "Customer ID" FROM av WHERE av_action = 'Accept' ORDER BY 1`)
			acceptNoID := first(`SELECT "Customer ID" FROM av WHERE av_action = 'Accept' ORDER BY 1 DESC`)
			where := func(id string) string { return ` WHERE "Customer ID" = '` + id + `'` }
			dbExec(t, dbURL,
				`UPDATE av SET av_action = 'Reject'`+where(reject),
				`UPDATE rv SET av_action = 'Reject'`+where(reject),
				`UPDATE av SET av_address_id = 'IE-CONFIRMED'`+where(confirmID),
				`UPDATE av SET av_address_id = ''`+where(acceptNoID),
				`UPDATE rv SET decision = 'accept'`)
			code, _, stderr := cli("apply", dbURL, "--table", "customers", "--id-col", "Customer ID", "--country", "IE",
				"--out-table", "av", "--review-table", "rv", "--final-table", "final")
			if code != exitRowErrors {
				t.Fatalf("exit %d, want 3 (rows unresolved)\n%s", code, stderr)
			}
			for id, want := range map[string]string{
				suggest: "service", confirmID: "service", accept: "service",
				confirmNoID: "unresolved", reject: "unresolved", errorRow: "unresolved", acceptNoID: "unresolved",
			} {
				_, got := dbRows(t, dbURL, `SELECT final_source, COALESCE(final_line1, ''), COALESCE(final_postcode, '') FROM final`+where(id))
				if len(got) != 1 || got[0][0] != want {
					t.Errorf("id %s: final %q, want final_source %s", id, got, want)
				}
				if want == "unresolved" && len(got) == 1 && got[0][1]+got[0][2] != "" {
					t.Errorf("id %s is unresolved with an address: %q", id, got)
				}
			}
			// final_source=service only ever carries a verified address.
			_, bad := dbRows(t, dbURL, `SELECT f."Customer ID", a.av_action FROM final AS f JOIN av AS a ON a."Customer ID" = f."Customer ID"
				WHERE f.final_source = 'service' AND (COALESCE(a.av_address_id, '') = '' OR a.av_action NOT IN ('Accept', 'Suggest', 'Confirm'))`)
			if len(bad) > 0 {
				t.Errorf("service addresses the service did not verify: %q", bad)
			}
			for _, w := range []string{
				"id " + confirmNoID + ": decided accept, but the service returned no matched address (Confirm",
				"id " + errorRow + ": decided accept, but the service did not verify an address (Error",
				"row(s) decided accept have no address the service verified",
			} {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}
