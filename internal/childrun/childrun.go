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
	"bufio"
	"bytes"
	"context"
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
	done := make(chan struct{})
	peak := make(chan int64, 1)
	go func() {
		status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
		t := time.NewTicker(Sample)
		defer t.Stop()
		hwm := int64(-1)
		for {
			if kb, ok := readHWM(status); ok {
				hwm = max(hwm, kb*1024)
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
	}()
	err := cmd.Wait()
	wall := time.Since(start)
	close(done)
	r := Result{Wall: wall, PeakRSS: <-peak}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return r, err
}

// readHWM reads VmHWM (in kB) from a /proc/PID/status file. A child that
// has exited has no memory left and no VmHWM line.
func readHWM(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmHWM:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) == 0 {
			return 0, false
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		return kb, err == nil
	}
	return 0, false
}
