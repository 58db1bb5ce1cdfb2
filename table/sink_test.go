package table

import (
	"context"
	"testing"
	"testing/synctest"
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
//
// It runs in a synctest bubble, whose clock moves only when the test
// sleeps: the rows arrive a second apart, as old as a batch may get.
func TestSinkHoldsErrorsUntilAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := &fakeDB{batches: make(chan []Record, 10)}
		s, err := NewSink(context.Background(), db, Name{Table: "av"}, "av", SinkOptions{
			Key: "id", KeyIndex: 0, RunTime: time.Now(), BatchRows: 100, BatchAge: time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			time.Sleep(time.Second)
			if err := s.Write(context.Background(), writers.Result{Row: i + 1, Cells: []string{string(rune('a' + i))}, Err: "unreachable"}); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if s.inflight != nil || len(db.batches) != 0 {
			t.Fatal("a batch of Error rows was written by age before any answer")
		}
		time.Sleep(time.Second)
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
	})
}
