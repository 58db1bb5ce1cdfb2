// Command benchtable runs the built addrclean binary over generated inputs and
// prints the table of `make bench`: rows/s, CPU per row, peak memory, verify
// calls per distinct address, rate utilisation and 429s. It measures the real
// process (wall clock and CPU from the child's rusage, peak memory from its
// own VmHWM: internal/childrun), so the figures include
// start-up, reading, the embedded service's in-process round trips and writing.
//
// The generated inputs repeat addresses far apart (dupShare of the rows
// repeat one seen more than dupGap rows earlier, in other case and spacing),
// so that "calls / distinct" shows whether deduplication holds over the
// whole run: it is the verify calls the service answered over the distinct
// addresses of the input after folding case and white space, and must read
// 1.00. The last row runs against a separate `addrclean serve` whose key has
// a quota below --rate, and counts the answers on the service's side.
package main
