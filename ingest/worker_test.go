package ingest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeQueue is an in-memory Queue: claims hand out pending bodies once; completing an id in
// poison fails any transaction that holds it.
type fakeQueue struct {
	mu sync.Mutex
	// claiming, when set, is called (unlocked) by every claim that finds work.
	claiming func()
	limits   []int // of every claim, in order
	pending  []Claim
	done     map[string]Completion
	txs      int
	poison   map[string]bool
	stale    map[string]bool
}

func (q *fakeQueue) ClaimImports(ctx context.Context, lease time.Duration, limit int) ([]Claim, error) {
	if q.claiming != nil && q.left() > 0 {
		q.claiming()
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.limits = append(q.limits, limit)
	n := min(limit, len(q.pending))
	out := q.pending[:n:n]
	q.pending = q.pending[n:]
	return out, nil
}

func (q *fakeQueue) left() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}

func (q *fakeQueue) CompleteImports(ctx context.Context, done []Completion) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.txs++
	for _, d := range done {
		if q.poison[d.Claim.ID] {
			return 0, errors.New("poisoned")
		}
	}
	stale := 0
	for _, d := range done {
		if q.stale[d.Claim.ID] {
			stale++
			continue
		}
		q.done[d.Claim.ID] = d
	}
	return stale, nil
}

func newFakeQueue(t *testing.T, n int) *fakeQueue {
	q := &fakeQueue{done: map[string]Completion{}, poison: map[string]bool{}, stale: map[string]bool{}}
	for i := range n {
		body := validOrder(t, nil)
		if i%3 == 2 {
			body = []byte(`{"id":"no fulfillment orders"}`)
		}
		q.pending = append(q.pending, Claim{ID: string(rune('a' + i)), AccountID: "acct", Body: body, Attempts: 1})
	}
	return q
}

func TestWorkerDrain(t *testing.T) {
	q := newFakeQueue(t, 10)
	w := &Worker{Queue: q, Batch: 4}
	if err := w.Drain(context.Background()); err != nil {
		t.Fatalf("Drain = %v", err)
	}
	if len(q.done) != 10 || q.txs != 2 {
		t.Fatalf("Drain completed %d imports in %d transactions; want 10 in 2 (batches of 4, then up to 8)", len(q.done), q.txs)
	}
	for id, d := range q.done {
		valid := (id[0]-'a')%3 != 2
		if valid != (d.Order != nil) || valid == (len(d.Errors) > 0) {
			t.Errorf("import %s: order %v, errors %v; want valid=%v", id, d.Order != nil, d.Errors, valid)
		}
	}
}

// TestWorkerBatchGrowsWithBacklog: while claims come back full the worker doubles its batch,
// up to maxBatchGrowth times Batch, and a claim that is not full takes it back to Batch.
func TestWorkerBatchGrowsWithBacklog(t *testing.T) {
	q := newFakeQueue(t, 4+8+16+32+32+32+10)
	w := &Worker{Queue: q, Batch: 4}
	if err := w.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []int{4, 8, 16, 32, 32, 32, 32, 4}; !slices.Equal(q.limits, want) {
		t.Errorf("claim limits %v; want %v", q.limits, want)
	}
}

// TestWorkerPoisonedBatch: when a batch cannot commit, its imports are completed one by one,
// so one bad import holds none of the others back.
func TestWorkerPoisonedBatch(t *testing.T) {
	q := newFakeQueue(t, 4)
	q.poison["b"] = true
	q.stale["c"] = true
	w := &Worker{Queue: q, Batch: 4}
	if err := w.Drain(context.Background()); err == nil {
		t.Fatal("Drain = nil; want the poisoned import's error")
	}
	if len(q.done) != 2 || q.done["a"].Claim.ID != "a" || q.done["d"].Claim.ID != "d" {
		t.Errorf("completed %v; want a and d (b poisoned, c stale)", q.done)
	}
}

func TestWorkerRunWakes(t *testing.T) {
	q := newFakeQueue(t, 0)
	wake := make(chan struct{}, 1)
	w := &Worker{Queue: q, Poll: time.Hour, Wake: wake}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- w.Run(ctx) }()
	q.mu.Lock()
	q.pending = append(q.pending, Claim{ID: "x", AccountID: "acct", Body: validOrder(t, nil), Attempts: 1})
	q.mu.Unlock()
	wake <- struct{}{}
	deadline := time.Now().Add(5 * time.Second)
	for {
		q.mu.Lock()
		n := len(q.done)
		q.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker did not wake up within 5 s (it polls hourly)")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case err := <-stopped:
		if err != nil {
			t.Errorf("Run = %v; want nil after cancel", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

// TestWorkerRunParallel: Run runs Parallel loops, which claim at the same time, and together
// complete every import once.
func TestWorkerRunParallel(t *testing.T) {
	q := newFakeQueue(t, 60)
	// The first three claims wait for each other: only three loops can get them all in.
	var arrived atomic.Int32
	var alone atomic.Bool
	all := make(chan struct{})
	q.claiming = func() {
		if n := arrived.Add(1); n <= 3 {
			if n == 3 {
				close(all)
			}
			select {
			case <-all:
			case <-time.After(2 * time.Second):
				alone.Store(true)
			}
		}
	}
	w := &Worker{Queue: q, Batch: 1, Parallel: 3, Poll: time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		for q.completed() < 60 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	w.Run(ctx)
	if alone.Load() {
		t.Error("three loops never claimed at the same time")
	}
	if n := q.completed(); n != 60 {
		t.Errorf("%d of 60 imports completed", n)
	}
}

func (q *fakeQueue) completed() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.done)
}

func TestClaimSupersedes(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		a, b Claim
		want bool
	}{
		{"later", Claim{ID: "a", ReceivedAt: t0.Add(time.Microsecond)}, Claim{ID: "b", ReceivedAt: t0}, true},
		{"earlier", Claim{ID: "b", ReceivedAt: t0}, Claim{ID: "a", ReceivedAt: t0.Add(time.Second)}, false},
		{"same time, larger id", Claim{ID: "b", ReceivedAt: t0}, Claim{ID: "a", ReceivedAt: t0}, true},
		{"same time, smaller id", Claim{ID: "a", ReceivedAt: t0}, Claim{ID: "b", ReceivedAt: t0}, false},
		{"itself", Claim{ID: "a", ReceivedAt: t0}, Claim{ID: "a", ReceivedAt: t0}, false},
		{"within a microsecond, as stored", Claim{ID: "a", ReceivedAt: t0.Add(999 * time.Nanosecond)}, Claim{ID: "b", ReceivedAt: t0}, false},
	}
	for _, tt := range tests {
		if got := tt.a.Supersedes(tt.b); got != tt.want {
			t.Errorf("%s: Supersedes = %v, want %v", tt.name, got, tt.want)
		}
	}
}
