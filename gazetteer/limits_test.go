package gazetteer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/addrclean/addrclean/internal/hostile"
)

// limitsHeader is the header of the references of these tests, with a
// column Load ignores.
var limitsHeader = strings.Join(Columns, ",") + ",notes\n"

// limitsRow is a reference row with the given street, locality and notes.
func limitsRow(id, street, locality, notes string) string {
	return fmt.Sprintf("%s,,,,1,%s,%s,Ennis,Clare,,IE,,,,%s\n", id, street, locality, notes)
}

// allocated returns the bytes allocated while f runs.
func allocated(f func()) uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	f()
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc - before
}

// TestLoadHostileShapes loads the shapes of issue 25: each is refused
// naming its line, and costs a bounded amount of memory, whatever its
// size. On the code before the limits the 30,000-letter word took about
// 1 GB, 60,000 letters ran out of memory, and the long row was read whole.
func TestLoadHostileShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 3))
	ok := limitsRow("IE1", "Main Street", "", "")
	overRow := limitsRow("IE2", "Main Street", "", strings.Repeat("x", MaxRowBytes))
	for _, tc := range []struct {
		name string
		in   io.Reader
		msg  string // after "line N: "
		line int
	}{
		{"30,000-letter word in a street", strings.NewReader(limitsHeader + ok + limitsRow("IE2", hostile.Word(rng, 30000)+" Street", "", "")),
			"column street: 30007 bytes, over the limit of 1024", 3},
		{"60 KB word", strings.NewReader(limitsHeader + ok + limitsRow("IE2", "Main Street", hostile.Word(rng, 60000), "")),
			"column locality: 60000 bytes, over the limit of 1024", 3},
		{"one repeated character", strings.NewReader(limitsHeader + ok + limitsRow("IE2", strings.Repeat("a", 30000), "", "")),
			"column street: 30000 bytes, over the limit of 1024", 3},
		{"word over the limit in a short cell", strings.NewReader(limitsHeader + ok + limitsRow("IE2", hostile.Word(rng, 300), "", "")),
			"column street: a word of 300 bytes, over the limit of 256", 3},
		{"one line of 300 MB", hostile.NewStream(limitsHeader+ok+"IE2,,,,1,", "word ", 300<<20),
			"a row over 65536 bytes, the limit", 3},
		{"row over the limit in an ignored column", strings.NewReader(limitsHeader + ok + overRow),
			fmt.Sprintf("a row of %d bytes, over the limit of %d", len(overRow), MaxRowBytes), 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			alloc := allocated(func() { _, err = Load(context.Background(), tc.in) })
			want := fmt.Sprintf("reference: 1 bad row(s); line %d: %s", tc.line, tc.msg)
			if err == nil || err.Error() != want {
				t.Fatalf("err = %.300v\nwant %s", err, want)
			}
			// The read buffer, the row being read (at most the limit and
			// one buffer) and the index of one row: a few hundred KB.
			if alloc > 2<<20 {
				t.Errorf("Load allocated %d bytes", alloc)
			}
			if hs, ok := tc.in.(*hostile.Stream); ok && hs.Done > MaxRowBytes+2*loadBuffer {
				t.Errorf("Load read %d bytes of the long row", hs.Done)
			}
		})
	}
}

// TestLoadAtTheLimits loads a row whose cell, word and row are each as long
// as the limits allow.
func TestLoadAtTheLimits(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 4))
	word := hostile.Word(rng, MaxWordBytes)
	street := word + strings.Repeat(" Street", (MaxFieldBytes-MaxWordBytes)/7)
	street += strings.Repeat("x", MaxFieldBytes-len(street))
	row := limitsRow("IE2", street, word, "")
	row = row[:len(row)-1] + strings.Repeat("n", MaxRowBytes-len(row)) + "\n"
	long := limitsRow("IE3", word+" Road", "", "")
	ix, err := Load(context.Background(), strings.NewReader(limitsHeader+row+long))
	if err != nil {
		t.Fatalf("%.300v", err)
	}
	if r, ok := ix.Lookup("IE2"); !ok || r.Street != street || r.Locality != word {
		t.Fatalf("IE2 = %.200v, %v", r, ok)
	}
	m := ix.Match(Query{Lines: []string{"1 " + word + " Road"}, City: "Ennis", Country: "IE"})
	if m.Record == nil || m.Record.ID != "IE3" {
		t.Errorf("a long word is not matched exactly: %+v", m.Record)
	}
}

// TestIndexLinearInWords checks that the typo table grows with the
// number of words, not with the square of their length: no variant is
// longer than the longest word a typo search reaches. Before, each word
// of a reference of long words kept one copy of itself per letter.
func TestIndexLinearInWords(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 5))
	var b strings.Builder
	b.WriteString(limitsHeader)
	for i := range 500 {
		b.WriteString(limitsRow(fmt.Sprint("IE", i), hostile.Word(rng, MaxWordBytes)+" Road", hostile.Word(rng, 8), ""))
	}
	var ix *Index
	var err error
	alloc := allocated(func() { ix, err = Load(context.Background(), strings.NewReader(b.String())) })
	if err != nil {
		t.Fatal(err)
	}
	keyBytes := 0
	for d := range ix.deletes {
		if len(d) > maxTypoWord {
			t.Fatalf("a variant of %d bytes: no query word reaches it", len(d))
		}
		keyBytes += len(d)
	}
	if limit := len(ix.words) * maxTypoWord * (maxTypoWord + 1); keyBytes > limit {
		t.Errorf("variants hold %d bytes for %d words", keyBytes, len(ix.words))
	}
	// 500 words of 256 letters were 32 MB of variants; now the
	// allocations are a small multiple of the file.
	if size := uint64(b.Len()); alloc > 40*size {
		t.Errorf("Load allocated %d bytes for a %d-byte file", alloc, size)
	}
}

// TestLoadCancelledWhileReading cancels a load whose input stops coming
// (a pipe, a slow disk): Load returns context.Canceled at once, without
// waiting for the input.
func TestLoadCancelledWhileReading(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() {
			_, err := Load(ctx, pr)
			done <- err
		}()
		if _, err := io.WriteString(pw, limitsHeader+limitsRow("IE1", "Main Street", "", "")); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the row read, Load waits for more
		cancel()
		synctest.Wait()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
		default:
			t.Error("Load did not return when its context was cancelled")
		}
		pw.CloseWithError(errors.New("test over")) // ends the reading goroutine
		if t.Failed() {
			<-done
		}
		synctest.Wait()
	})
}

// cancelAtEOF is a reader that cancels a context when it reaches its end.
type cancelAtEOF struct {
	io.Reader
	cancel context.CancelFunc
}

func (r cancelAtEOF) Read(p []byte) (int, error) {
	n, err := r.Reader.Read(p)
	if err == io.EOF {
		r.cancel()
	}
	return n, err
}

// TestLoadCancelledAfterReading cancels a load once its input is read,
// while the last rows are indexed and the typo table is built: Load
// returns context.Canceled, not an index. Before, only the reading
// looked at the context, every 4,096 rows.
func TestLoadCancelledAfterReading(t *testing.T) {
	var b strings.Builder
	b.WriteString(limitsHeader)
	for i := range 300 {
		b.WriteString(limitsRow(fmt.Sprint("IE", i), fmt.Sprintf("Street %d", i), "", ""))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ix, err := Load(ctx, cancelAtEOF{strings.NewReader(b.String()), cancel})
	if !errors.Is(err, context.Canceled) || ix != nil {
		t.Fatalf("Load = %v, %v; want context.Canceled", ix != nil, err)
	}
}
