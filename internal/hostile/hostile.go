package hostile

import (
	"io"
	"math/rand/v2"
)

// Word returns n random lower-case letters. Random, because a letter
// repeated hides costs that distinct words show: its deletion variants
// are all one string.
func Word(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + rng.IntN(26))
	}
	return string(b)
}

// Stream reads as Head then Fill repeated, N bytes in all, never held
// whole; Done counts the bytes read so far.
type Stream struct {
	Head, Fill string
	N          int64
	Done       int64
}

// NewStream returns a Stream of n bytes: head, then fill repeated.
func NewStream(head, fill string, n int64) *Stream {
	return &Stream{Head: head, Fill: fill, N: n}
}

// Read implements io.Reader.
func (s *Stream) Read(p []byte) (int, error) {
	if s.Done >= s.N {
		return 0, io.EOF
	}
	i := 0
	for ; i < len(p) && s.Done < s.N; i++ {
		if s.Done < int64(len(s.Head)) {
			p[i] = s.Head[s.Done]
		} else {
			p[i] = s.Fill[(s.Done-int64(len(s.Head)))%int64(len(s.Fill))]
		}
		s.Done++
	}
	return i, nil
}
