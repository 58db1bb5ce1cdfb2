package gazetteer

import "testing"

// TestIrishNamesUnambiguous: each Irish name stands for one English key,
// whatever the order the table is read in.
func TestIrishNamesUnambiguous(t *testing.T) {
	seen := map[string]string{}
	for en, names := range irishPlaceNames {
		for _, n := range names {
			k := Fold(n)
			if k == "" {
				t.Errorf("%q folds to nothing", n)
			}
			if other, ok := seen[k]; ok && Fold(other) != Fold(en) {
				t.Errorf("%q is both %s and %s", n, other, en)
			}
			seen[k] = en
			if _, ok := irishPlaceNames[n]; ok && n != en {
				t.Errorf("%q is an English name too", n)
			}
		}
	}
}

// TestIrishPlaceNames: a town and county in Irish find the English ones
// and count as written the same (Accept), also as a line of the address.
func TestIrishPlaceNames(t *testing.T) {
	ix := loadSmall(t)
	for _, q := range []Query{
		{Lines: []string{"12 Main Street"}, City: "Inis", Region: "Co. an Chláir", Country: "IE"},
		{Lines: []string{"12 Main Street", "Inis", "Contae an Chláir"}, Country: "IE"},
		{Lines: []string{"12 Main Street"}, City: "INIS", Region: "An Clár", Country: "IE"},
	} {
		m := ix.Match(q)
		if m.Record == nil || m.Record.ID != "IE1" || m.Verdict != VerdictAccept || m.City != "Ennis" {
			t.Errorf("%+v: %s %v %q", q, m.Verdict, m.Record, m.City)
		}
	}
}
