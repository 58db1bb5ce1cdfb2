package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"golang.org/x/term"

	"github.com/addrclean/addrclean/internal/cliflag"
	"github.com/addrclean/addrclean/runs"
	"github.com/addrclean/addrclean/runs/endpoint"
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
	var ep *endpoint.Error
	switch {
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, new(*runs.UsageError)):
		return exitUsage
	case errors.As(err, new(*runs.InterruptedError)):
		return exitInterrupted
	case errors.As(err, &ep):
		return map[endpoint.Class]int{endpoint.Fatal: exitFatal, endpoint.Usage: exitUsage, endpoint.Interrupted: exitInterrupted}[ep.Class]
	}
	return exitFatal
}

// streams are the process's standard streams, swappable in tests.
type streams struct {
	in       io.Reader
	out, err io.Writer
	// tty is true when err is a terminal: logs in console format and a
	// progress bar. Decided once, in main, so that tests can claim one.
	tty bool
}

func main() {
	// A reader that goes away (-o - | head) must not kill the process
	// before it removes its temporary files: the write fails instead.
	signal.Ignore(syscall.SIGPIPE)
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

// commands are the subcommands by name.
var commands = map[string]func(context.Context, []string, streams) error{
	"run": cmdRun, "apply": cmdApply, "report": cmdReport, "serve": cmdServe,
	"verify": cmdVerify, "cache": cmdCache, "reference": cmdReference,
}

// runMain dispatches to a subcommand and maps its error to an exit code.
func runMain(ctx context.Context, args []string, s streams) int {
	if len(args) == 0 {
		fmt.Fprint(s.err, usageText)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "version", "--version", "-version":
		if len(args) > 1 && isHelp(args[1]) {
			return help(ctx, []string{"version"}, s)
		}
		fmt.Fprintf(s.out, "addrclean %s\n", version)
	case "help", "-h", "--help", "-help":
		return help(ctx, args[1:], s)
	default:
		cmd, ok := commands[args[0]]
		if !ok {
			return unknownCommand(args[0], s)
		}
		err = cmd(ctx, args[1:], s)
	}
	code := exitCode(err)
	if err != nil && err.Error() != "" && !isSilent(err) {
		fmt.Fprintf(s.err, "addrclean: %v\n", err)
	}
	return code
}

// help is 'addrclean help [COMMAND]': the top-level help, or the command's
// own --help, on stdout (asked for, so it is the output).
func help(ctx context.Context, args []string, s streams) int {
	if len(args) == 0 {
		fmt.Fprint(s.out, usageText)
		return exitOK
	}
	switch args[0] {
	case "version":
		fmt.Fprint(s.out, "Usage: addrclean version\n\nPrint the version of addrclean.\n")
		return exitOK
	}
	if isHelp(args[0]) {
		fmt.Fprint(s.out, usageText)
		return exitOK
	}
	cmd, ok := commands[args[0]]
	if !ok {
		return unknownCommand(args[0], s)
	}
	// Every command prints its help and returns before doing anything
	// else; the help goes where the command's errors would.
	return exitCode(cmd(ctx, []string{"--help"}, streams{in: s.in, out: s.out, err: s.out}))
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return slices.Contains([]string{"help", "-h", "--help", "-help"}, arg)
}

// unknownCommand reports a command that is not one, with the nearest one
// when a typo is likely, and the list of commands.
func unknownCommand(name string, s streams) int {
	fmt.Fprintf(s.err, "addrclean: unknown command %q\n", name)
	names := slices.Collect(maps.Keys(commands))
	if near := cliflag.Closest(name, append(names, "help", "version")); near != "" {
		fmt.Fprintf(s.err, "did you mean 'addrclean %s'?\n", near)
	}
	fmt.Fprintf(s.err, "\n%s", usageText)
	return exitUsage
}

// isSilent reports an exitError without a message (already reported).
func isSilent(err error) bool {
	var ee *exitError
	return errors.As(err, &ee) && ee.err == nil
}
