package readers_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/addrclean/addrclean/readers"
)

func ExampleInspect() {
	rep, err := readers.Inspect(context.Background(), "testdata/crm.csv", readers.Options{},
		readers.MappingSpec{DefaultCountry: "IE"}, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rep.Rows, "rows,", rep.NoAddress, "without an address")
	fmt.Println(rep.Sample[0].Mapped.Address.Lines)
	// Output:
	// 6 rows, 1 without an address
	// [12 Main Street P31 X2Y3]
}

func ExampleNewMapper() {
	ctx := context.Background()
	r, err := readers.Open(ctx, "testdata/crm.csv", readers.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	m, err := readers.NewMapper(r.Header(), readers.MappingSpec{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(m.Describe())
	for {
		row, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return
		}
		mp := m.Map(row)
		if mp.Err != nil {
			fmt.Printf("row %d: %v\n", row.Num, mp.Err)
			continue
		}
		fmt.Printf("row %d: %q %s\n", row.Num, mp.Address.Lines, mp.Address.Country)
	}
	// Output:
	//   address lines: "Address Line 1", "Address Line 2" (detected)
	//   city:          "Town" (detected)
	//   region:        "County" (detected)
	//   postcode:      "Eircode" (detected), sent as the last address line
	//   country:       "Country" (detected)
	//   id:            "Customer ID" (detected)
	// row 1: ["12 Main Street" "P31 X2Y3"] IE
	// row 2: ["Apt 4" "The Maltings" "Bridge St" "F91 AB12"] IE
	// row 3: no address
	// row 4: ["10 Downing St" "SW1A 2AA"] GB
	// row 5: no country
	// row 6: ["7 High St" "BT34 1AA"] GB
}
