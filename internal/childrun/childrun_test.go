package childrun

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
)

// big keeps the test process's own memory large, as a benchmark driver's
// is: the child's peak must not be the parent's.
var big []byte

func TestPeakIsTheChilds(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc: VmHWM is Linux's")
	}
	big = make([]byte, 256<<20)
	for i := 0; i < len(big); i += 4096 {
		big[i] = 1
	}
	// The child, a shell, waits for a line that is sent once it has been
	// sampled.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command("sh", "-c", "read x")
	cmd.Stdin = r
	var once sync.Once
	res, err := run(context.Background(), cmd, func() {
		once.Do(func() {
			_, _ = w.Write([]byte("x\n"))
			_ = w.Close()
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.PeakRSS <= 0 {
		t.Fatalf("peak %d: the child was never sampled", res.PeakRSS)
	}
	if res.PeakRSS > 64<<20 {
		t.Errorf("peak %d MB for a shell: the parent's 256 MB counted as the child's", res.PeakRSS>>20)
	}
	runtime.KeepAlive(big)
}

// TestReapedChildIsNotRead: the sampler's handle on a child's /proc
// directory fails once the child is reaped, so that a process that takes
// the PID afterwards is never read as the child.
func TestReapedChildIsNotRead(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc: VmHWM is Linux's")
	}
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	proc, err := os.OpenRoot("/proc/" + strconv.Itoa(cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := readHWM(proc); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("reading a reaped child: %v, want ESRCH", err)
	}
}

func TestReadHWMSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc: VmHWM is Linux's")
	}
	b, err := ReadHWM(0)
	if err != nil || b <= 0 {
		t.Fatalf("ReadHWM(0) = %d, %v", b, err)
	}
	if c, err := ReadHWM(os.Getpid()); err != nil || c < b {
		t.Fatalf("ReadHWM(own pid) = %d, %v; self %d", c, err, b)
	}
}

func TestParseHWM(t *testing.T) {
	for _, tc := range []struct {
		status string
		kb     int64
		err    bool
	}{
		{"Name:\tx\nVmPeak:\t  9000 kB\nVmHWM:\t   1234 kB\nVmRSS:\t 1000 kB\n", 1234, false},
		{"VmHWM:\t0 kB", 0, false},
		{"Name:\tx\nState:\tZ (zombie)\n", 0, true}, // an exited child
		{"VmHWM:\n", 0, true},
		{"VmHWM:\tlots kB\n", 0, true},
		{"VmHWM:\t-5 kB\n", 0, true},
		{"", 0, true},
	} {
		kb, err := parseHWM([]byte(tc.status))
		if kb != tc.kb || (err != nil) != tc.err || (err != nil && !errors.Is(err, ErrNoHWM)) {
			t.Errorf("parseHWM(%q) = %d, %v", tc.status, kb, err)
		}
	}
}
