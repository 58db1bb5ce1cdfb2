package main

import (
	"github.com/addrclean/addrclean/pipeline"
)

// parseShard reads --shard and refuses what N runners cannot share. A shard
// writes table outputs only: rows are upserted by id, so N runners fill one
// out-table and one review table between them, each touching (and deleting
// from the review table) only the rows of its part. A file output cannot be
// shared, and per-shard files would each hold a scattered part of the rows
// that someone would have to merge back into input order; a report built by
// one shard would show its part only, while 'addrclean report DBURL
// --out-table T' draws the whole table once the last shard is done.
func (o *runOptions) parseShard() error {
	if o.shardSpec == "" {
		return nil
	}
	s, err := pipeline.ParseShard(o.shardSpec)
	if err != nil {
		return usageErrorf("--shard %w: the part of N runners this one verifies, e.g. --shard 0/3, 1/3 and 2/3, or --shard $(JOB_COMPLETION_INDEX)/3 in a Kubernetes Indexed Job", err)
	}
	switch {
	case !o.plan.Info().Shardable:
		return usageErrorf("--shard splits a database INPUT (--table or --query) between runners that upsert into the same --out-table: " +
			"a file INPUT writes output files, which N runners cannot share")
	case o.out != "" || o.review != "":
		return usageErrorf("--shard writes table outputs only (--out-table, --review-table): N runners cannot share -o or --review, " +
			"and per-shard files would each hold a part of the rows")
	case o.report != "":
		return usageErrorf("--shard: --report would show this shard's part only; once every shard is done, " +
			"draw the whole table with 'addrclean report DBURL --out-table NAME -o PAGE.html'")
	}
	o.shard = s
	return nil
}
