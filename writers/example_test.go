package writers_test

import (
	"context"
	"fmt"
	"os"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/writers"
)

// Every result goes to both outputs; the review output keeps only the rows a
// person must look at. Here the enriched output is CSV on standard output.
func ExampleNewEnriched() {
	header := []string{"id", "address"}
	w, err := writers.NewEnriched("-", header, writers.Options{Stdout: os.Stdout})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	results := []writers.Result{
		{Row: 1, Cells: []string{"1", "=1+1"}, Err: "no address"},
		{Row: 2, Cells: []string{"2", "1 Main St"}, Response: &api.VerifyResponse{
			Action:  api.ActionAccept,
			Address: api.MatchedAddress{ID: "A1", Label: []string{"1 Main Street", "Dublin"}},
			Data:    api.Data{Location: &api.Location{Latitude: 53.35, Longitude: -6.26}},
		}},
	}
	for _, r := range results {
		if err := w.Write(ctx, r); err != nil {
			fmt.Println(err)
			_ = w.Abort()
			return
		}
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// id,address,av_action,av_status,av_match_level,av_complete,av_address_id,av_line1,av_line2,av_line3,av_line4,av_city,av_region,av_postcode,av_country,av_country_iso,av_label,av_lines_amended,av_city_amended,av_region_amended,av_postcode_amended,av_latitude,av_longitude,av_location_accuracy,av_message,av_error,av_duplicates,av_first_row,av_changes
	// 1,'=1+1,Error,,,,,,,,,,,,,,,,,,,,,,,no address,,,
	// 2,1 Main St,Accept,,,false,A1,,,,,,,,,,"1 Main Street, Dublin",false,false,false,false,53.35,-6.26,,,,1,2,no change
}

func ExampleFormatFromPath() {
	for _, p := range []string{"out.csv", "out.tsv", "out.xlsx", "out.jsonl", "-", "out.xls"} {
		f, err := writers.FormatFromPath(p)
		fmt.Println(p, f, err != nil)
	}
	// Output:
	// out.csv csv false
	// out.tsv csv false
	// out.xlsx xlsx false
	// out.jsonl jsonl false
	// - csv false
	// out.xls Format(0) true
}

func ExampleMarkChanges() {
	fmt.Println(writers.MarkChanges(
		[]string{"12 Main Street", "Dún Laoghaire", "A96 X2Y3"},
		[][]int{{0, 2}, {0, 3}, {4, 99}},
	))
	// Output:
	// [12] Main Street, [Dún] Laoghaire, A96 [X2Y3]
}
