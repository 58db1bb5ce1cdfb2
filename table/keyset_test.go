package table

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"
)

// fakePages pages ids 1..n; the pages listed in lose fail with ErrConnLost
// as many times as given.
type fakePages struct {
	n, limit int
	lose     map[int]int // page number (from 1) -> failures left
	calls    int
	pages    int
}

func (f *fakePages) Page(ctx context.Context, after any) (Page, error) {
	f.calls++
	page := f.pages + 1
	if f.lose[page] > 0 {
		f.lose[page]--
		return Page{}, fmt.Errorf("%w: terminating connection due to administrator command", ErrConnLost)
	}
	f.pages++
	from, limit := 1, f.limit
	if after != nil {
		from, limit = after.(int), f.limit+1
	}
	p := Page{Columns: []Column{{Name: "id", Type: Integer}}}
	for id := from; id <= f.n && len(p.Rows) < limit; id++ {
		order := 1
		if after != nil && id == from {
			order = 0
		}
		p.Rows = append(p.Rows, []string{strconv.Itoa(id)})
		p.Order = append(p.Order, order)
		p.Last = id
	}
	return p, nil
}

func (f *fakePages) Close() error { return nil }

type fakePager struct{ *fakePages }

func (p fakePager) Pages(context.Context, PageQuery) (PageReader, error) { return p.fakePages, nil }

// pagingDB is a Database that only pages, its ids indexed.
type pagingDB struct {
	Database
	fakePager
}

func (pagingDB) UniqueKey(context.Context, Name, string) (bool, error) { return true, nil }

func readIDs(ctx context.Context, f *fakePages, retry Retry) ([]string, error) {
	src, err := OpenTable(ctx, pagingDB{fakePager: fakePager{f}}, Name{Table: "t"}, "", "t",
		SourceOptions{Key: "id", PageRows: f.limit, Retry: retry, Logger: zerolog.Nop()})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	var ids []string
	for {
		r, err := src.Next(ctx)
		if errors.Is(err, io.EOF) {
			return ids, nil
		}
		if err != nil {
			return ids, err
		}
		ids = append(ids, r.ID)
	}
}

// TestRetry: a lost connection is tried again after waits that double, as
// many times as Retry allows in a row, and reading goes on after the last
// id read; past that, the error says how often it was tried; a cancel
// during a wait ends it at once.
func TestRetry(t *testing.T) {
	retry := Retry{Attempts: 3, Wait: time.Second}
	for _, c := range []struct {
		name    string
		lose    map[int]int
		wantErr error
		elapsed time.Duration
		calls   int
	}{
		{"no loss", nil, nil, 0, 4},
		{"first page lost once", map[int]int{1: 1}, nil, time.Second, 5},
		{"third page lost three times", map[int]int{3: 3}, nil, 7 * time.Second, 7},
		{"each page lost twice", map[int]int{1: 2, 2: 2, 3: 2, 4: 2}, nil, 12 * time.Second, 12},
		{"lost four times", map[int]int{2: 4}, ErrConnLost, 7 * time.Second, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakePages{n: 10, limit: 3, lose: c.lose}
				start := time.Now()
				ids, err := readIDs(t.Context(), f, retry)
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("error %v, want %v", err, c.wantErr)
				}
				if c.wantErr == nil && fmt.Sprint(ids) != "[1 2 3 4 5 6 7 8 9 10]" {
					t.Fatalf("ids %v", ids)
				}
				if c.wantErr != nil && (len(ids) != 3 || !strings.Contains(err.Error(), "tried again 3 times")) {
					t.Fatalf("ids %v, %v", ids, err)
				}
				if got := time.Since(start); got != c.elapsed {
					t.Errorf("took %v, want %v", got, c.elapsed)
				}
				if f.calls != c.calls {
					t.Errorf("%d calls, want %d", f.calls, c.calls)
				}
			})
		})
	}

	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		f := &fakePages{n: 10, limit: 3, lose: map[int]int{2: 5}}
		time.AfterFunc(1500*time.Millisecond, cancel) // Ctrl-C during the second wait
		start := time.Now()
		_, err := readIDs(ctx, f, retry)
		if !errors.Is(err, context.Canceled) || time.Since(start) != 1500*time.Millisecond {
			t.Fatalf("%v after %v, want context.Canceled after 1.5s", err, time.Since(start))
		}
	})
}
