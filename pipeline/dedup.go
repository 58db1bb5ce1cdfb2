package pipeline

import (
	"container/list"
	"hash/fnv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/runstats"
)

// Separators of the fields of a dedup key, and the escape that keeps text
// holding them from imitating a boundary, so that no two different addresses
// share a key.
const (
	sepLine  = '\x00'
	sepField = '\x01'
	escape   = '\x02'
)

// dedupKey is the identity of an address within a run: every field lower
// cased with runs of white space folded to one space and the ends trimmed.
func dedupKey(a api.Address) string {
	n := len(a.City) + len(a.Region) + len(a.Country) + len(a.Language) + 4
	for _, l := range a.Lines {
		n += len(l) + 1
	}
	var b strings.Builder
	b.Grow(n)
	for _, l := range a.Lines {
		appendNormal(&b, l)
		b.WriteByte(sepLine)
	}
	for _, f := range [...]string{a.City, a.Region, a.Country, a.Language} {
		b.WriteByte(sepField)
		appendNormal(&b, f)
	}
	return b.String()
}

// keyHash is the 64-bit FNV-1a hash of a dedup key: the journal stores it to
// check that a record belongs to the same address.
func keyHash(key string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return h.Sum64()
}

// appendNormal writes s lower-cased, with runs of white space folded to one
// space and none at the ends, escaping the key separators.
func appendNormal(b *strings.Builder, s string) {
	wrote, space := false, false
	for i := 0; i < len(s); {
		c := s[i]
		var r rune
		if c < utf8.RuneSelf {
			r = rune(c)
			i++
		} else {
			var size int
			r, size = utf8.DecodeRuneInString(s[i:])
			i += size
		}
		if unicode.IsSpace(r) {
			space = wrote
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		wrote = true
		switch {
		case r == sepLine || r == sepField || r == escape:
			b.WriteByte(escape)
			b.WriteByte(byte(r))
		case r < utf8.RuneSelf:
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			b.WriteByte(byte(r))
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
}

// verdict is the outcome of verifying one address.
type verdict struct {
	resp    *api.VerifyResponse
	reason  string // non-empty for an Error row
	kind    string // runstats.ErrKind* of an Error row
	skipped bool   // not finished: the run stopped first
	// fromCache is true when the answer came from Config.Cache.
	fromCache bool
	// at is when the service gave the answer (writers.Result.VerifiedAt).
	at time.Time
	// answer is resp's JSON, when known: the service's body when it decodes
	// to resp unchanged (AnswerVerifier), the cache's stored bytes, or else
	// resp encoded once by api.AppendVerifyResponse; for the dedup's
	// spill, the journal and the cache. It is never changed once set.
	answer []byte
}

// cacheable reports whether later duplicates may reuse v: answers and
// refusals of the address itself, not failures that a later try might cure.
func (v verdict) cacheable() bool {
	return !v.skipped && (v.reason == "" || v.kind == runstats.ErrKindPermanent)
}

// flight is one address being verified; duplicates wait on done.
type flight struct {
	done     chan struct{}
	v        verdict
	finished bool // guarded by dedup.mu
}

// dedup shares verdicts between rows with the same address: concurrent
// duplicates wait for the first call (single flight), later ones reuse it.
// Flights, finished or not, are kept in one bounded LRU; a finished verdict
// that the LRU evicts goes to the spill on disk, so a duplicate reuses it
// however far apart the rows are (deduplication is a promise about money),
// while memory stays bounded by the LRU. acquire is called by the feeder in
// input order: which row leads and which rows reuse its verdict then
// depends on the input alone, not on which call finished first, so two runs
// over one file write the same outputs (case variants of an address share
// the verdict of the first of them).
type dedup struct {
	mu    sync.Mutex
	size  int        // finished verdicts kept in memory; <= 0: none, and no spill (flights are still shared)
	lru   *list.List // of *cached, most recent first
	index map[string]*list.Element
	spill *spill // nil when size <= 0
	err   error  // the first spill error met by finish, reported by the next acquire
}

type cached struct {
	key     string
	f       *flight
	spilled bool // the verdict is in the spill already
}

// newDedup keeps size verdicts in memory and the rest in a spill file in
// dir ("" is the system's temporary directory).
func newDedup(size int, dir string) *dedup {
	d := &dedup{size: size, lru: list.New(), index: make(map[string]*list.Element)}
	if size > 0 {
		d.spill = &spill{dir: dir}
	}
	return d
}

// role says what a row must do about its address.
type role int

const (
	roleLeader   role = iota // call the service, then finish
	roleFollower             // wait for the leader's flight
	roleHit                  // reuse the finished verdict
)

// acquire looks key up. A leader must call finish exactly once. An error
// means the spill failed: the run must stop rather than pay again.
func (d *dedup) acquire(key string) (role, *flight, verdict, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return 0, nil, verdict{}, d.err
	}
	if el, ok := d.index[key]; ok {
		d.lru.MoveToFront(el)
		f := el.Value.(*cached).f
		if f.finished {
			return roleHit, f, f.v, nil
		}
		return roleFollower, f, verdict{}, nil
	}
	if d.spill != nil {
		v, ok, err := d.spill.get(key)
		if err != nil {
			d.err = err
			return 0, nil, verdict{}, err
		}
		if ok {
			// Back in memory, so that a key that recurs often is not read
			// from disk each time; it is not written to the spill again.
			f := &flight{done: make(chan struct{}), v: v, finished: true}
			close(f.done)
			if err := d.insert(key, f, true); err != nil {
				return 0, nil, verdict{}, err
			}
			return roleHit, f, v, nil
		}
	}
	f := &flight{done: make(chan struct{})}
	if err := d.insert(key, f, false); err != nil {
		return 0, nil, verdict{}, err
	}
	return roleLeader, f, verdict{}, nil
}

// insert puts f, for a key not present, at the front, evicting the least
// recently used entries beyond size into the spill; a flight evicted while
// under way still serves the followers it has, and finish spills its
// verdict. d.mu is held.
func (d *dedup) insert(key string, f *flight, spilled bool) error {
	d.index[key] = d.lru.PushFront(&cached{key: key, f: f, spilled: spilled})
	for d.lru.Len() > max(d.size, 0) {
		old := d.lru.Back()
		c := old.Value.(*cached)
		if !c.f.finished && d.size <= 0 {
			break // with no room for verdicts, flights under way are still shared
		}
		d.lru.Remove(old)
		delete(d.index, c.key)
		if c.f.finished && !c.spilled && c.f.v.cacheable() && d.spill != nil {
			if err := d.spill.put(c.key, c.f.v); err != nil {
				d.err = err
				return err
			}
		}
	}
	return nil
}

// finish publishes the leader's verdict to its followers and, when later
// duplicates may reuse it, keeps it.
func (d *dedup) finish(key string, f *flight, v verdict) {
	d.mu.Lock()
	f.v = v
	f.finished = true
	el, ok := d.index[key]
	mine := ok && el.Value.(*cached).f == f
	switch {
	case mine && (!v.cacheable() || d.size <= 0):
		d.lru.Remove(el)
		delete(d.index, key)
	case !mine && v.cacheable() && d.spill != nil && d.err == nil:
		// Evicted while under way (a window larger than the LRU): the
		// verdict still goes where a later duplicate finds it.
		if err := d.spill.put(key, v); err != nil {
			d.err = err
		}
	}
	d.mu.Unlock()
	close(f.done)
}

func (d *dedup) close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.spill == nil {
		return nil
	}
	return d.spill.close()
}
