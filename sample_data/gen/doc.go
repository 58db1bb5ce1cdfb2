// Command gen writes the sample data: sample_data/reference.csv (synthetic
// reference addresses on real place facts) and the messy CRM exports
// sample_data/customers.csv and customers.xlsx made from it. It is
// deterministic: the same code writes the same files.
//
// Run it from the repository root: go run ./sample_data/gen (make sample-data).
package main
