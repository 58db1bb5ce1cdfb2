package apply

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/writers"
)

// TestApplyWithoutIDColumn: an input with no id column (none named, none
// detected) has no column that says which record a review row is, so a
// person's edit of its first column, outside the address, is a warning
// like any other such edit, not a review row "of another record".
func TestApplyWithoutIDColumn(t *testing.T) {
	rs := []writers.Result{
		{Row: 1, Cells: []string{"Ann", "1 Main St", "Dublin", "Ireland"}, InputLabel: "1 Main St, Dublin, Ireland", Response: resp(api.ActionSuggest, "A1", "1 Main Street")},
		{Row: 2, Cells: []string{"Bob", "2 Main St", "Dublin", "Ireland"}, InputLabel: "2 Main St, Dublin, Ireland", Response: resp(api.ActionAccept, "A2", "2 Main Street")},
	}
	defer func(h []string) { header = h }(header)
	header = []string{"name", "street", "town", "country"} // writeRun's header
	en, rv := writeRun(t, t.TempDir(), "csv", rs)
	decide(t, rv, map[int]map[string]string{1: {"decision": "accept", "name": "Anne"}})
	rep, err := Run(context.Background(), en, rv, filepath.Join(filepath.Dir(en), "final.csv"), Options{})
	if err != nil {
		t.Fatalf("apply refused an edit outside the address: %v", err)
	}
	if rep.EditedCells != 1 || len(rep.Edited) != 1 || rep.Edited[0].Column != "name" {
		t.Fatalf("edited cells %d %+v, want the name column noted", rep.EditedCells, rep.Edited)
	}
}
