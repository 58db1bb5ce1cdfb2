package gazetteer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/addrclean/addrclean/countries"
)

// Index is a loaded reference: the records, their matching keys and the
// blocking tables. It is read-only after Load, so Match is safe for
// concurrent use.
type Index struct {
	recs  chunks[Record] // by record number: rec(n)
	nRecs int
	keys  []recKey
	arena []uint32 // word ids of all records, one run per record
	byID  map[string]uint32

	// numIDs numbers the folded house numbers and sub-building keys, so
	// candidates compare integers rather than strings.
	numIDs map[string]uint32

	vocab   map[string]uint32 // token → id
	words   []string          // id → token
	idf     []float32
	isType  []bool              // id → the word is a street type (streetTypes)
	isBlock []bool              // id → the word is a block of a building ("blk1")
	deletes map[string][]uint32 // one-deletion variants → token ids (typo tolerance)

	// postings maps (area, token) to the records having that token in their
	// street, building name, locality or organisation; area 0 is the whole
	// country set, the others towns, counties and postcode areas.
	postings   map[uint64][]uint32
	byPostcode map[string][]uint32 // compact canonical postcode → records

	areaIDs map[string]uint32 // "t:ennis", "c:clare", "p:V95"
	areas   []area
	towns   map[string][]uint32 // folded town name → town area ids
	regions map[string][]uint32 // folded county/region name → region area ids
	maxIDF  float32
}

// recKey is the matching key of one record: token ids by element, folded
// numbers, and the areas it belongs to.
type recKey struct {
	off     uint32 // the record's words in Index.arena: street, name, locality, organisation
	nToks   uint8
	nStreet uint8
	nName   uint8
	nLoc    uint8
	num     uint32 // folded building number (or PO Box number), as an id in Index.numIDs; 0 for none
	sub     uint32 // folded sub-building key, likewise
	town    uint32
	region  uint32 // 0: the record has no county
	pcArea  uint32
	// country is the record's country packed (packCountry), 0 when it
	// does not pack; pcHash is postcodeHash of its postcode.
	country uint16
	nDept   uint8 // the last words are the department's (after the organisation's)
	pcHash  uint32
}

// packCountry packs a two-byte country code into an integer that no other
// string packs to, and that is not 0; ok is false for other strings.
func packCountry(s string) (uint16, bool) {
	if len(s) != 2 || s == "\x00\x00" {
		return 0, false
	}
	return uint16(s[0])<<8 | uint16(s[1]), true
}

// postcodeHash is a hash of a postcode (FNV-1a), 0 only for the empty
// one: equal postcodes have equal hashes, so unequal hashes tell unequal
// postcodes apart without reading them.
func postcodeHash(pc string) uint32 {
	if pc == "" {
		return 0
	}
	h := uint32(2166136261)
	for i := 0; i < len(pc); i++ {
		h ^= uint32(pc[i])
		h *= 16777619
	}
	return max(h, 1)
}

// toksOf returns a record's word ids.
func (ix *Index) toksOf(k *recKey) []uint32 { return ix.arena[k.off : k.off+uint32(k.nToks)] }

// area is a town, county/region or postcode area with its display names and
// the centroid of its records.
type area struct {
	kind    byte // 't', 'c', 'p'
	name    string
	fkey    string   // folded name
	toks    []uint32 // words of the name
	region  string
	country string
	lat     float64
	lon     float64
	n       int
	nLoc    int
	first   uint32 // the first record in the area
}

type builder struct {
	ix   *Index
	toks []uint32
	// The keys are collected in chunks and put in ix.keys once, by
	// finish: growing a large slice by append copies it about five times
	// over.
	keys chunks[recKey]
	// areaOf caches area by its arguments as given (the id does not
	// depend on the region, which only the first call stores): most
	// records repeat a town, county and postcode area already seen, and
	// folding the name and making the key cost several allocations.
	areaOf map[areaArgs]uint32
	// lists is where the first element of a new posting list goes: most
	// postcodes have one record, and a list of its own each was one
	// allocation per record.
	lists []uint32
}

type areaArgs struct {
	kind          byte
	name, country string
}

// chunks holds a sequence in chunks of chunkLen, never copying one once
// it is full: a slice of records grown by append was copied about five
// times over, which was most of the time of a large Load, and the copies
// of pointer-laden records stall the garbage collector. Element n is
// c[n>>chunkShift][n&(chunkLen-1)].
type chunks[T any] [][]T

const (
	chunkShift = 12
	chunkLen   = 1 << chunkShift
)

// rec returns record n.
func (ix *Index) rec(n uint32) *Record { return &ix.recs[n>>chunkShift][n&(chunkLen-1)] }

func (c *chunks[T]) add(v T) {
	k := len(*c)
	if k == 0 || len((*c)[k-1]) == chunkLen {
		size := chunkLen
		if k == 0 {
			size = 64 // the first chunk grows, for small references
		}
		*c = append(*c, make([]T, 0, size))
		k++
	}
	(*c)[k-1] = append((*c)[k-1], v)
}

// trim gives the last chunk its exact length.
func (c chunks[T]) trim() {
	if k := len(c); k > 0 {
		c[k-1] = slices.Clone(c[k-1])
	}
}

func newBuilder() *builder {
	ix := &Index{
		byID:       make(map[string]uint32),
		vocab:      make(map[string]uint32),
		postings:   make(map[uint64][]uint32),
		byPostcode: make(map[string][]uint32),
		areaIDs:    map[string]uint32{"": 0},
		numIDs:     map[string]uint32{"": 0},
		areas:      []area{{}},
		towns:      make(map[string][]uint32),
		regions:    make(map[string][]uint32),
		deletes:    make(map[string][]uint32),
	}
	return &builder{ix: ix}
}

// errDuplicateID is a reference row whose id was already used.
var errDuplicateID = errors.New("duplicate id")

func (b *builder) token(w string) uint32 {
	ix := b.ix
	id, ok := ix.vocab[w]
	if !ok {
		// w is a substring of a folded line (appendTokens): a copy of its
		// own keeps the index from holding the rest.
		w = strings.Clone(w)
		id = uint32(len(ix.words))
		ix.vocab[w] = id
		ix.words = append(ix.words, w)
		ix.idf = append(ix.idf, 0)
	}
	return id
}

// cachedArea is area for a town or county name ('t', 'c'), folded into
// its key, or a postcode area ('p'), its own key, through b.areaOf.
func (b *builder) cachedArea(kind byte, name, region, country string) uint32 {
	args := areaArgs{kind, name, country}
	if id, ok := b.areaOf[args]; ok {
		return id
	}
	key := name
	if kind != 'p' {
		key = Fold(name)
	}
	id := b.area(kind, key, name, region, country)
	if b.areaOf == nil {
		b.areaOf = make(map[areaArgs]uint32)
	}
	b.areaOf[args] = id
	return id
}

// appendList is append(l, n) for a posting list, starting new lists in
// a shared array.
func (b *builder) appendList(l []uint32, n uint32) []uint32 {
	if l != nil {
		return append(l, n)
	}
	if len(b.lists) == cap(b.lists) {
		b.lists = make([]uint32, 0, 4096)
	}
	b.lists = append(b.lists, n)
	return b.lists[len(b.lists)-1 : len(b.lists) : len(b.lists)]
}

func (b *builder) area(kind byte, key, name, region, country string) uint32 {
	ix := b.ix
	k := string(kind) + ":" + country + ":" + key
	id, ok := ix.areaIDs[k]
	if !ok {
		id = uint32(len(ix.areas))
		ix.areaIDs[k] = id
		a := area{kind: kind, name: name, fkey: key, region: region, country: country}
		for _, w := range Tokens(name) {
			a.toks = append(a.toks, b.token(w))
		}
		ix.areas = append(ix.areas, a)
		switch kind {
		case 't':
			ix.towns[key] = append(ix.towns[key], id)
		case 'c':
			ix.regions[key] = append(ix.regions[key], id)
		}
	}
	return id
}

// recWords are the words of a record that add looks up, made from the
// record alone (split), so that Load can make them on another goroutine.
type recWords struct {
	// words are the street's words but its numbers, then the building
	// name's, the locality's and the organisation's; street, name and
	// loc count the first three.
	words             []string
	street, name, loc int
	dept              int // the department's words, last
	// num is the folded building number, sub the subKey of the
	// sub-building, postcode the postcode without spaces.
	num, sub, postcode string
}

// split fills w from r, its words appended to arena (returned), where
// they stay.
func (w *recWords) split(r *Record, arena []string) []string {
	var tmp [32]string
	start := len(arena)
	words := arena
	num := ""
	// The street the number belongs to identifies the address: the
	// dependent street when there is one, its street then telling
	// where it is, as a locality does.
	street, outer := r.Street, ""
	if r.DependentStreet != "" {
		street, outer = r.DependentStreet, r.Street
	}
	if street == "" && r.POBox != "" {
		street = "PO Box " + r.POBox
	}
	for _, t := range appendTokens(tmp[:0], street) {
		if isNumberToken(t) {
			if num == "" && r.BuildingNumber == "" {
				num = t
			}
			continue
		}
		words = append(words, t)
	}
	w.street = len(words) - start
	nameFrom := len(words)
	words = appendTokens(words, r.BuildingName)
	nameSub := ""
	if r.SubBuilding == "" && r.BuildingNumber == "" && num == "" {
		// PAF writes some flats in the building name, "Flat 10 Hurst",
		// "House 3 Whitefields": the number is the flat's, as if
		// written in sub_building, and "Flat" is no word of the name.
		words, nameSub = nameUnit(words, nameFrom)
	}
	w.name = len(words) - start - w.street
	words = appendTokens(words, outer)
	words = appendTokens(words, r.DoubleDependentLocality)
	words = appendTokens(words, r.Locality)
	w.loc = len(words) - start - w.street - w.name
	words = appendTokens(words, r.Organisation)
	n := len(words)
	words = appendTokens(words, r.Department)
	w.dept = len(words) - n
	w.words = words[start:len(words):len(words)]
	if r.BuildingNumber != "" {
		num = strings.Join(appendTokens(tmp[:0], r.BuildingNumber), "")
	}
	w.num = num
	w.sub = subKey(appendTokens(tmp[:0], r.SubBuilding))
	if nameSub != "" {
		w.sub = nameSub
	}
	w.postcode = ""
	if r.Postcode != "" {
		w.postcode = strings.ReplaceAll(r.Postcode, " ", "")
	}
	return words
}

// add indexes r, whose words are w.
func (b *builder) add(r *Record, w *recWords) error {
	ix := b.ix
	if _, dup := ix.byID[r.ID]; dup {
		return fmt.Errorf("%w %q", errDuplicateID, r.ID)
	}
	if ix.nRecs >= math.MaxUint32-1 {
		return errors.New("too many records")
	}
	n := uint32(ix.nRecs)
	ix.byID[r.ID] = n
	var k recKey
	toks := b.toks[:0]
	for _, t := range w.words {
		toks = append(toks, b.token(t))
	}
	// Counts as they were when each element's words were added in turn.
	k.nStreet = uint8(min(w.street, 255))
	k.nName = uint8(min(w.street+w.name-int(k.nStreet), 255))
	k.nLoc = uint8(min(w.street+w.name+w.loc-int(k.nStreet)-int(k.nName), 255))
	k.country, _ = packCountry(r.Country)
	k.pcHash = postcodeHash(r.Postcode)
	k.num = b.numID(w.num)
	k.sub = b.numID(w.sub)
	if len(toks) > 255 {
		toks = toks[:255]
	}
	k.nDept = uint8(min(w.dept, len(toks)-int(k.nStreet)-int(k.nName)-int(k.nLoc), 255))
	k.off, k.nToks = uint32(len(ix.arena)), uint8(len(toks))
	ix.arena = append(ix.arena, toks...)
	b.toks = toks
	k.town = b.cachedArea('t', r.City, r.Region, r.Country)
	if r.Region != "" {
		k.region = b.cachedArea('c', r.Region, "", r.Country)
	}
	if r.Postcode != "" {
		if pa := PostcodeArea(r.Postcode); pa != "" {
			k.pcArea = b.cachedArea('p', pa, "", countries.Postal(r.Country))
		}
		ix.byPostcode[w.postcode] = b.appendList(ix.byPostcode[w.postcode], n)
	}
	if r.HasLocation {
		for _, a := range [...]uint32{k.town, k.region, k.pcArea} {
			if a != 0 {
				ar := &ix.areas[a]
				ar.lat += r.Latitude
				ar.lon += r.Longitude
				ar.nLoc++
			}
		}
	}
	for _, a := range [...]uint32{k.town, k.region, k.pcArea} {
		if a != 0 {
			if ix.areas[a].n == 0 {
				ix.areas[a].first = n
			}
			ix.areas[a].n++
		}
	}
	// Each distinct token is posted once per area it is found in.
	areas := [...]uint32{0, k.town, k.region, k.pcArea}
	for i, t := range toks {
		if slices.Contains(toks[:i], t) {
			continue
		}
		ix.idf[t]++ // document frequency for now; finish turns it into idf
		for j, a := range areas {
			if (a == 0 && j > 0) || slices.Contains(areas[:j], a) {
				continue
			}
			key := uint64(a)<<32 | uint64(t)
			ix.postings[key] = append(ix.postings[key], n)
		}
	}
	ix.recs.add(*r)
	ix.nRecs++
	b.keys.add(k)
	return nil
}

// numID returns the id of a folded number or sub-building key.
func (b *builder) numID(s string) uint32 {
	id, ok := b.ix.numIDs[s]
	if !ok {
		id = uint32(len(b.ix.numIDs))
		b.ix.numIDs[strings.Clone(s)] = id // s may be a substring of a folded line
	}
	return id
}

// nameUnit takes the one number of a building name (words[from:]) out
// of its words, with a unit word before it, and returns it as the
// record's sub-building key; with no number, or several, words stay.
func nameUnit(words []string, from int) ([]string, string) {
	at := -1
	for i := from; i < len(words); i++ {
		if isNumberToken(words[i]) {
			if at >= 0 {
				return words, ""
			}
			at = i
		}
	}
	if at < 0 {
		return words, ""
	}
	sub := words[at]
	cut := at
	if at > from && words[at-1] == "flat" {
		cut = at - 1
	}
	return append(words[:cut], words[at+1:]...), sub
}

// subKey reduces a sub-building to what identifies it: its numbers ("Flat
// 2B" → "2b"), or its words when it has none ("Ground Floor").
func subKey(toks []string) string {
	var nums []string
	for _, t := range toks {
		if isNumberToken(t) {
			nums = append(nums, t)
		}
	}
	if len(nums) > 0 {
		return strings.Join(nums, " ")
	}
	var words []string
	for _, t := range toks {
		if t != "flat" {
			words = append(words, t)
		}
	}
	return strings.Join(words, " ")
}

// finish turns document frequencies into IDF weights, builds the typo
// table and averages the area centroids; it stops when ctx is done.
func (b *builder) finish(ctx context.Context) (*Index, error) {
	ix := b.ix
	ix.keys = slices.Concat(b.keys...)
	b.keys = nil
	ix.recs.trim()
	N := float64(ix.nRecs) + 1
	ix.maxIDF = float32(math.Log(1 + N))
	for i, df := range ix.idf {
		if df < 1 {
			// Only in town names: rare as a street word, but not unknown.
			df = 1
		}
		ix.idf[i] = float32(math.Log(1 + N/float64(df)))
	}
	ix.isType = make([]bool, len(ix.words))
	ix.isBlock = make([]bool, len(ix.words))
	for id, w := range ix.words {
		ix.isType[id] = streetTypes[w]
		ix.isBlock[id] = len(w) > 3 && strings.HasPrefix(w, "blk")
	}
	for id, w := range ix.words {
		if id&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("reference: %w", err)
			}
		}
		// Only words a typo search can reach get variants: qtok searches
		// words of at most maxTypoWord bytes, which are one deletion of
		// a word one byte longer, or of a word of their own length. A
		// longer word would cost one copy of itself per byte, memory in
		// the square of its length, and never be found through them.
		if len(w) < 4 || len(w) > maxTypoWord+1 || isNumberToken(w) {
			continue
		}
		for i := 0; i < len(w); i++ {
			d := w[:i] + w[i+1:]
			ix.deletes[d] = append(ix.deletes[d], uint32(id))
		}
	}
	for i := range ix.areas {
		a := &ix.areas[i]
		if a.nLoc > 0 {
			a.lat /= float64(a.nLoc)
			a.lon /= float64(a.nLoc)
		}
	}
	return ix, nil
}

// Len returns the number of reference records.
func (ix *Index) Len() int { return ix.nRecs }

// Lookup returns the record with the given id.
func (ix *Index) Lookup(id string) (*Record, bool) {
	n, ok := ix.byID[id]
	if !ok {
		return nil, false
	}
	return ix.rec(n), true
}

// Records calls yield for every record in file order until it returns false.
func (ix *Index) Records(yield func(*Record) bool) {
	for _, c := range ix.recs {
		for i := range c {
			if !yield(&c[i]) {
				return
			}
		}
	}
}

// numberStreet is the street the building number belongs to: the
// dependent street when there is one.
func (r *Record) numberStreet() string {
	if r.DependentStreet != "" {
		return r.DependentStreet
	}
	return r.Street
}

// Lines returns the address lines of a record as they are printed:
// organisation, department, sub-building, building name, PO Box, number
// and dependent street, (number and) street, double dependent locality,
// locality: Royal Mail's order.
func (r *Record) Lines() []string {
	lines := make([]string, 0, 5)
	for _, l := range [...]string{r.Organisation, r.Department, r.SubBuilding, r.BuildingName} {
		if l != "" {
			lines = append(lines, l)
		}
	}
	if r.POBox != "" {
		lines = append(lines, "PO Box "+r.POBox)
	}
	street := r.Street
	if r.DependentStreet != "" {
		if r.BuildingNumber != "" {
			lines = append(lines, r.BuildingNumber+" "+r.DependentStreet)
		} else {
			lines = append(lines, r.DependentStreet)
		}
	} else if r.BuildingNumber != "" {
		street = strings.TrimSpace(r.BuildingNumber + " " + r.Street)
	}
	for _, l := range [...]string{street, r.DoubleDependentLocality, r.Locality} {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}
