package table

import (
	"context"
	"testing"
	"time"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/writers"
)

// fakeDB records the batches a sink writes.
type fakeDB struct {
	Database
	batches [][]Record
	dels    [][]string
}

func (f *fakeDB) Target(context.Context, Name, string, Type, []Column) (Target, error) { return f, nil }
func (f *fakeDB) Write(_ context.Context, recs []Record, del []string) error {
	f.batches = append(f.batches, append([]Record(nil), recs...))
	f.dels = append(f.dels, append([]string(nil), del...))
	return nil
}
func (f *fakeDB) CountAt(context.Context, string, time.Time) (int64, error) { return 0, nil }
func (f *fakeDB) Close() error                                              { return nil }

// TestSinkHoldsErrorsUntilAnswered proves that a run whose rows all fail
// (a service never reached) writes nothing by age: the table keeps the last
// run's rows, as a file output would be left in place.
func TestSinkHoldsErrorsUntilAnswered(t *testing.T) {
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	db := &fakeDB{}
	s, err := NewSink(context.Background(), db, Name{Table: "av"}, "av", SinkOptions{
		Key: "id", KeyIndex: 0, RunTime: now, BatchRows: 100, BatchAge: time.Second, Now: clock,
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		now = now.Add(time.Second)
		if err := s.Write(context.Background(), writers.Result{Row: i + 1, Cells: []string{string(rune('a' + i))}, Err: "unreachable"}); err != nil {
			t.Fatal(err)
		}
	}
	if len(db.batches) != 0 {
		t.Fatalf("%d batches of Error rows written by age before any answer", len(db.batches))
	}
	now = now.Add(time.Second)
	ok := writers.Result{Row: 6, Cells: []string{"f"}, Response: &api.VerifyResponse{Action: api.ActionAccept}}
	if err := s.Write(context.Background(), ok); err != nil {
		t.Fatal(err)
	}
	if len(db.batches) != 1 || len(db.batches[0]) != 6 {
		t.Fatalf("after an answer: batches %v, want one of 6 rows", db.batches)
	}
	if err := s.Abort(); err != nil {
		t.Fatal(err)
	}
}
