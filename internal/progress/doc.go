// Package progress shows how far a run is: a bar below the log lines on a
// terminal, a "progress" log event every ten seconds otherwise (a cron job's
// log). Writer is stderr shared by the two, so that a log line never lands
// on the bar's line.
package progress
