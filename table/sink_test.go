package table

import (
	"context"
	"strconv"
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
	if f.batches != nil { // nil: a benchmark's, which drops them
		f.batches <- append([]Record(nil), recs...)
	}
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

// BenchmarkSinkWrite is the table sink's own cost per row, the database
// left out (the batches are dropped): the typed values of an enriched or
// review row, batching and hand-over. allocs/op is per row.
func BenchmarkSinkWrite(b *testing.B) {
	resp := &api.VerifyResponse{Action: api.ActionSuggest,
		Form: api.Form{Message: api.Message{Value: "corrected"}},
		Information: api.Information{Status: api.StatusCorrected, MatchLevel: api.LevelStreet,
			Complete: true, CityAmended: true, PostcodeAmended: true},
		Address: api.MatchedAddress{ID: "IE-1", City: &api.Value{Value: "Dublin"}, Postcode: &api.Value{Value: "D02 X285"},
			Country: &api.Country{Value: "Ireland", ISO: "IE"}, Label: []string{"12 Main Street", "Dublin 2"},
			Lines: []api.Line{{Value: "12 Main Street"}, {Value: "Dublin 2"}}},
		Data: api.Data{Location: &api.Location{Latitude: 53.3498, Longitude: -6.2603, Accuracy: "STREET"}},
	}
	for _, kind := range []struct {
		name string
		kind Kind
	}{{"enriched", Enriched}, {"review", Review}} {
		b.Run(kind.name, func(b *testing.B) {
			s, err := NewSink(context.Background(), &fakeDB{}, Name{Table: "av"}, "av", SinkOptions{
				Kind: kind.kind, Key: "id", KeyIndex: 0, RunTime: time.Now(),
			})
			if err != nil {
				b.Fatal(err)
			}
			r := writers.Result{Cells: []string{"", "12 Main St", "Dublin"}, Response: resp, InputLabel: "12 Main St, Dublin"}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				r.Row, r.Cells[0] = i+1, strconv.Itoa(i)
				if err := s.Write(context.Background(), r); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
