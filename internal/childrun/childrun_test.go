package childrun

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"sync"
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
