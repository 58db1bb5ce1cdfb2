// Package service is a local implementation of the address-verification
// interface as an http.Handler: tokens, verify, integration settings, errors
// and per-key rate limits, answering from a gazetteer.
//
// It must not import the pipeline, readers or writers.
package service
