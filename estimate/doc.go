// Package estimate turns the counts of a dry run (runstats.Estimate, made by
// pipeline.Estimator) into what a person signing the invoice asks: the time
// the calls take at the run's rate and what they cost at a price per call,
// in the currency as the user wrote it.
package estimate
