// Package logfmt builds the one logger of an addrclean process: console
// lines on a terminal, one JSON object per stderr line otherwise (or as
// --log-format says), durations written as the flags take them, and a
// guard that shows the first few warnings of each message and counts the
// rest, so that a file of blank rows does not print one line per row.
package logfmt
