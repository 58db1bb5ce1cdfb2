package progress

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"
	"github.com/schollz/progressbar/v3"

	"github.com/addrclean/addrclean/pipeline"
)

// A warning printed while the bar shows went onto the bar's line: the
// bar's line is cleared first, so the warning starts a line of its own.
func TestWriterKeepsLogLinesOffTheBar(t *testing.T) {
	var buf bytes.Buffer
	bar := progressbar.NewOptions64(100, progressbar.OptionSetWriter(&buf), progressbar.OptionSetWidth(10))
	bw := NewWriter(&buf)
	p := &Bar{bar: bar, out: bw}
	bw.clear = func() { _ = bar.Clear() }
	p.Update(pipeline.Progress{RowsRead: 10, RowsDone: 10})
	if !strings.Contains(buf.String(), "10 rows") {
		t.Fatalf("no bar drawn: %q", buf.String())
	}
	log := zerolog.New(bw)
	log.Warn().Msg("careful")
	out := buf.String()
	i := strings.Index(out, `{"level":"warn"`)
	if i <= 0 || out[i-1] != '\r' {
		t.Errorf("the warning does not start its own line: %q", out)
	}
}

// The bar followed the bytes the reader had read, ahead of the rows
// written by the rows in flight.
func TestWrittenBytes(t *testing.T) {
	tests := []struct {
		read int64
		s    pipeline.Progress
		want int64
	}{
		{1000, pipeline.Progress{RowsRead: 100, RowsDone: 50}, 500},
		{1000, pipeline.Progress{RowsRead: 100, RowsDone: 100}, 1000},
		{1000, pipeline.Progress{RowsRead: 100, RowsDone: 0}, 0},
		{1000, pipeline.Progress{}, 0},
	}
	for _, tt := range tests {
		if got := writtenBytes(tt.read, tt.s); got != tt.want {
			t.Errorf("writtenBytes(%d, %+v) = %d, want %d", tt.read, tt.s, got, tt.want)
		}
	}
}

// A shard's bar is over the whole table's rows (readers.RowCounter): the
// rows of the other shards, passed over, count as gone through.
func TestRowsThrough(t *testing.T) {
	for _, tt := range []struct {
		s    pipeline.Progress
		want int64
	}{
		{pipeline.Progress{RowsRead: 100, RowsDone: 90}, 90},
		{pipeline.Progress{RowsRead: 171, RowsDone: 171, RowsOtherShards: 329}, 500},
		{pipeline.Progress{RowsRead: 10, RowsDone: 4, RowsOtherShards: 20}, 24},
	} {
		if got := rowsThrough(tt.s); got != tt.want {
			t.Errorf("rowsThrough(%+v) = %d, want %d", tt.s, got, tt.want)
		}
	}
}

// lockedBuffer is a log written by the ticker's goroutine and read by the
// test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(strings.TrimSpace(l.b.String()), "\n")
}

// Without a terminal the progress is logged on a timer, not only when
// rows complete: a run whose first row is stuck still reports; and the
// event's rates are numbers (it had rate as a string, "500/s"), named as
// in the summary.
func TestLogsOnATimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log lockedBuffer
		p := New(NewWriter(&log), nil, zerolog.New(&log), true)
		synctest.Wait()
		if got := log.lines(); got[0] != "" {
			t.Fatalf("logged before the first tick: %q", got)
		}
		time.Sleep(logEvery) // the bubble's clock: no real wait
		synctest.Wait()
		p.Update(pipeline.Progress{RowsDone: 7, RateLimit: 20, CallsPerSecond: 12.5})
		time.Sleep(logEvery)
		synctest.Wait()
		p.Finish()
		lines := log.lines()
		if len(lines) != 2 {
			t.Fatalf("%d progress lines after two ticks, want 2: %q", len(lines), lines)
		}
		var stuck, moving map[string]any
		if json.Unmarshal([]byte(lines[0]), &stuck) != nil || json.Unmarshal([]byte(lines[1]), &moving) != nil {
			t.Fatalf("not JSON: %q", lines)
		}
		if stuck["message"] != "progress" || stuck["rows"] != 0.0 {
			t.Errorf("no progress line while no row was done: %s", lines[0])
		}
		if _, ok := moving["rate"]; ok {
			t.Errorf("progress event still has rate: %s", lines[1])
		}
		if moving["rows"] != 7.0 || moving["rate_limit"] != 20.0 || moving["effective_rate"] != 12.5 {
			t.Errorf("rows, rate_limit, effective_rate = %v, %v, %v; want numbers 7, 20, 12.5: %s",
				moving["rows"], moving["rate_limit"], moving["effective_rate"], lines[1])
		}
	})
}
