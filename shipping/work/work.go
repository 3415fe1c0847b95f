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

// IdleWait is the longest an idle worker that is woken for new work waits between rounds
// (Loop.Idle): an idle server's rounds cost it CPU, and what arrives without a wake (work of
// another process, a retry come due, a lease run out) waits at most this long.
const IdleWait = 2 * time.Second

// Loop drives a worker's rounds: one at once, then one whenever Wake signals or the wait has
// passed, until ctx ends. The wait is Every after a round Wake started, and doubles after each
// round the wait itself started, up to Idle: a worker that nothing wakes looks less and less
// often, down to once per Idle.
type Loop struct {
	// Every is the time between rounds while the loop is woken.
	Every time.Duration
	// Idle is the longest wait between rounds; one less than Every leaves the wait at Every.
	Idle time.Duration
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
	wait := l.Every
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		if err := round(ctx); err != nil && ctx.Err() == nil && l.Log != nil {
			l.Log.Error(l.Name, "err", err)
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-l.Wake:
			wait = l.next(wait, true)
		case <-t.C:
			wait = l.next(wait, false)
		}
	}
}

// next is the wait after wait, once a round has been started by Wake (woken) or by the wait.
func (l Loop) next(wait time.Duration, woken bool) time.Duration {
	if woken {
		return l.Every
	}
	return max(l.Every, min(2*wait, l.Idle))
}
