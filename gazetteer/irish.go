package gazetteer

import (
	_ "embed"
	"strings"
)

// irishText is the table of irishPlaceNames: the English name, then its
// Irish ones, split by "|", one place a line ("#" opens a comment line).
//
//go:embed irish.txt
var irishText string

// irishPlaceNames are the Irish-language names of counties and towns, as
// people write them on letters ("Gaillimh", "Co. na Gaillimhe"): the
// county in the nominative and in the genitive that follows "Co." or
// "Contae", and the post towns (logainm.ie, An Post). The reference holds
// the English names; an Irish one stands for the English one, a change
// of language, not of place.
var irishPlaceNames = func() map[string][]string {
	m := make(map[string][]string)
	for line := range strings.Lines(irishText) {
		if line = strings.TrimSpace(line); line != "" && line[0] != '#' {
			names := strings.Split(line, "|")
			m[names[0]] = names[1:]
		}
	}
	return m
}()

// irishKeys maps the folded key of an Irish name to the folded English
// one. Names shared by a town and its county ("Gaillimh") map to the one
// English key that both bear.
var irishKeys = func() map[string]string {
	m := make(map[string]string, 2*len(irishPlaceNames))
	for en, names := range irishPlaceNames {
		for _, n := range names {
			m[Fold(n)] = Fold(en)
		}
	}
	return m
}()
