package ingest

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/work"
)

// ErrStaleClaim is what a Queue returns when completing a claim that is no longer held: its
// lease expired and another worker claimed the import again.
var ErrStaleClaim = errors.New("import claim is stale")

// Queue is the inbox as the worker sees it.
type Queue interface {
	// ClaimImports leases up to limit unfinished imports whose lease has expired (or that never
	// had one), oldest first: each becomes PROCESSING with its attempts counted up, held until
	// now+lease.
	ClaimImports(ctx context.Context, lease time.Duration, limit int) ([]Claim, error)
	// CompleteImports ends claimed imports in one transaction with their orders' upserts: one
	// with an order is PROCESSED, one without is FAILED with its errors. A claim no longer held
	// (ErrStaleClaim) is skipped and counted in stale; it changes nothing.
	CompleteImports(ctx context.Context, done []Completion) (stale int, err error)
}

// Completion is the outcome of processing a claimed import: its order, or its errors.
type Completion struct {
	Claim  Claim
	Order  *Order
	Errors []shipping.FieldError
}

// Claim is an import a worker holds the lease of.
type Claim struct {
	ID        string
	AccountID string
	Body      []byte
	// Attempts counts claims including this one; it also fences the completion.
	Attempts   int
	ReceivedAt time.Time
}

// Supersedes reports whether the order c's import carries replaces the one other's carries, for
// the same order: c's import was received later (to the microsecond, as stored) or, received
// at the same time, has the larger id.
func (c Claim) Supersedes(other Claim) bool {
	a, b := c.ReceivedAt.UnixMicro(), other.ReceivedAt.UnixMicro()
	return a > b || a == b && c.ID > other.ID
}

// Worker processes the inbox: it claims imports with a lease, so an import whose worker died
// is claimed again once the lease expires, and completes each with its order in one
// transaction, so an order is never applied twice nor lost.
type Worker struct {
	Queue Queue
	// Lease is how long a claim is held (default 10 s); Batch how many imports are claimed at a
	// time (default 32; while claims come back full, a backlog, twice as many each time, up to
	// eight times Batch); Poll how often an idle worker looks for work (default 200 ms);
	// MaxAttempts how many claims an import gets before it fails (default 10).
	Lease       time.Duration
	Batch       int
	Poll        time.Duration
	MaxAttempts int
	// Parallel is how many loops Run runs, each claiming its own batches (default 1). On
	// PostgreSQL one loop is one connection among the requests' many and falls behind a
	// sustained intake; claims skip each other's rows, so loops never take one import twice.
	Parallel int
	// Wake makes an idle worker look at once (the endpoint signals new imports on it).
	Wake <-chan struct{}
	Log  *slog.Logger
}

// maxBatchGrowth bounds how far a worker behind grows its batches, in multiples of Batch.
const maxBatchGrowth = 8

// Run processes imports until ctx ends, in Parallel loops.
func (w *Worker) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for range max(w.Parallel, 1) - 1 {
		wg.Go(func() { w.loop(ctx) })
	}
	w.loop(ctx)
	wg.Wait()
	return nil
}

// loop is one of Run's loops: it drains the inbox whenever woken or polled.
func (w *Worker) loop(ctx context.Context) {
	poll := w.Poll
	if poll <= 0 {
		poll = 200 * time.Millisecond
	}
	work.Loop{Every: poll, Idle: work.IdleWait, Wake: w.Wake, Log: w.log(), Name: "order import worker"}.Run(ctx, w.Drain)
}

// Drain processes every import that is due now, then returns.
func (w *Worker) Drain(ctx context.Context) error {
	lease, batch, maxAttempts := w.Lease, w.Batch, w.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = 10
	}
	if lease <= 0 {
		lease = 10 * time.Second
	}
	if batch <= 0 {
		batch = 32
	}
	for size := batch; ; {
		claims, err := w.Queue.ClaimImports(ctx, lease, size)
		if err != nil || len(claims) == 0 {
			return err
		}
		// A full batch means a backlog: each claim and completion is a transaction, so a
		// worker behind takes more at a time until it has caught up.
		if len(claims) == size {
			size = min(2*size, maxBatchGrowth*batch)
		} else {
			size = batch
		}
		// Processing is pure computation; the batch's outcomes then commit together, which
		// costs one write transaction instead of one per import.
		done := make([]Completion, len(claims))
		for i, c := range claims {
			order, errs := Process(c, maxAttempts)
			done[i] = Completion{Claim: c, Order: order, Errors: errs}
		}
		// Claims already made are completed even when ctx ends meanwhile (a graceful shutdown),
		// so they need not wait for their leases to expire after a restart.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lease/2)
		stale, err := w.Queue.CompleteImports(cctx, done)
		if err != nil && len(done) > 1 {
			// One import must not hold the others back: complete them one by one.
			stale, err = w.completeEach(cctx, done)
		}
		cancel()
		if err != nil {
			return err
		}
		if stale > 0 {
			// Their leases expired; the workers that claimed them again complete them.
			w.log().Warn("order import claims went stale", "count", stale)
		}
	}
}

// completeEach completes imports one transaction each, returning the first error after trying
// them all.
func (w *Worker) completeEach(ctx context.Context, done []Completion) (stale int, err error) {
	for _, d := range done {
		n, e := w.Queue.CompleteImports(ctx, []Completion{d})
		stale += n
		if e != nil {
			w.log().Error("order import completion", "import_id", d.Claim.ID, "err", e)
			err = cmp.Or(err, e)
		}
	}
	return stale, err
}

// Process turns a claimed import into its order, or into the errors it fails with.
func Process(c Claim, maxAttempts int) (*Order, []shipping.FieldError) {
	if c.Attempts > maxAttempts {
		return nil, []shipping.FieldError{{Field: "(import)", Code: "too_many_attempts",
			Message: "processing was interrupted too many times"}}
	}
	o, err := ParseOrder(c.Body)
	var v *shipping.ValidationError
	if errors.As(err, &v) {
		return nil, v.Fields
	}
	if err != nil {
		return nil, []shipping.FieldError{{Field: "(body)", Code: "invalid", Message: err.Error()}}
	}
	o.AccountID, o.ImportID = c.AccountID, c.ID
	return &o, nil
}

func (w *Worker) log() *slog.Logger {
	if w.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Log
}
