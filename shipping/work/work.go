// Package work holds what waybill's background workers share: one loop (Loop) and one rule
// for sharing their slots fairly between accounts (Slots, RoundRobin).
//
// It lives under shipping, the domain package every other one (billing, ingest, webhook)
// already imports, so importing it adds no edge between domain packages; it imports only the
// standard library, so any of them, and httpapi, can use it without a cycle.
package work

import (
	"context"
	"log/slog"
	"time"
)

// Loop drives a worker's rounds: one at once, then one whenever Wake signals or Every has
// passed, until ctx ends.
type Loop struct {
	// Every is the time between rounds when nothing wakes the loop.
	Every time.Duration
	// Wake, when not nil, starts a round at once (new work was queued, a slot came free).
	Wake <-chan struct{}
	// Log receives a round's error under Name, unless ctx has ended meanwhile: a round cut
	// short by shutdown has not failed. Nil: errors are dropped.
	Log  *slog.Logger
	Name string
}

// Run runs rounds until ctx ends. A round that fails is logged and the loop goes on: the next
// round tries again.
func (l Loop) Run(ctx context.Context, round func(context.Context) error) {
	t := time.NewTicker(l.Every)
	defer t.Stop()
	for {
		if err := round(ctx); err != nil && ctx.Err() == nil && l.Log != nil {
			l.Log.Error(l.Name, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-l.Wake:
		case <-t.C:
		}
	}
}
