package rowlimit

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestReader reads lines through a Reader, marking each: lines within
// the limit pass, the first line over limit+slack stops the reading,
// named by its line.
func TestReader(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    string
		limit int64
		lines int // lines read whole
		err   int // line of the error; 0: none
	}{
		{"short lines", "ab\ncd\nef\n", 4, 3, 0},
		{"at the limit and slack", "abcdefg\nab\n", 4, 2, 0},
		{"over", "ab\nabcdefghijkl\nab\n", 4, 1, 2},
		{"first line over", strings.Repeat("x", 100), 4, 0, 1},
		{"no line end", "xxx", 4, 1, 0},
		{"no line end, over", strings.Repeat("x", 8), 4, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lr := New(strings.NewReader(tc.in), tc.limit, 4)
			// A buffer of the slack's size, as a parser's.
			br := bufio.NewReaderSize(lr, 16)
			off := int64(0)
			n := 0
			var err error
			for {
				var line []byte
				line, err = br.ReadSlice('\n')
				if errors.Is(err, bufio.ErrBufferFull) {
					t.Fatalf("line %d longer than the buffer", n+1)
				}
				if len(line) > 0 && err == nil || err == io.EOF && len(line) > 0 {
					n++
					off += int64(len(line))
					lr.Mark(off)
				}
				if err != nil {
					break
				}
			}
			if n != tc.lines {
				t.Errorf("%d lines read, want %d", n, tc.lines)
			}
			var te *TooLongError
			switch {
			case tc.err == 0 && err != io.EOF:
				t.Errorf("err = %v, want EOF", err)
			case tc.err != 0 && (!errors.As(err, &te) || !errors.Is(err, ErrTooLong) || te.Line != tc.err):
				t.Errorf("err = %v, want a TooLongError at line %d", err, tc.err)
			}
		})
	}
}
