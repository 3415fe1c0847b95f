package shipping

import (
	"context"
	"log/slog"
	"time"

	"github.com/waybill/waybill/shipping/work"
)

// QueuedVoid is a sold label waiting to be voided at its carrier, and how often that failed.
type QueuedVoid struct {
	ID string
	SoldLabel
	Attempts int
}

// VoidQueue is what VoidWorker needs persisted.
type VoidQueue interface {
	// ClaimVoids claims up to n queued voids due at now, each until lease runs out, so that
	// another process does not void it at the same time.
	ClaimVoids(ctx context.Context, now time.Time, lease time.Duration, n int) ([]QueuedVoid, error)
	// VoidDone forgets a void the carrier agreed to.
	VoidDone(ctx context.Context, id string) error
	// VoidFailed counts a failed attempt and sets when the void is due again.
	VoidFailed(ctx context.Context, id string, next time.Time) error
}

// VoidWorker voids the labels carriers sold that waybill could not record (Buyer), retrying each
// until its carrier agrees: first after a minute, then twice as long each time, at most an hour.
type VoidWorker struct {
	Queue VoidQueue
	Buyer *Buyer // calls the carriers
	Now   func() time.Time
	Every time.Duration // how often the queue is looked at; 0 is a minute
	Log   *slog.Logger
}

func (w *VoidWorker) log() *slog.Logger {
	if w.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Log
}

// Run voids due labels every Every until ctx ends.
func (w *VoidWorker) Run(ctx context.Context) {
	every := w.Every
	if every <= 0 {
		every = time.Minute
	}
	work.Loop{Every: every, Log: w.log(), Name: "void worker"}.Run(ctx, w.Drain)
}

// Drain queues the sold labels the queue could not take before (Buyer.QueueUnqueued), then
// makes one attempt at each due void.
func (w *VoidWorker) Drain(ctx context.Context) error {
	if err := w.Buyer.QueueUnqueued(ctx); err != nil {
		w.log().Warn("void worker: the void queue still cannot be written", "err", err)
	}
	for {
		now := w.Now()
		due, err := w.Queue.ClaimVoids(ctx, now, w.Buyer.VoidLease(), 16)
		if err != nil || len(due) == 0 {
			return err
		}
		for _, v := range due {
			log := w.log().With("carrier", v.Carrier, "label", v.LabelID, "tracking_code", v.TrackingCode)
			if err := w.Buyer.void(ctx, v.Carrier, v.TrackingCode); err != nil {
				log.Warn("void worker: the carrier refused; retrying later", "attempts", v.Attempts+1, "err", err)
				if err := w.Queue.VoidFailed(ctx, v.ID, now.Add(VoidRetryAfter(v.Attempts+1))); err != nil {
					return err
				}
				continue
			}
			log.Info("void worker: an unrecorded label was voided at its carrier")
			if err := w.Queue.VoidDone(ctx, v.ID); err != nil {
				return err
			}
		}
	}
}

// VoidRetryAfter is the pause after the nth failed attempt at a void.
func VoidRetryAfter(attempts int) time.Duration {
	d := time.Minute
	for i := 1; i < attempts && d < time.Hour; i++ {
		d *= 2
	}
	return min(d, time.Hour)
}
