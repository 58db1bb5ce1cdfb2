// Command addrclean verifies the addresses of a CSV or XLSX export against an
// address-verification service and writes an enriched file and a review file.
//
// Subcommands: run, apply, report, serve, verify, cache, version. See README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/addrclean/addrclean/runs"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// Exit codes of the command-line contract.
const (
	exitOK          = 0
	exitFatal       = 1
	exitUsage       = 2
	exitRowErrors   = 3
	exitInterrupted = 130
)

// exitError carries the exit code a subcommand wants; main only maps errors
// to codes and prints them.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageErrorf is an error in how the command was called (exit 2).
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// withCode attaches an exit code to err (nil err gives a silent exit).
func withCode(code int, err error) error { return &exitError{code: code, err: err} }

func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	var ue *runs.UsageError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		return exitUsage
	}
	return exitFatal
}

const usageText = `addrclean verifies addresses in CSV/XLSX exports against an address-verification service.

Usage:
  addrclean run [flags] INPUT       verify every row of INPUT; write enriched and review files
  addrclean apply --enriched CLEANED --review REVIEWED -o FINAL
                                    apply the decisions of a review file: the final file for import
  addrclean report -o REPORT.html ENRICHED
                                    the after-run HTML report of an enriched file
  addrclean serve [flags]           run the local address-verification service
  addrclean verify [flags] LINE...  verify one address
  addrclean cache stats|prune|clear --cache PATH
                                    housekeeping of the result cache of run --cache
  addrclean reference import --from paf|openaddresses IN OUT.csv
                                    convert PAF or OpenAddresses to a reference file
  addrclean version                 print the version

Run 'addrclean COMMAND --help' for the flags of a command.
`

// streams are the process's standard streams, swappable in tests.
type streams struct {
	in       io.Reader
	out, err io.Writer
	// tty is true when err is a terminal: logs in console format and a
	// progress bar. Decided once, in main, so that tests can claim one.
	tty bool
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal cancels ctx (a run then finishes what is in flight);
	// restoring the default handlers makes a second one end the process at
	// once.
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := runMain(ctx, os.Args[1:], streams{in: os.Stdin, out: os.Stdout, err: os.Stderr,
		tty: term.IsTerminal(int(os.Stderr.Fd()))})
	stop()
	os.Exit(code)
}

// runMain dispatches to a subcommand and maps its error to an exit code.
func runMain(ctx context.Context, args []string, s streams) int {
	if len(args) == 0 {
		fmt.Fprint(s.err, usageText)
		return exitUsage
	}
	commands := map[string]func(context.Context, []string, streams) error{
		"run": cmdRun, "apply": cmdApply, "report": cmdReport, "serve": cmdServe,
		"verify": cmdVerify, "cache": cmdCache, "reference": cmdReference,
	}
	var err error
	switch args[0] {
	case "version", "--version", "-version":
		fmt.Fprintf(s.out, "addrclean %s\n", version)
	case "help", "-h", "--help", "-help":
		fmt.Fprint(s.out, usageText)
	default:
		cmd, ok := commands[args[0]]
		if !ok {
			fmt.Fprintf(s.err, "addrclean: unknown command %q\n\n%s", args[0], usageText)
			return exitUsage
		}
		err = cmd(ctx, args[1:], s)
	}
	code := exitCode(err)
	if err != nil && err.Error() != "" && !isSilent(err) {
		fmt.Fprintf(s.err, "addrclean: %v\n", err)
	}
	return code
}

// isSilent reports an exitError without a message (already reported).
func isSilent(err error) bool {
	var ee *exitError
	return errors.As(err, &ee) && ee.err == nil
}
