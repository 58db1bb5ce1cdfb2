package pipeline

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/addrclean/addrclean/api"
)

// ErrShardSpec marks a --shard value that is not I/N with 0 <= I < N.
var ErrShardSpec = errors.New("want I/N with N from 1 and I from 0 to N-1")

// Shard is one of N parts of an input (--shard I/N). Rows are assigned by
// the hash of their folded request, the key the run's deduplication uses,
// not by row number or id: rows whose requests are equal after folding case
// and white space land in the same part, so N runners over one input pay
// once per distinct request between them, and each part's duplicates are
// counted whole. The zero Shard (and any with N <= 1) is the whole input.
//
// The assignment is part of the command-line contract: a set of runners
// started by one release and resumed by another must agree on it, so the
// hash (64-bit FNV-1a of the key, the journal's) and its reduction to N
// parts (the high 64 bits of hash × N) never change.
type Shard struct {
	// I is the part, from 0 (Kubernetes' JOB_COMPLETION_INDEX counts from 0
	// too); N is how many parts there are.
	I, N int
}

// ParseShard reads "I/N".
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(strings.TrimSpace(s), "/")
	i, errI := strconv.Atoi(strings.TrimSpace(is))
	n, errN := strconv.Atoi(strings.TrimSpace(ns))
	if !ok || errI != nil || errN != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("%q: %w", s, ErrShardSpec)
	}
	return Shard{I: i, N: n}, nil
}

// Whole reports whether s is the whole input (no sharding).
func (s Shard) Whole() bool { return s.N <= 1 }

// String is "I/N", as --shard takes it; "" for the whole input.
func (s Shard) String() string {
	if s.Whole() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

// Has reports whether the row whose mapped address is a belongs to s. A row
// the mapper refuses is assigned by what it did map, like any other.
func (s Shard) Has(a api.Address) bool { return s.hasKey(dedupKey(a)) }

// hasKey is Has for a dedup key.
func (s Shard) hasKey(key string) bool {
	if s.Whole() {
		return true
	}
	// The high half of hash × N spreads the hash evenly over [0, N) using
	// all of its bits, where hash % N would lean on the low ones.
	part, _ := bits.Mul64(keyHash(key), uint64(s.N))
	return int(part) == s.I
}
