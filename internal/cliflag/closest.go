package cliflag

import (
	"flag"
	"slices"
	"strings"
)

// Closest returns the name in names nearest to name by edit distance (a
// swap of two neighbouring letters counting one), or "" when none is near
// enough to be what was meant: "rnu" gives "run".
func Closest(name string, names []string) string {
	name = strings.ToLower(name)
	best, bestD := "", max(1, len(name)/3)+1
	for _, n := range slices.Sorted(slices.Values(names)) {
		d := editDistance(name, n)
		if transposed(name, n) {
			d = 1
		}
		if d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// transposed reports whether a and b differ by one swap of neighbouring
// letters, the commonest typo ("rnu"); Levenshtein counts it as two.
func transposed(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:]
}

// closestFlag returns the flag of fs nearest to name by edit distance, or
// "" when none is near enough to be what was meant. Unlike Closest, a flag
// that name begins ("--count" for --country) is near enough at a distance
// that would otherwise be too far.
func closestFlag(fs *flag.FlagSet, name string) string {
	best, bestD := "", len(name)/2+2
	fs.VisitAll(func(f *flag.Flag) {
		if d := editDistance(name, f.Name); d < bestD || d == bestD && best != "" && f.Name < best {
			best, bestD = f.Name, d
		}
	})
	if bestD > max(1, len(name)/3) && !strings.HasPrefix(best, name) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance of a and b (flag and command
// names: short).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
