// Package pipeline is the run: a bounded worker pool that verifies rows under
// the rate limit, retries, deduplicates, keeps input order, and collects
// progress and statistics. It does not parse flags.
package pipeline
