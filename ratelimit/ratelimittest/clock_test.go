package ratelimittest

import (
	"context"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(ms ...int) []time.Time {
	ts := make([]time.Time, len(ms))
	for i, m := range ms {
		ts[i] = t0.Add(time.Duration(m) * time.Millisecond)
	}
	return ts
}

func TestMaxInWindow(t *testing.T) {
	tests := []struct {
		name  string
		times []time.Time
		want  int
	}{
		{"none", nil, 0},
		{"one", at(0), 1},
		{"half-open window", at(0, 1000), 1},
		{"just inside", at(0, 999), 2},
		{"cluster later", at(0, 100, 1050, 1060, 1070, 1999), 4},
		{"same instant", at(5, 5, 5), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MaxInWindow(tt.times, time.Second); got != tt.want {
				t.Fatalf("MaxInWindow = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestClockTimers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := NewClock(t0)
	now, _ := c.Timer(0)
	if got := <-now; !got.Equal(t0) {
		t.Fatalf("zero timer fired at %v", got)
	}
	a, _ := c.Timer(2 * time.Second)
	b, stopB := c.Timer(time.Second)
	if err := c.BlockUntil(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if d, ok := c.Next(); !ok || d != time.Second {
		t.Fatalf("Next = %v, %v", d, ok)
	}
	if !stopB() || stopB() {
		t.Fatal("stop did not report removal once")
	}
	c.Advance(time.Second)
	select {
	case <-b:
		t.Fatal("a stopped timer fired")
	case <-a:
		t.Fatal("timer fired early")
	default:
	}
	if err := c.AwaitTimer(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Second)
	if got := <-a; !got.Equal(t0.Add(2 * time.Second)) {
		t.Fatalf("timer fired at %v", got)
	}
	if c.Pending() != 0 {
		t.Fatal("fired timer still pending")
	}
	if _, ok := c.Next(); ok {
		t.Fatal("Next with no timers")
	}
}
