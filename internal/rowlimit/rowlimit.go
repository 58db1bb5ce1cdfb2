package rowlimit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// ErrTooLong is returned (wrapped in a *TooLongError) by Reader.Read once
// the row being read is longer than the limit.
var ErrTooLong = errors.New("row too long")

// TooLongError is a row longer than the limit; Line is the line of the
// input the reading stopped on (1-based, counting '\n'), a line of that
// row.
type TooLongError struct {
	Limit int64
	Line  int
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("line %d: a row longer than %d bytes, the limit", e.Line, e.Limit)
}

func (e *TooLongError) Unwrap() error { return ErrTooLong }

// Reader passes the bytes of r through until the row being read is more
// than Limit+Slack bytes long: the parser above says where each row ends
// with Mark. Slack is what the parser may read ahead of the end of a row
// (its buffer), so that a row of Limit bytes is always read whole; the
// parser checks the exact length of a whole row itself.
type Reader struct {
	r            io.Reader
	limit, slack int64
	n            int64 // bytes passed
	start        int64 // where the row being read starts
	lines        int   // '\n' passed
	err          error
}

// New returns a Reader of r for rows of at most limit bytes, read by a
// parser buffering at most slack bytes ahead.
func New(r io.Reader, limit, slack int64) *Reader {
	return &Reader{r: r, limit: limit, slack: slack}
}

// Mark says that a row starts at offset off of the stream (the parser's
// input offset after the row before it).
func (lr *Reader) Mark(off int64) { lr.start = off }

// Read implements io.Reader.
func (lr *Reader) Read(p []byte) (int, error) {
	if lr.err != nil {
		return 0, lr.err
	}
	room := lr.start + lr.limit + lr.slack - lr.n
	if room <= 0 {
		lr.err = &TooLongError{Limit: lr.limit, Line: lr.lines + 1}
		return 0, lr.err
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	n, err := lr.r.Read(p)
	lr.n += int64(n)
	lr.lines += bytes.Count(p[:n], []byte{'\n'})
	return n, err
}
