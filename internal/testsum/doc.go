// Command testsum runs 'go test -json' with the arguments it is given and
// prints what 'go test' would print without -v (each package's result, the
// output of failed tests, build errors), then one last line naming the
// tests skipped because a program is not installed (internal/needs) and
// the command that installs it. make test ends with that line, so a
// browser test skipped for want of Chromium does not pass for "ok".
//
// Usage: go run ./internal/testsum [go test flags] PACKAGES
package main
