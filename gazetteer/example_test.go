package gazetteer_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/addrclean/addrclean/gazetteer"
)

func ExampleIndex_Match() {
	ref := `id,building_number,street,city,region,postcode,country
IE1,12,Main Street,Ennis,Clare,V95 X2Y3,IE
IE2,14,Main Street,Ennis,Clare,V95 X2Y4,IE
`
	ix, err := gazetteer.Load(context.Background(), strings.NewReader(ref))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, lines := range [][]string{
		{"12 MAIN ST", "Ennis", "Co. Clare"},
		{"12 Mian Street", "Ennis"},
		{"99 Main Street", "Ennis"},
	} {
		m := ix.Match(gazetteer.Query{Lines: lines, Country: "IE"})
		fmt.Println(m.Verdict, m.Level, strings.Join(m.Lines, ", "), m.City, m.Postcode)
	}
	// Output:
	// Accept Building 12 Main Street Ennis V95 X2Y3
	// Suggest Building 12 Main Street Ennis V95 X2Y3
	// Confirm Street 99 Main Street Ennis
}
