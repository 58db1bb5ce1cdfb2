package apply

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/writers"
)

// TestApplyKeepRepeatedHeaderName: an export whose address columns share
// a name ("address", "address") sends both as lines; keep must copy each
// one, not the first twice, and both are address columns.
func TestApplyKeepRepeatedHeaderName(t *testing.T) {
	defer func(h []string) { header = h }(header)
	header = []string{"id", "address", "address", "town", "country"}
	rs := []writers.Result{{Row: 1, Cells: []string{"C1", "Apt 4", "2 Main St", "Dublin", "IE"},
		InputLabel: "Apt 4, 2 Main St, Dublin, IE", Response: resp(api.ActionSuggest, "A1", "2 Main Street")}}
	en, rv := writeRun(t, t.TempDir(), "csv", rs)
	decide(t, rv, map[int]map[string]string{1: {"decision": "keep"}})
	final := filepath.Join(filepath.Dir(en), "final.csv")
	if _, err := Run(context.Background(), en, rv, final, Options{}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(final)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	at := func(col string) string { return recs[1][slices.Index(recs[0], col)] }
	if l1, l2 := at("final_line1"), at("final_line2"); l1 != "Apt 4" || l2 != "2 Main St" {
		t.Errorf("final lines %q, %q; want the two address columns %q, %q", l1, l2, "Apt 4", "2 Main St")
	}

	m, err := readers.NewMapper(header, readers.MappingSpec{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := addressColumns(header, m), []bool{false, true, true, true, true}; !slices.Equal(got, want) {
		t.Errorf("address columns %v, want %v", got, want)
	}
}
