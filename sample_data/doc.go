// Package sampledata holds sample CRM exports (CSV and XLSX) and the sample
// reference addresses, which are embedded in the binary.
package sampledata
