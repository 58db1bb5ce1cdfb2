package pipeline

import (
	"container/list"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/addrclean/addrclean/api"
)

// dedupKey is the identity of an address within a run: every field lower
// cased with runs of white space folded to one space and the ends trimmed.
// Fields are length-prefixed so that no choice of text can make two
// different addresses collide.
func dedupKey(a api.Address) string {
	var b strings.Builder
	b.Grow(64)
	b.WriteString(strconv.Itoa(len(a.Lines)))
	b.WriteByte('|')
	for _, l := range a.Lines {
		writeField(&b, l)
	}
	writeField(&b, a.City)
	writeField(&b, a.Region)
	writeField(&b, a.Country)
	writeField(&b, a.Language)
	return b.String()
}

func writeField(b *strings.Builder, s string) {
	n := normalise(s)
	b.WriteString(strconv.Itoa(len(n)))
	b.WriteByte(':')
	b.WriteString(n)
}

// normalise lower-cases s and folds white space.
func normalise(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// verdict is the outcome of verifying one address.
type verdict struct {
	resp    *api.VerifyResponse
	reason  string // non-empty for an Error row
	kind    string // ErrKind of an Error row
	skipped bool   // not finished: the run stopped first
}

// cacheable reports whether later duplicates may reuse v: answers and
// refusals of the address itself, not failures that a later try might cure.
func (v verdict) cacheable() bool {
	return !v.skipped && (v.reason == "" || v.kind == ErrKindPermanent)
}

// flight is one address being verified; duplicates wait on done.
type flight struct {
	done chan struct{}
	v    verdict
}

// dedup shares verdicts between rows with the same address: concurrent
// duplicates wait for the first call (single flight), later ones reuse it
// from a bounded LRU.
type dedup struct {
	mu       sync.Mutex
	inflight map[string]*flight
	size     int
	lru      *list.List // of *cached, most recent first
	index    map[string]*list.Element
}

type cached struct {
	key string
	v   verdict
}

func newDedup(size int) *dedup {
	if size < 0 {
		size = 0
	}
	return &dedup{
		inflight: make(map[string]*flight),
		size:     size,
		lru:      list.New(),
		index:    make(map[string]*list.Element),
	}
}

// role says what a row must do about its address.
type role int

const (
	roleLeader   role = iota // call the service, then finish
	roleFollower             // wait for the leader's flight
	roleHit                  // reuse the cached verdict
)

// acquire looks key up. A leader must call finish exactly once.
func (d *dedup) acquire(key string) (role, *flight, verdict) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if el, ok := d.index[key]; ok {
		d.lru.MoveToFront(el)
		return roleHit, nil, el.Value.(*cached).v
	}
	if f, ok := d.inflight[key]; ok {
		return roleFollower, f, verdict{}
	}
	f := &flight{done: make(chan struct{})}
	d.inflight[key] = f
	return roleLeader, f, verdict{}
}

// finish publishes the leader's verdict to its followers and the cache.
func (d *dedup) finish(key string, f *flight, v verdict) {
	d.mu.Lock()
	delete(d.inflight, key)
	if d.size > 0 && v.cacheable() {
		if el, ok := d.index[key]; ok {
			el.Value.(*cached).v = v
			d.lru.MoveToFront(el)
		} else {
			d.index[key] = d.lru.PushFront(&cached{key: key, v: v})
			if d.lru.Len() > d.size {
				old := d.lru.Back()
				d.lru.Remove(old)
				delete(d.index, old.Value.(*cached).key)
			}
		}
	}
	d.mu.Unlock()
	f.v = v
	close(f.done)
}
