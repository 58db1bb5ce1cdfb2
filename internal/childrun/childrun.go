// Package childrun runs a benchmark's child process and measures it: wall
// time, CPU time and peak resident memory.
//
// The peak is not the child's rusage: Linux records, at exec, the high-water
// mark of the memory the child was started from, and os/exec starts a child
// in its parent's memory (golang/go#32054), so a benchmark driver that holds
// a large input reports its own peak for every child. The child's own
// VmHWM is read from /proc while it runs instead.
package childrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// Sample is how often the child's high-water mark is read. The mark only
// grows, so a read misses at most what the child adds in its last Sample.
const Sample = 5 * time.Millisecond

// Result is one measured run. PeakRSS is -1 where /proc cannot tell it.
type Result struct {
	Wall, CPU time.Duration
	PeakRSS   int64 // bytes
}

// Run starts cmd, waits for it and measures it. A run that exits non-zero
// is still measured; its error is returned with the Result.
func Run(ctx context.Context, cmd *exec.Cmd) (Result, error) {
	return run(ctx, cmd, func() {})
}

// run is Run, calling sampled after each read of the mark (for the tests).
func run(ctx context.Context, cmd *exec.Cmd, sampled func()) (Result, error) {
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("childrun: %w", err)
	}
	// The child's /proc directory is opened once, while the child cannot
	// have been reaped (only cmd.Wait reaps it), and its status is read
	// relative to that handle: once cmd.Wait has reaped the child, a read
	// fails with ESRCH, even if a new process has taken its PID, so the
	// sampler never reads a stranger's memory between cmd.Wait and
	// close(done).
	done := make(chan struct{})
	peak := make(chan int64, 1)
	if proc, err := os.OpenRoot(fmt.Sprintf("/proc/%d", cmd.Process.Pid)); err != nil {
		peak <- -1 // no /proc
	} else {
		go sample(ctx, proc, done, peak, sampled)
	}
	err := cmd.Wait()
	wall := time.Since(start)
	close(done)
	r := Result{Wall: wall, PeakRSS: <-peak}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return r, err
}

// sample reads the high-water mark of the process of proc every Sample
// until done is closed or ctx is done, then sends the highest read (-1 if
// none) on peak and closes proc.
func sample(ctx context.Context, proc *os.Root, done <-chan struct{}, peak chan<- int64, sampled func()) {
	defer proc.Close()
	t := time.NewTicker(Sample)
	defer t.Stop()
	hwm := int64(-1)
	for {
		if b, err := readHWM(proc); err == nil {
			hwm = max(hwm, b)
			sampled()
		}
		select {
		case <-done:
			peak <- hwm
			return
		case <-ctx.Done():
			peak <- hwm
			return
		case <-t.C:
		}
	}
}

// ErrNoHWM is returned by ReadHWM for a process whose status shows no
// peak: one that has exited (a zombie has no memory left) or a kernel
// thread.
var ErrNoHWM = errors.New("no VmHWM in the process status")

// ReadHWM returns the peak resident set (VmHWM) of process pid in bytes,
// from /proc/PID/status; pid 0 is the calling process (/proc/self), whose
// mark a benchmark may reset first by writing "5" to /proc/self/clear_refs.
func ReadHWM(pid int) (int64, error) {
	dir := "/proc/self"
	if pid != 0 {
		dir = "/proc/" + strconv.Itoa(pid)
	}
	proc, err := os.OpenRoot(dir)
	if err != nil {
		return 0, fmt.Errorf("childrun: %w", err)
	}
	defer proc.Close()
	return readHWM(proc)
}

// readHWM reads VmHWM, in bytes, from the status file of the /proc/PID
// directory proc.
func readHWM(proc *os.Root) (int64, error) {
	b, err := proc.ReadFile("status")
	if err != nil {
		return 0, fmt.Errorf("childrun: %w", err)
	}
	kb, err := parseHWM(b)
	if err != nil {
		return 0, fmt.Errorf("childrun: %s/status: %w", proc.Name(), err)
	}
	return kb << 10, nil
}

// parseHWM returns the VmHWM line's figure (kB) of a status file.
func parseHWM(status []byte) (int64, error) {
	for line := range bytes.Lines(status) {
		rest, ok := bytes.CutPrefix(line, []byte("VmHWM:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) == 0 {
			break
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil || kb < 0 {
			return 0, fmt.Errorf("VmHWM %q: %w", f[0], ErrNoHWM)
		}
		return kb, nil
	}
	return 0, ErrNoHWM
}
