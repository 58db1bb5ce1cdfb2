package pipeline_test

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/pipeline"
	"github.com/addrclean/addrclean/ratelimit"
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/record"
	"github.com/addrclean/addrclean/runstats"
	"github.com/addrclean/addrclean/writers"
)

// lines is a readers.Reader over a few in-memory rows.
type lines struct{ rows []string }

func (l *lines) Header() []string { return []string{"address"} }
func (l *lines) Close() error     { return nil }
func (l *lines) Next(ctx context.Context) (record.Row, error) {
	if len(l.rows) == 0 {
		return record.Row{}, io.EOF
	}
	r := record.Row{Num: 4 - len(l.rows), Cells: []string{l.rows[0]}}
	l.rows = l.rows[1:]
	return r, nil
}

// echo is a Verifier that accepts every address.
type echo struct{}

func (echo) Verify(ctx context.Context, a api.Address) (*api.VerifyResponse, error) {
	return &api.VerifyResponse{Action: api.ActionAccept, Address: api.MatchedAddress{Label: a.Lines}}, nil
}

// firstCell is a Mapper that sends the first cell as an Irish address.
type firstCell struct{}

func (firstCell) Map(r record.Row) readers.Mapped {
	if strings.TrimSpace(r.Cells[0]) == "" {
		return readers.Mapped{Err: fmt.Errorf("no address")}
	}
	return readers.Mapped{Address: api.Address{Lines: []string{r.Cells[0]}, Country: "IE"}, Label: r.Cells[0]}
}

// printer is a writers.Writer that prints each result.
type printer struct{}

func (printer) Write(ctx context.Context, r writers.Result) error {
	if r.Err != "" {
		fmt.Printf("%d Error %s\n", r.Row, r.Err)
		return nil
	}
	fmt.Printf("%d %s %s cached=%v\n", r.Row, r.Response.Action, strings.Join(r.Response.Address.Label, ", "), r.Cached)
	return nil
}
func (printer) Close() error { return nil }
func (printer) Abort() error { return nil }

func ExampleRun() {
	st, err := pipeline.Run(context.Background(), pipeline.Config{
		Source:   &lines{rows: []string{"1 Main St", " ", "1 MAIN ST"}},
		Mapper:   firstCell{},
		Verifier: echo{},
		Limiter:  ratelimit.New(0, 1), // unlimited, as against the embedded service
		Workers:  1,                   // one at a time, so that row 1 is the one that calls
		Outputs:  []writers.Writer{printer{}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("rows %d, calls %d, saved %d, no address %d\n", st.RowsWritten, st.CallsMade, st.CallsSaved, st.Errors[runstats.ErrKindInput])
	// Output:
	// 1 Accept 1 Main St cached=false
	// 2 Error no address
	// 3 Accept 1 Main St cached=true
	// rows 3, calls 1, saved 1, no address 1
}
