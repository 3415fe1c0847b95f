package ingest

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/waybill/waybill/shipping"
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
	// CompleteImport ends a claimed import, in one transaction with the order's upsert: with
	// an order it is PROCESSED, otherwise FAILED with errs. A claim no longer held is
	// ErrStaleClaim and changes nothing.
	CompleteImport(ctx context.Context, c Claim, order *Order, errs []shipping.FieldError) error
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

// Worker processes the inbox: it claims imports with a lease, so an import whose worker died
// is claimed again once the lease expires, and completes each with its order in one
// transaction, so an order is never applied twice nor lost.
type Worker struct {
	Queue Queue
	// Lease is how long a claim is held (default 10 s); Batch how many imports are claimed at a
	// time (default 32); Poll how often an idle worker looks for work (default 200 ms);
	// MaxAttempts how many claims an import gets before it fails (default 10).
	Lease       time.Duration
	Batch       int
	Poll        time.Duration
	MaxAttempts int
	// Wake makes an idle worker look at once (the endpoint signals new imports on it).
	Wake <-chan struct{}
	Log  *slog.Logger
}

// Run processes imports until ctx ends.
func (w *Worker) Run(ctx context.Context) error {
	poll := w.Poll
	if poll <= 0 {
		poll = 200 * time.Millisecond
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if err := w.Drain(ctx); err != nil && ctx.Err() == nil {
			w.log().Error("order import worker", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-w.Wake:
		case <-t.C:
		}
	}
}

// Drain processes every import that is due now, then returns.
func (w *Worker) Drain(ctx context.Context) error {
	lease, batch := w.Lease, w.Batch
	if lease <= 0 {
		lease = 10 * time.Second
	}
	if batch <= 0 {
		batch = 32
	}
	for {
		claims, err := w.Queue.ClaimImports(ctx, lease, batch)
		if err != nil || len(claims) == 0 {
			return err
		}
		for _, c := range claims {
			if err := w.process(ctx, c); err != nil {
				return err
			}
		}
	}
}

func (w *Worker) process(ctx context.Context, c Claim) error {
	maxAttempts := w.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = 10
	}
	order, errs := Process(c, maxAttempts)
	err := w.Queue.CompleteImport(ctx, c, order, errs)
	if errors.Is(err, ErrStaleClaim) {
		// Another worker holds the import now and completes it.
		w.log().Warn("order import claim went stale", "import_id", c.ID)
		return nil
	}
	return err
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
