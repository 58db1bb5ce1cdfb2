// Package samefile tells whether the files a command reads and writes are
// one and the same, whatever their spelling: a relative or absolute path,
// a symbolic link, a hard link, or a file that does not exist yet in a
// directory reached through a link.
//
// A command lists every path it touches as a Use and calls Check before it
// reads or writes anything: an output that is also an input, or two
// outputs that are one file, is a *Clash naming both. It is the check behind
// "no output over an input" (docs/reliability.md).
package samefile
