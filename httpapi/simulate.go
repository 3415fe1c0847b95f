package httpapi

import (
	"context"
	"errors"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/work"
	"github.com/waybill/waybill/store"
)

// The tracking simulator (Config.SimulateTracking) moves purchased labels along on a compressed
// clock by posting the events shipping.NextSimulatedEvent gives, through the same store call as
// the operator feed (POST /admin/tracking_events), so webhooks, billing and invoices follow as
// they would for a real carrier. It keeps no state: what is due comes from the labels' stored
// status and last event time, so a restart carries on.

func (a *API) setupSimulator() error {
	if a.cfg.SimulateTracking <= 0 {
		return nil
	}
	a.workers = append(a.workers, worker{name: "tracking_simulator", run: a.runSimulator, drain: a.simulateTracking})
	return nil
}

// runSimulator posts due simulated events until ctx ends, looking a few times per step.
func (a *API) runSimulator(ctx context.Context) error {
	every := min(max(a.cfg.SimulateTracking/4, 10*time.Millisecond), time.Second)
	work.Loop{Every: every, Log: a.log, Name: "tracking simulator"}.Run(ctx, a.simulateTracking)
	return nil
}

// simulateTracking posts every simulated event that is due, once: a label far behind (the
// server was down) catches up one step per round.
func (a *API) simulateTracking(ctx context.Context) error {
	step := a.cfg.SimulateTracking
	for range 100 {
		due, err := a.db.DueSimulatedLabels(ctx, a.db.Now().Add(-step), 100)
		if err != nil {
			return err
		}
		moved := 0
		for _, l := range due {
			e, ok := shipping.NextSimulatedEvent(l.ID, l.Status, l.Substatus, l.LastEventAt, step)
			if !ok {
				continue
			}
			if err := shipping.ValidateTrackingEvent(&e); err != nil {
				return err
			}
			_, created, err := shipping.RecordTrackingEvent(ctx, a.db, "", l.TrackingCode, e)
			switch {
			case errors.Is(err, store.ErrNotFound), errors.Is(err, shipping.ErrInvalidState):
				// Voided (or gone) since it was read: nothing to simulate.
			case err != nil:
				return err
			case created:
				moved++
				a.log.Info("tracking simulator", "label", l.ID, "status", e.Status, "occurred_at", e.OccurredAt.Time)
			}
		}
		if moved == 0 {
			return nil
		}
	}
	return nil
}
