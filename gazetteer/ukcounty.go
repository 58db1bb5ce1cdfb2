package gazetteer

import (
	_ "embed"
	"strings"
)

// ukCountyNames are the counties people write in UK addresses: the
// ceremonial counties of England, the former postal counties, the Welsh
// preserved counties and principal areas, the Scottish counties and
// council areas, and the six of Northern Ireland. Names that are also
// post towns (Cardiff, Durham) are left out: a town is a town. Royal
// Mail PAF has no county, so a reference made from it does not know
// them; an address line holding one is the county, not an address word.
//
// The names are ukcounties.txt's, split by "|".
//
//go:embed ukcounties.txt
var ukCountyNames string

// ukCounties are the folded keys of ukCountyNames.
var ukCounties = func() map[string]bool {
	m := make(map[string]bool, 160)
	for n := range strings.SplitSeq(ukCountyNames, "|") {
		if k := Fold(strings.TrimSpace(n)); k != "" {
			m[k] = true
		}
	}
	return m
}()
