package table

import (
	"context"
	"testing"
	"time"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/writers"
)

// fakeDB hands over the batches a sink writes.
type fakeDB struct {
	Database
	batches chan []Record
}

func (f *fakeDB) Describe(context.Context, Name) (TableInfo, error) {
	return TableInfo{Priv: Privileges{Create: true}}, nil
}
func (f *fakeDB) Setup(context.Context, []Statement) error                       { return nil }
func (f *fakeDB) SQLType(Type) string                                            { return "" }
func (f *fakeDB) Target(context.Context, Name, string, []Column) (Target, error) { return f, nil }
func (f *fakeDB) Write(_ context.Context, recs []Record, del []string) (Counts, error) {
	f.batches <- append([]Record(nil), recs...)
	return Counts{}, nil
}
func (f *fakeDB) Close() error { return nil }

// TestSinkHoldsErrorsUntilAnswered proves that a run whose rows all fail
// (a service never reached) writes nothing by age: the table keeps the last
// run's rows, as a file output would be left in place.
func TestSinkHoldsErrorsUntilAnswered(t *testing.T) {
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	db := &fakeDB{batches: make(chan []Record, 10)}
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
	if s.inflight != nil || len(db.batches) != 0 {
		t.Fatal("a batch of Error rows was written by age before any answer")
	}
	now = now.Add(time.Second)
	ok := writers.Result{Row: 6, Cells: []string{"f"}, Response: &api.VerifyResponse{Action: api.ActionAccept}}
	if err := s.Write(context.Background(), ok); err != nil {
		t.Fatal(err)
	}
	if b := <-db.batches; len(b) != 6 {
		t.Fatalf("after an answer: a batch of %d rows, want 6", len(b))
	}
	if err := s.Abort(); err != nil {
		t.Fatal(err)
	}
}
