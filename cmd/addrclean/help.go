package main

import _ "embed"

// The help of each command, above the list of its flags (which cliflag.PrintDefaults
// writes from the FlagSet, so that defaults cannot drift from the code).
// Kept as text files: they are prose, edited as prose.
var (
	//go:embed help/addrclean.txt
	usageText string
	//go:embed help/run.txt
	runUsage string
	//go:embed help/apply.txt
	applyUsage string
	//go:embed help/report.txt
	reportUsage string
	//go:embed help/serve.txt
	serveUsage string
	//go:embed help/verify.txt
	verifyUsage string
	//go:embed help/cache.txt
	cacheUsage string
	//go:embed help/reference.txt
	referenceUsage string
)
