// Package runs owns a run's policy over its journal: whether it keeps one,
// what makes two runs the same, resume, restart or refuse, what is left of a
// run that stops, and the temporary outputs a killed run left behind.
package runs
