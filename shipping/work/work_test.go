package work

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestLoopWakes: a round runs at once, again on every signal, and the loop returns when ctx ends.
func TestLoopWakes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	wake := make(chan struct{})
	rounds := make(chan int)
	var n atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		Loop{Every: time.Hour, Wake: wake}.Run(ctx, func(context.Context) error {
			rounds <- int(n.Add(1))
			return nil
		})
	}()
	if got := <-rounds; got != 1 {
		t.Fatalf("first round = %d; want 1", got)
	}
	for want := 2; want <= 3; want++ {
		wake <- struct{}{}
		if got := <-rounds; got != want {
			t.Fatalf("round after a signal = %d; want %d", got, want)
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after ctx ended")
	}
}

// TestLoopTicks: with nothing waking it, a round runs every Every.
func TestLoopTicks(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rounds := make(chan struct{}, 10)
	go Loop{Every: time.Millisecond}.Run(ctx, func(context.Context) error {
		rounds <- struct{}{}
		return nil
	})
	for range 3 {
		select {
		case <-rounds:
		case <-time.After(5 * time.Second):
			t.Fatal("no round within 5 s at Every = 1 ms")
		}
	}
}

// TestLoopIdle: the wait doubles after each round the wait started, up to Idle, and is Every
// again after a round a wake started; with no Idle above Every it stays Every.
func TestLoopIdle(t *testing.T) {
	const s = time.Second
	for _, tt := range []struct {
		every, idle, wait time.Duration
		woken             bool
		want              time.Duration
	}{
		{s / 2, 2 * s, s / 2, false, s},
		{s / 2, 2 * s, s, false, 2 * s},
		{s / 2, 2 * s, 2 * s, false, 2 * s},
		{s / 2, 3 * s, 2 * s, false, 3 * s},
		{s / 2, 2 * s, 2 * s, true, s / 2},
		{s / 2, 0, s / 2, false, s / 2},
		{s, s / 2, s, false, s},
		{time.Hour, 2 * s, time.Hour, false, time.Hour},
	} {
		if got := (Loop{Every: tt.every, Idle: tt.idle}).next(tt.wait, tt.woken); got != tt.want {
			t.Errorf("Loop{Every: %v, Idle: %v}.next(%v, woken %v) = %v; want %v", tt.every, tt.idle, tt.wait, tt.woken, got, tt.want)
		}
	}
}

// TestLoopLogs: a failed round is logged under Name and the loop goes on; a round failing
// because ctx ended is not logged.
func TestLoopLogs(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	ctx, cancel := context.WithCancel(context.Background())
	wake := make(chan struct{}, 1)
	n := 0
	Loop{Every: time.Hour, Wake: wake, Log: log, Name: "test worker"}.Run(ctx, func(ctx context.Context) error {
		n++
		if n == 1 {
			wake <- struct{}{}
			return errors.New("disk full")
		}
		cancel()
		return ctx.Err()
	})
	if n != 2 {
		t.Errorf("rounds = %d; want 2 (the loop goes on after a failed round)", n)
	}
	out := buf.String()
	if strings.Count(out, "level=ERROR") != 1 || !strings.Contains(out, `msg="test worker" err="disk full"`) {
		t.Errorf("log = %q; want one error line for disk full", out)
	}
}
