// Package runstats holds what a run reports about itself: its statistics
// (the body of --summary), the kinds of its Error rows, the duplicates its
// enriched output holds and the estimate of a dry run. The pipeline fills
// them; the report, the runs directory and the command read them. It is a
// leaf, so that what reads a run's outputs need not import the pipeline.
package runstats
